/**
 * Starts one lading node from a configuration: dependencies, start-up recovery, the HTTP app,
 * listening. Used by `lading serve` and by end-to-end tests, so tests run exactly what users
 * run. Installs no signal handler and prints nothing.
 */
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { type Config, parseListen } from './config.ts';
import { createDeps, type Deps, type DepsOverrides } from './deps.ts';
import { buildApp } from '../http/app.ts';
import { staleBefore } from './drivers.ts';

export const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

const SWEEP_EVERY_MS = 10 * 60_000;

export interface RunningServer {
  app: FastifyInstance;
  deps: Deps;
  /** e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Stops accepting, lets requests in flight finish (cut off after `graceMs`), closes the drivers. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts a node: creates the dependencies, recovers what an earlier process left unfinished,
 * builds the app, listens on `listen` and starts the job worker and the sweeper. Rejects with
 * `ConfigError` for an unusable configuration, after closing whatever it had opened.
 */
export async function startServer(config: Config, overrides: DepsOverrides = {}): Promise<RunningServer> {
  const { host, port } = parseListen(config.listen);
  const deps = await createDeps(config, overrides);
  try {
    // NOTE: with the embedded catalog one process owns the data directory, so everything an
    // earlier process left unfinished is stale; with a shared one, other nodes may be
    // uploading right now, so only leftovers older than `recovery.grace` are.
    const { swept } = await deps.backend.init(staleBefore(config, new Date()));
    if (swept > 0) deps.logger.info({ swept }, 'removed leftovers of interrupted uploads');
    const app = await buildApp({
      backend: deps.backend, sessions: deps.sessions, logger: deps.logger, publicUrl: config.public_url,
      backendUrl: config.backend_url, maxUploadBytes: config.limits.upload_bytes, trustProxy: config.trust_proxy,
      version: VERSION, ca: deps.caEndpoint, oidc: deps.oidc,
      jobs: deps.rules.rules.length > 0 ? deps.jobs : undefined, pids: deps.pids, pidAwaitMs: config.pid.await_timeout * 1000,
      bodyIdleTimeoutMs: config.limits.body_idle_timeout * 1000,
    });
    await app.listen({ host, port });
    const address = app.server.address();
    const shown = typeof address === 'object' && address
      ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : config.listen;
    if (!config.public_url) deps.links.base = `http://${shown}`;
    // NOTE: jobs a dead process held are released here for a single-owner catalog; with a
    // shared one their leases run out and any node takes them over.
    await deps.catalog.releaseJobs(staleBefore(config, new Date()));
    deps.jobs.start();
    // Replaced contents a resource could not delete at once (see `deleteSparesOpenReads`),
    // and leftovers of uploads on nodes that died, go once `recovery.grace` has passed.
    const sweeper = setInterval(() => {
      deps.backend.sweep(new Date(Date.now() - config.recovery.grace * 1000))
        .catch((err: unknown) => deps.logger.warn({ err }, 'sweeping replaced blobs failed'));
    }, SWEEP_EVERY_MS);
    sweeper.unref();
    return {
      app, deps, url: `http://${shown}`,
      async close(graceMs = 30_000) {
        clearInterval(sweeper);
        const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
        force.unref();
        await app.close();
        clearTimeout(force);
        await deps.close();
      },
    };
  } catch (err) {
    await deps.close();
    throw err;
  }
}

/** What `lading serve` prints once it listens: version, URL, data directory and zone. */
export function serverBanner(server: RunningServer): string {
  return `lading ${VERSION} listening on ${server.url}\n  data directory: ${server.deps.dataDir}\n  zone: /${server.deps.config.zone}\n`;
}
