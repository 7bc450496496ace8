/**
 * Starts one lading node from a configuration: the data directory (created, and with the
 * SQLite catalog locked to this process), dependencies, start-up recovery, the HTTP app,
 * listening, and graceful shutdown. Used by `lading serve` and by end-to-end tests, so tests
 * run exactly what users run. Installs no signal handler and prints nothing; it logs.
 */
import { AuditReader, pruneAudit } from '../core/audit.ts';
import { pruneJobs } from '../core/jobs.ts';
import type { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import { createS3Handler } from '../s3/s3-front.ts';
import { s3RoutePattern } from '../s3/route-pattern.ts';
import { MultipartUploads } from '../core/multipart.ts';
import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError, parseListen, s3Buckets } from './config.ts';
import { OperatorError } from './operator-error.ts';
import { type DataDirLock, lockDataDir, openDataDir } from './data-dir.ts';
import { createDeps, type Deps, type DepsOverrides } from './deps.ts';
import { buildApp } from '../http/app.ts';
import { WebAssets } from '../web/bundle.ts';
import { logSafeUrl } from '../http/log-safe-url.ts';
import { recoveryCutoff, staleBefore } from './drivers.ts';
import { startReclaimer } from './reclaimer.ts';
import { mallocTrim } from './malloc-trim.ts';
import { Readiness } from '../core/readiness.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { HttpMeter } from '../metrics/http-metrics.ts';
import type { AddressInfo } from 'node:net';

import { VERSION } from './version.ts';

export { VERSION };

const SWEEP_EVERY_MS = 10 * 60_000;

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  /** e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The S3 listener's base URL (`http://127.0.0.1:9000`), null when `s3.listen` is unset. */
  s3Url: string | null;
  /** The metrics listener's base URL (`/metrics`, `/ready`), e.g. `http://127.0.0.1:9464`; null when `metrics.listen` is unset. */
  metricsUrl: string | null;
  /** The metrics, to count fronts on listeners of their own (`metrics.http.track`); null when `metrics.listen` is unset. */
  metrics: Metrics | null;
  /**
   * Stops accepting, lets requests in flight finish for `graceMs` (default `shutdown.grace`),
   * then cuts off the rest, closes the drivers and releases the data directory. Logs the
   * requests still running when it starts and those it cuts off. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
  /**
   * Cuts off every request in flight now, logging each, with `reason` (a close in progress then
   * finishes without waiting for them). A cut-off upload is not committed: its temporary is
   * removed, or swept at the next start.
   */
  cutOff(reason: string): void;
}

/**
 * Starts a node: creates the data directory when missing and, with the SQLite catalog, locks
 * it — before any recovery, so a second server on the same directory can never sweep the
 * uploads of the first — then creates the dependencies, recovers what an earlier process left
 * unfinished, builds the app, listens on `listen` and starts the job worker and the sweeper.
 * Rejects after closing whatever it had opened: with `ConfigError` for an unusable
 * configuration, and with `OperatorError` when another server holds the data directory or the
 * address is in use.
 */
export async function startServer(config: Config, overrides: DepsOverrides = {}): Promise<RunningServer> {
  const { host, port } = parseListen(config.listen);
  const dataDir = await openDataDir(config.data, { create: true });
  // NOTE: with PostgreSQL, nodes may share one data directory (its CA and keys) on purpose;
  // what they share is then guarded by the catalog, not by a lock on the directory.
  const lock = config.catalog.driver === 'sqlite' ? await lockDataDir(dataDir) : null;
  const metricsAt = config.metrics.listen === null ? null : parseListen(config.metrics.listen, 'metrics.listen');
  // NOTE: loaded only when configured: prom-client is not needed otherwise.
  const metrics = metricsAt ? new (await import('../metrics/metrics.ts')).Metrics({ version: VERSION }) : null;
  let deps: Deps;
  try {
    deps = await createDeps(config, { ...overrides, metrics });
  } catch (err) {
    lock?.release();
    throw err;
  }
  try {
    // NOTE: with the embedded catalog this process owns the data directory (it holds the
    // lock), so everything an earlier process left unfinished is stale; with a shared one,
    // other nodes may be uploading right now, so only what dead nodes left is (see
    // `recoveryCutoff`). The first heartbeat goes before, so no node takes this one for dead;
    // the periodic sweeper judges this node's own uploads by the same heartbeat.
    await deps.catalog.heartbeat(deps.node, new Date());
    const { swept } = await deps.backend.init(recoveryCutoff(config, new Date(), true));
    if (swept > 0) deps.logger.info({ swept }, 'removed leftovers of interrupted uploads');
    // NOTE: holding the lock, this process is the only one that may append to an upload, so
    // every lease in the catalog is a dead predecessor's: left in place, each would refuse its
    // upload's client until it ran out. With a shared catalog other nodes hold live ones.
    if (lock) {
      const released = await deps.catalog.releaseUploadLeases();
      if (released > 0) deps.logger.info({ released }, 'released the upload leases an earlier process held');
    }
    const readiness = new Readiness({ catalog: deps.catalog, resource: deps.resource });
    const app = await buildApp({
      readiness, instrument: metrics ? (a) => metrics.http.instrumentApp(a) : null,
      backend: deps.backend, accessControl: deps.accessControl, metadata: deps.metadata, publishing: deps.publishing, sessions: deps.sessions, logger: deps.logger, publicBase: deps.publicBase,
      backendUrl: config.backend_url, maxUploadBytes: config.limits.upload_bytes, trustProxy: config.trust_proxy,
      version: VERSION, ca: deps.caEndpoint, oidc: deps.oidc, shares: deps.shares, uploads: deps.uploads, trash: deps.trash, search: deps.search, locks: deps.locks, s3Keys: deps.s3Keys, quotas: deps.quotas, audit: new AuditReader(deps.catalog),
      jobs: deps.rules.rules.length > 0 ? deps.jobs : undefined, pids: deps.pids, pidAwaitMs: config.pid.await_timeout * 1000,
      bodyIdleTimeoutMs: config.limits.body_idle_timeout * 1000,
      archives: { maxEntries: config.archives.max_entries, concurrentPerUser: config.archives.concurrent_per_user },
      checkResponses: overrides.checkResponses === true,
      compress: config.compress,
      web: new WebAssets(),
      s3Endpoint: config.s3.listen === null ? null : (base) => s3EndpointFor(config, base, s3Port),
    });
    const inFlight = trackRequests(app);
    // NOTE: Fastify logs each address it can be reached at (every interface's, for 0.0.0.0);
    // `announceServer` says the rest.
    await app.listen({ host, port, listenTextResolver: (address) => `reachable at ${address}` }).catch(async (err: unknown) => {
      await app.close();
      throw listenError(err, config.listen, host);
    });
    let s3Port: number | null = null;
    const s3 = config.s3.listen === null ? null : await listenS3(config, deps, metrics?.http ?? null).catch(async (err: unknown) => {
      await app.close();
      throw err;
    });
    if (s3) s3Port = Number(new URL(s3.url).port);
    const metricsListener = metricsAt && metrics
      ? await (await import('../metrics/listener.ts')).listenMetrics(metrics, readiness, metricsAt.host, metricsAt.port).catch(async (err: unknown) => {
        await app.close();
        throw listenError(err, config.metrics.listen!, metricsAt.host, 'metrics.listen', 'set another address with LADING_METRICS_LISTEN');
      })
      : null;
    const address = app.server.address();
    const shown = typeof address === 'object' && address
      ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : config.listen;
    if (typeof address === 'object' && address) deps.publicBase.listening(address);
    if (config.public_url === null) {
      deps.logger.warn({ listen: shown }, `public_url is not set: links in answers follow each request's Host header, and links made outside a request (PID records, the login issuer) name ${deps.publicBase.outside()}. Set public_url.`);
    }
    // NOTE: jobs a dead process held are released here for a single-owner catalog; with a
    // shared one their leases run out and any node takes them over.
    await deps.catalog.releaseJobs(staleBefore(config, new Date()));
    deps.jobs.start();
    // NOTE: every node audits; the catalog gives each object to one of them at a time.
    if (config.fixity.rate > 0) deps.fixity.start();
    // Replaced contents a resource could not delete at once (see `deleteSparesOpenReads`),
    // and leftovers of uploads on nodes that died, go once `recovery.grace` has passed.
    // Resumable uploads past their expiry go too, with their bytes, whichever node notices, and
    // share links expired for longer than `shares.expired_retention`, and the bytes of what
    // has been in the trash longer than `trash.retention`, audit records older than
    // `audit.retention`, and jobs done longer ago than `jobs.retention`.
    const sweeper = setInterval(() => {
      deps.backend.sweep(recoveryCutoff(config, new Date(), false))
        .catch((err: unknown) => deps.logger.warn({ err }, 'sweeping replaced blobs failed'));
      deps.uploads.sweepExpired(new Date())
        .then((removed) => { if (removed > 0) deps.logger.info({ removed }, 'removed expired resumable uploads'); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'sweeping expired resumable uploads failed'));
      deps.shares.purgeExpired(new Date())
        .then((removed) => { if (removed > 0) deps.logger.info({ removed }, 'removed share links past shares.expired_retention'); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'removing expired share links failed'));
      // NOTE: every node runs it; the catalog gives each entry to one of them.
      deps.trash.purgeExpired()
        .then((purged) => { if (purged > 0) deps.logger.info({ purged }, 'purged trash entries past trash.retention'); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'purging the trash failed'));
      pruneAudit(deps.catalog, new Date(), config.audit.retention)
        .then((removed) => { if (removed > 0) deps.logger.info({ removed }, 'removed audit records past audit.retention'); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'removing old audit records failed'));
      pruneJobs(deps.catalog, new Date(), config.jobs.retention)
        .then((removed) => { if (removed > 0) deps.logger.info({ removed }, 'removed done jobs past jobs.retention'); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'removing done jobs failed'));
    }, SWEEP_EVERY_MS);
    sweeper.unref();
    // NOTE: a CA another node or `lading ca rotate` added signs here once this has read it;
    // certificates it signed verify at once (the authority reads the catalog on a refusal).
    const caRefresh = setInterval(() => {
      deps.x509.refreshCa({ force: true })
        .then((generation) => { if (generation !== null) deps.logger.info({ generation }, `the CA of generation ${generation} signs user certificates from now on`); })
        .catch((err: unknown) => deps.logger.warn({ err }, 'reading the CAs from the catalog failed'));
    }, config.ca.refresh * 1000);
    caRefresh.unref();
    const stopReclaimer = startReclaimer(app.server, { trim: mallocTrim() });
    const heartbeat = setInterval(() => {
      deps.catalog.heartbeat(deps.node, new Date())
        .catch((err: unknown) => deps.logger.warn({ err }, 'heartbeat failed: other nodes may take this one for dead'));
    }, config.recovery.heartbeat * 1000);
    heartbeat.unref();
    let closing: Promise<void> | null = null;
    const cutOff = (reason: string): void => {
      const requests = inFlight.describe();
      if (requests.length > 0) deps.logger.warn({ requests }, `${reason}: cutting off ${plural(requests.length, 'request')} in flight`);
      app.server.closeAllConnections();
      s3?.server.closeAllConnections();
    };
    const metricsUrl = metricsListener ? `http://${hostPort(metricsListener.address)}` : null;
    if (metricsUrl) deps.logger.info({ metrics: metricsUrl }, `metrics at ${metricsUrl}/metrics, readiness at ${metricsUrl}/ready`);
    return {
      app, deps, url: `http://${shown}`, s3Url: s3?.url ?? null, cutOff, metricsUrl, metrics,
      close(graceMs = config.shutdown.grace * 1000) {
        closing ??= (async () => {
          clearInterval(sweeper);
          clearInterval(caRefresh);
          stopReclaimer();
          const requests = inFlight.describe();
          if (requests.length > 0) deps.logger.info({ requests }, `waiting up to ${graceMs / 1000} s for ${plural(requests.length, 'request')} in flight`);
          const deadline = setTimeout(() => cutOff(`shutdown.grace (${graceMs / 1000} s) has passed`), graceMs);
          deadline.unref();
          await Promise.all([app.close(), s3?.close(), metricsListener?.close()]);
          clearTimeout(deadline);
          clearInterval(heartbeat);
          await deps.catalog.forgetNode(deps.node).catch(() => {});
          await deps.close();
          lock?.release();
        })();
        return closing;
      },
    };
  } catch (err) {
    await deps.close();
    lock?.release();
    throw err;
  }
}

/**
 * The S3 endpoint S3 clients are told: `s3.public_url`, else plain HTTP to the host name of
 * `base` (the request's link base) on the S3 listener's port; null before it listens.
 */
export function s3EndpointFor(config: Config, base: string, port: number | null): string | null {
  if (config.s3.public_url !== null) return config.s3.public_url.replace(/\/+$/, '');
  if (port === null) return null;
  const url = new URL(base);
  return `http://${url.hostname}:${port}`;
}

/**
 * Starts the S3 listener on `s3.listen`: the S3 front over the same core as the API. Its
 * sockets are dropped after `limits.body_idle_timeout` without traffic. `OperatorError` when
 * the address is in use.
 */
async function listenS3(config: Config, deps: Deps, meter: HttpMeter | null): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const { host, port } = parseListen(config.s3.listen!);
  const handler = createS3Handler({
    backend: deps.backend, trash: deps.trash, metadata: deps.metadata, keys: deps.s3Keys, clock: deps.clock, region: config.s3.region, domain: config.s3.domain, buckets: s3Buckets(config),
    multipart: new MultipartUploads({
      backend: deps.backend, catalog: deps.catalog, resource: deps.resource, clock: deps.clock, maxUploadBytes: config.limits.upload_bytes,
      expirySeconds: config.uploads.expiry, maxOpen: config.uploads.max_open,
    }),
    log: deps.logger,
  });
  // NOTE: through require, as Fastify takes it: an ESM import of node:http evaluates every
  // export, which loads Node's fetch (undici) into a server that never uses it.
  const { createServer } = createRequire(import.meta.url)('node:http') as typeof import('node:http');
  // NOTE: the metrics count each exchange under front="s3", by the pattern of its URL.
  const server = createServer({ requestTimeout: 0 }, meter ? (req, res) => {
    meter.track('s3', req, res, () => s3RoutePattern(req.url ?? '/'));
    handler(req, res);
  } : handler);
  server.timeout = config.limits.body_idle_timeout * 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenError(err, config.s3.listen!, host, 's3.listen', 'set another address with LADING_S3_LISTEN')));
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const shown = typeof address === 'object' && address ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : config.s3.listen!;
  deps.logger.info({ s3: shown }, `S3 listener reachable at http://${shown}`);
  return {
    server, url: `http://${shown}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }),
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Follows the requests the server is answering, at the HTTP level (so uploads whose body is
 * still arriving count), to say at shutdown what runs: method, URL (without secrets in the
 * query), bytes received so far and age.
 */
function trackRequests(app: FastifyInstance): { describe(): string[] } {
  const running = new Map<IncomingMessage, { since: number; bytesBefore: number }>();
  app.server.on('request', (req: IncomingMessage, res) => {
    running.set(req, { since: Date.now(), bytesBefore: req.socket.bytesRead });
    res.once('close', () => running.delete(req));
  });
  return {
    describe: () => [...running].map(([req, { since, bytesBefore }]) => {
      const mb = (req.socket.bytesRead - bytesBefore) / 1e6;
      return `${req.method} ${logSafeUrl(req.url ?? '')} (${mb.toFixed(1)} MB received in ${((Date.now() - since) / 1000).toFixed(1)} s)`;
    }),
  };
}

/** The listening failure an operator can act on, in one sentence naming `key`; other errors unchanged. */
function listenError(err: unknown, listen: string, host: string, key = 'listen', where = 'set another address with --listen or LADING_LISTEN'): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EADDRINUSE': return new OperatorError(`${key}: ${listen} is already in use by another process; stop it, or ${where}.`, { cause: err });
    case 'EACCES': return new OperatorError(`${key}: no permission to listen on ${listen} (ports below 1024 need privileges); ${where}.`, { cause: err });
    case 'EADDRNOTAVAIL': return new ConfigError(`${key}: ${host} is not an address of this machine; ${where}.`, { cause: err });
    case 'ENOTFOUND': case 'EAI_AGAIN': return new ConfigError(`${key}: cannot resolve the host name '${host}' (${code}).`, { cause: err });
    default: return err;
  }
}

function hostPort(address: AddressInfo): string {
  return `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

/**
 * Logs where the server listens, with its version, data directory and zone: the answer of
 * `lading serve`, so it is logged whatever `log.level` says, in the log's format (a JSON log
 * stays one object a line).
 */
export function announceServer(server: RunningServer): void {
  const { logger, dataDir, config } = server.deps;
  // NOTE: the URL is followed by a space in the message, so it can be cut out of either format.
  logger.child({}, { level: 'info' }).info(`lading ${VERSION} listening on ${server.url} (data directory ${dataDir}, zone /${config.zone})`);
}
