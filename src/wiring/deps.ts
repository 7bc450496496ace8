/**
 * Creates the process's dependencies from a configuration: the catalog and resource drivers,
 * the backend, the admin service, sessions, login and the logger, each given plain options
 * computed here from the configuration's keys. Shared by `lading serve` and the admin commands
 * so both see the same data directory the same way. Creates no data directory: its callers
 * decide whether one may be created (`data-dir.ts`).
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { type Config, ConfigError } from './config.ts';
import { Auditor } from '../core/audit.ts';
import { Backend } from '../core/backend.ts';
import { AdminService } from '../core/admin.ts';
import { hashPassword, verifyPassword } from '../identity/secrets/password.ts';
import { ShareService } from '../core/shares.ts';
import { ResumableUploads } from '../core/uploads.ts';
import { secretSetting } from './secret-file.ts';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Authority, type Catalog, type Clock, type PidProvider, type Resource, systemClock } from '../core/ports.ts';
import { JobWorker } from '../core/jobs.ts';
import { pidJobHandler } from '../core/pid-jobs.ts';
import { RULE_JOB, type RuleSet } from '../core/rules.ts';
import { loadRules, openPidProvider } from './pids.ts';
import { PublicBase } from '../core/public-base.ts';
import { linkOf, pidLinkOf, publicLinkOf } from '../http/envelope.ts';
import { Search } from '../core/search.ts';
import { Trash } from '../core/trash.ts';
import { Locks } from '../core/locks.ts';
import { FixityAudit } from '../core/fixity.ts';
import { AccessControl } from '../core/access-control.ts';
import { Metadata } from '../core/metadata.ts';
import { S3Keys } from '../core/s3-keys.ts';
import { QuotaService } from '../core/quotas.ts';
import { Publishing } from '../core/publishing.ts';
import { openCatalog, openResource } from './drivers.ts';
import { holdDeletionsDuringBackup, probeBackupHold } from './backup-hold.ts';
import { inlineSmallObjects } from '../drivers/resource/inline.ts';
import type { CredentialManager } from '../core/ports.ts';
import { type CredentialStack, createCredentialStack } from './credentials.ts';
import type { CaEndpoint } from '../http/routes-ca.ts';
import { SessionService } from '../identity/sessions/sessions.ts';
import { LoginService } from '../identity/sessions/login.ts';
import { OidcLogin, oidcSecret } from '../identity/oidc/oidc-login.ts';
import { revokeAccount } from '../identity/oidc/provider-adapter.ts';
import { errorPage } from '../http/errors.ts';
import { createLogger } from './logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Observer } from '../core/observer.ts';

export interface Deps {
  config: Config;
  /** This process's name among the nodes sharing a catalog (owner of its blobs, holder of its jobs). */
  node: string;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  catalog: Catalog;
  resource: Resource;
  backend: Backend;
  /** Resumable uploads (tus). */
  uploads: ResumableUploads;
  /** The operator's use cases (the admin commands). */
  admin: AdminService;
  /** Access lists as owners read and change them over the API. */
  accessControl: AccessControl;
  /** AVU metadata as users read and change it over the API. */
  metadata: Metadata;
  /** Publishing, and reads of published data without a credential. */
  publishing: Publishing;
  sessions: SessionService;
  /** The credential manager sessions use (X.509 proxies unless overridden). */
  credentials: CredentialManager;
  /** lading's CA and where the backend's trust anchors come from. */
  x509: CredentialStack;
  /** The online CA endpoint to mount, when lading runs its own CA. */
  caEndpoint: CaEndpoint | null;
  /** OpenID Connect login: relying party, and the embedded provider when no issuer is configured. */
  oidc: OidcLogin;
  /** Backend rules (none unless `pid.rules` names a file). */
  rules: RuleSet;
  /** Where PIDs are registered and resolved. */
  pids: PidProvider;
  /** Runs the durable jobs rules enqueue; started by `startServer`. */
  jobs: JobWorker;
  /** The one source of the public base URL; `startServer` tells it where the server listens. */
  publicBase: PublicBase;
  /** Share links and drop boxes, with their abuse limits (`shares.*`). */
  shares: ShareService;
  /** The trash, its retention (`trash.retention`) and takedowns. */
  trash: Trash;
  /** WebDAV locks, kept in the catalog so every node honours them. */
  locks: Locks;
  /** Users' S3 access keys (secrets sealed under the master key). */
  s3Keys: S3Keys;
  /** The background fixity audit (`fixity.*`); started by `startServer` unless `fixity.rate` is 0. */
  fixity: FixityAudit;
  /** What the core reports to (the metrics), when anything listens. */
  observer: Observer | undefined;
  /** Quotas: set by the admin commands, shown by the API (`/api/quota`) and WebDAV. */
  quotas: QuotaService;
  /** Search and recent uploads. */
  search: Search;
  /** The audit trail every service records its events in. */
  trail: Auditor;
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  logger?: Logger;
  credentials?: CredentialManager;
  authority?: Authority;
  /** A PID provider to use instead of the configured one (tests). */
  pids?: PidProvider;
  /** Turn a JSON answer its response schema would change into a 500 (tests: see `http/response-check.ts`). */
  checkResponses?: boolean;
  /**
   * The metrics to count into (`lading serve` with `metrics.listen`): the catalog's operations
   * are timed, the resource's failures counted, and the services report to its observer.
   * Without it nothing is wrapped or counted.
   */
  metrics?: Metrics | null;
}

/**
 * Opens everything `config` names, on the data directory `config.data`, which must exist
 * (`openDataDir`). Rejects with `ConfigError` for an unusable setting, after closing what it
 * had opened.
 */
export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const dataDir = resolve(config.data);
  const logger = overrides.logger ?? await createLogger(config.log);
  const clock = overrides.clock ?? systemClock;
  const metrics = overrides.metrics ?? null;
  const openedCatalog = await openCatalog(config, dataDir);
  const catalog = metrics ? metrics.timeCatalog(openedCatalog) : openedCatalog;
  const x509 = await createCredentialStack({ config, dataDir, catalog, clock, log: (message) => logger.info(message) }).catch(async (err: unknown) => {
    await catalog.close();
    throw err;
  });
  const credentials = overrides.credentials ?? x509.credentials;
  const opened = await openResource(config, dataDir).catch(async (err: unknown) => {
    await catalog.close();
    throw err;
  });
  // NOTE: `lading backup` covers the embedded deployment (SQLite and files): there, no bytes
  // are deleted while it holds the data directory (see `backup-hold.ts`).
  const stored = config.catalog.driver === 'sqlite' && config.resource.driver === 'fs'
    ? holdDeletionsDuringBackup(opened, probeBackupHold(dataDir))
    : opened;
  const kept = catalog.inline && config.resource.inline_max > 0
    ? inlineSmallObjects(stored, catalog.inline, config.resource.inline_max)
    : stored;
  const resource = metrics ? metrics.countResourceErrors(kept) : kept;
  metrics?.watch({ catalog: openedCatalog, resource: kept, clock });
  const observer = metrics?.observer;
  const rules = await loadRules(config);
  const pids = overrides.pids ?? await openPidProvider(config, catalog, clock);
  const publicBase = new PublicBase(config.public_url);
  // NOTE: a new name per process, so a restarted node never adopts its predecessor's writes.
  const node = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const jobs = new JobWorker({
    catalog, clock, workerId: node,
    leaseMs: config.jobs.lease * 1000,
    handlers: {
      [RULE_JOB]: pidJobHandler({
        catalog, clock, provider: pids,
        linkOf: (path) => linkOf({ base: publicBase.outside(), backend: '' }, path),
        publicLinkOf: (path) => publicLinkOf({ base: publicBase.outside() }, path),
        tombstoneLinkOf: (pid) => pidLinkOf(publicBase.outside(), pid),
      }),
    },
    log: logger,
    observer,
  });
  const trail = new Auditor({
    store: catalog, clock,
    onError: (err, input) => logger.error({ err, audit: input.action, user: input.actor, path: input.path }, 'audit: the record of an event could not be stored'),
  });
  const backend = new Backend({
    node, trail,
    rules, onJobs: () => jobs.wake(),
    catalog, resource, clock, zone: config.zone, maxUploadBytes: config.limits.upload_bytes,
    copyLimits: { bytes: config.limits.copy_bytes, entries: config.limits.copy_entries },
    authority: overrides.authority ?? x509.authority,
  });
  const uploads = new ResumableUploads({
    backend, catalog, resource, clock, maxUploadBytes: config.limits.upload_bytes, maxOpen: config.uploads.max_open,
    expirySeconds: config.uploads.expiry, checkpointBytes: config.uploads.checkpoint_bytes, leaseSeconds: config.uploads.lease,
    observer,
  });
  const admin = new AdminService({
    backend, catalog, credentials, clock, hashPassword, trail, revokeProviderGrants: (user) => revokeAccount(catalog, clock, user),
  });
  const accessControl = new AccessControl({ backend, catalog, trail });
  const metadata = new Metadata({ backend, catalog, trail });
  const publishing = new Publishing({
    backend, catalog, clock, audit: logger, trail,
    jobs: rules.rules.length > 0 ? rules.jobsFor : undefined, onJobs: () => jobs.wake(),
  });
  const login = new LoginService({ catalog, clock, logger, trail, maxFailedLogins: config.oidc.max_failed_logins, observer });
  const oidc = await createOidc(config, { catalog, backend, clock, logger, login, publicBase }, x509);
  const sessions = new SessionService({
    catalog, clock, credentials, login, trail, tokenTtlSeconds: config.auth.token_ttl, tokenTtlMaxSeconds: config.auth.token_ttl_max,
    browser: { idleSeconds: config.web.session_idle, maxSeconds: config.web.session_max },
    reauthorize: oidc.reauthorize, externalBearer: oidc.externalBearer,
  });
  const shares = new ShareService({
    backend, catalog, clock, log: logger, observer, trail,
    passwords: { hash: hashPassword, verify: verifyPassword },
    limits: {
      maxActivePerUser: config.shares.max_active_per_user,
      requestWindowSeconds: config.shares.request_window,
      requestsPerLink: config.shares.requests_per_link,
      requestsPerAddress: config.shares.requests_per_address,
      maxFailedPasswords: config.shares.max_failed_passwords,
      passwordWindowSeconds: config.shares.password_window,
      expiredRetentionSeconds: config.shares.expired_retention,
      dropMaxBytes: config.shares.drop_max_bytes,
    },
  });
  const trash = new Trash({
    backend, catalog, resource, clock, audit: logger, trail, retentionSeconds: config.trash.retention,
    jobs: rules.rules.length > 0 ? rules.jobsFor : undefined, onJobs: () => jobs.wake(),
  });
  const locks = new Locks({ catalog, backend, clock });
  const fixity = new FixityAudit({
    catalog, resource, clock, holder: node, bytesPerSecond: config.fixity.rate, intervalMs: config.fixity.interval * 1000,
    log: logger, ...(observer ? { observer } : {}),
  });
  return {
    config, dataDir, logger, clock, catalog, resource, backend, uploads, admin, accessControl, metadata, publishing,
    sessions, credentials, x509, caEndpoint: x509.caEndpoint, oidc,
    rules, pids, jobs, publicBase, node, shares, trash, locks, s3Keys: new S3Keys({ catalog, backend, sealer: x509.sealer, clock, trail }), trail,
    fixity, observer,
    quotas: new QuotaService({ catalog, backend }),
    search: new Search({ backend, catalog }),
    async close() {
      await fixity.stop();
      await jobs.stop();
      await backend.settled();
      await resource.close();
      await catalog.close();
    },
  };
}

/**
 * OpenID Connect login from `oidc.*`. Rejects with `ConfigError` when an external issuer is set
 * without a client secret or `oidc.client_secret_file` cannot be read.
 */
async function createOidc(config: Config, d: { catalog: Catalog; backend: Backend; clock: Clock; logger: Logger; login: LoginService; publicBase: PublicBase }, keys: Pick<CredentialStack, 'masterKey' | 'sealer'>): Promise<OidcLogin> {
  const o = config.oidc;
  const clientSecret = await secretSetting({ fileKey: 'oidc.client_secret_file', file: o.client_secret_file, value: o.client_secret });
  if (o.issuer && !clientSecret) {
    throw new ConfigError('oidc.issuer is set but no client secret is: set oidc.client_secret_file, or LADING_OIDC_CLIENT_SECRET.');
  }
  return new OidcLogin({
    ...d,
    settings: {
      issuer: o.issuer, clientId: o.client_id, clientSecret,
      scopes: o.scopes, userClaim: o.user_claim, audience: o.audience, introspection: o.introspection,
      keyRotationSeconds: o.key_rotation, cliClientId: o.cli_client_id, cliScopes: o.cli_scopes,
    },
    sealer: keys.sealer,
    secret: oidcSecret(keys.masterKey),
    tokenTtlSeconds: config.auth.token_ttl,
    trustProxy: config.trust_proxy,
    renderError: errorPage,
  });
}
