/**
 * Opens a data directory for the admin commands: the same dependencies `lading serve` uses,
 * quiet (warnings only), with the zone's top collections in place, exposing only the admin
 * service and the CA export. Recovers nothing and takes no lock: a server may be running on
 * the same data.
 */
import { X509Certificate } from 'node:crypto';
import type { Config } from './config.ts';
import { openDataDir } from './data-dir.ts';
import { createDeps } from './deps.ts';
import type { AdminService } from '../core/admin.ts';
import type { QuotaService } from '../core/quotas.ts';
import { type AuditQuery, type AuditRecord, AuditReader, type ChainCheck, auditRecords, verifyAuditChain } from '../core/audit.ts';
import { LadingError } from '../core/errors.ts';
import type { TrashEntry } from '../core/types.ts';
import { exportGridSecurity } from '../identity/x509/ca.ts';
import { type FsckReport, fsck } from '../core/fixity.ts';
import { parsePath } from '../core/path.ts';
import { rotateCa } from '../identity/x509/ca-ring.ts';

export interface AdminConsole {
  /** The data directory's absolute path. */
  dataDir: string;
  admin: AdminService;
  /** Quotas: set, shown and cleared by `lading quota` (setting and clearing are audited). */
  quotas: Pick<QuotaService, 'set' | 'clear' | 'get' | 'list'>;
  /**
   * Writes lading's CA certificates — the signing one and, during a rotation's overlap, the one
   * it replaced — as `<hash>.0` and `<hash>.signing_policy` into `dir` and resolves with the
   * files written. `NOT_FOUND` when lading runs no CA of its own (`ca.issuer` is a URL).
   */
  exportCa(dir: string): Promise<string[]>;
  /**
   * Makes a new CA the signing one for every node sharing the catalog (the old one stays
   * trusted for `max(ca.user_lifetime, proxy.lifetime)`). Resolves with its generation and
   * subject. `NOT_FOUND` when lading's CA is not kept in the catalog (`ca.cert`, or `ca.issuer`
   * is a URL).
   */
  rotateCa(): Promise<{ generation: number; subject: string }>;
  /**
   * Takes down the entity at `target` (a path, or a trash entry's id) at once: its bytes go,
   * its tombstone records `by` and `reason` (see `Trash.takedown`).
   */
  takedown(target: string, reason: string, by?: string): Promise<TrashEntry>;
  /**
   * Whether this command runs with PID rules (`pid.rules`): without them a takedown enqueues no
   * job, and the PID record of what it took down keeps pointing at the data.
   */
  pidRules: boolean;
  /**
   * Checks every stored object's bytes against its checksum and the resource for bytes no
   * object refers to, older than `recovery.grace` (see `fsck` in `core/fixity.ts`); with
   * `repair`, removes those. With `path`, checks only the objects at or below it (a valid
   * path: `INVALID_PATH` otherwise) and looks for no orphans.
   */
  fsck(options: { repair: boolean; path?: string }): Promise<FsckReport>;
  /** The audit trail's records matching `query`, in order (read a page at a time). */
  auditRecords(query: Omit<AuditQuery, 'limit'>): AsyncGenerator<AuditRecord>;
  /** Walks the whole audit trail and checks its chain (see `verifyAuditChain`). */
  verifyAudit(): Promise<ChainCheck>;
  close(): Promise<void>;
}

/** A quota command's bounds as an audit record's detail (`null`: no bound). */
function limitsDetail(limits: { maxBytes?: number | null; maxObjects?: number | null }): Record<string, number | null> {
  return {
    ...(limits.maxBytes === undefined ? {} : { max_bytes: limits.maxBytes }),
    ...(limits.maxObjects === undefined ? {} : { max_objects: limits.maxObjects }),
  };
}

/** Who reads the trail at the server's shell: the catalog's owner, with every right. */
const OPERATOR_READER = { admin: true };

/**
 * Opens the data directory `config.data`. Rejects with `ConfigError` when it does not exist,
 * unless `create` is set (`lading init`), or cannot be written.
 */
export async function openAdmin(config: Config, options: { create?: boolean } = {}): Promise<AdminConsole> {
  await openDataDir(config.data, { create: options.create === true });
  const deps = await createDeps({ ...config, log: { ...config.log, level: 'warn' } });
  try {
    // NOTE: the epoch as the cut-off: only the top collections are created, no leftover of a
    // running server's uploads is taken for stale.
    await deps.backend.init(new Date(0));
  } catch (err) {
    await deps.close();
    throw err;
  }
  return {
    dataDir: deps.dataDir,
    admin: deps.admin,
    quotas: {
      set: (target, limits) => deps.admin.recorded('quota.set', target.startsWith('/') ? target : null,
        { target, ...limitsDetail(limits) }, () => deps.quotas.set(target, limits)),
      clear: (target) => deps.admin.recorded('quota.clear', target.startsWith('/') ? target : null, { target }, () => deps.quotas.clear(target)),
      get: (target) => deps.quotas.get(target),
      list: () => deps.quotas.list(),
    },
    async exportCa(dir) {
      const ca = deps.x509.ca;
      if (!ca) throw new LadingError('NOT_FOUND', 'lading runs no CA of its own (ca.issuer is a URL); export that CA from its operator.');
      const pems = deps.x509.caRing?.anchorPems() ?? [ca.certPem];
      const files: string[] = [];
      for (const certPem of pems) files.push(...await exportGridSecurity({ certPem }, dir));
      return files;
    },
    rotateCa: () => deps.admin.recorded('ca.rotate', null, {}, async () => {
      if (!deps.x509.caRing) throw new LadingError('NOT_FOUND', 'lading\'s CA is not kept in the catalog here (ca.cert names an operator\'s CA, or ca.issuer is a URL): rotate that CA where it is kept.');
      const rotated = await rotateCa({ catalog: deps.catalog, sealer: deps.x509.sealer, zone: deps.config.zone, clock: deps.clock });
      // NOTE: republishes <data>/ca/ca.pem here too, for a data directory no server runs on.
      await deps.x509.refreshCa({ force: true });
      return { generation: rotated.generation, subject: new X509Certificate(rotated.certPem).subject.replace(/\n/g, ', ') };
    }),
    takedown: (target, reason, by) => deps.trash.takedownByOperator(target, reason, by),
    pidRules: deps.rules.rules.length > 0,
    fsck: ({ repair, path }) => {
      const check = () => fsck({
        catalog: deps.catalog, resource: deps.resource, clock: deps.clock, repair,
        orphanAgeMs: config.recovery.grace * 1000,
        ...(path === undefined ? {} : { path: parsePath(path) }),
        ...(deps.observer ? { observer: deps.observer } : {}),
      });
      // NOTE: only a repair changes anything (it removes orphaned bytes), so only it is recorded.
      return repair ? deps.admin.recorded('fsck.repair', path ?? null, {}, check) : check();
    },
    auditRecords: (query) => new AuditReader(deps.catalog).records(OPERATOR_READER, query),
    verifyAudit: () => verifyAuditChain(auditRecords(deps.catalog)),
    // NOTE: the jobs a takedown enqueues (its PID's tombstone record) are run by a server's
    // job worker, which looks for jobs enqueued elsewhere when idle.
    close: () => deps.close(),
  };
}
