/**
 * The node's Prometheus metrics, in one registry of their own: the HTTP figures of every front
 * (`http-metrics.ts`), what the core and identity report through their observer port, the
 * latency of every catalog operation and the errors of the resource (by wrapping them), the
 * figures read when Prometheus scrapes (job queue, open resumable uploads, the PostgreSQL pool,
 * free space), and the process's own (prom-client's defaults). Made only when `metrics.listen`
 * is set, so nothing of it runs otherwise. Names follow Prometheus's conventions: a `lading_`
 * prefix, base units in the name, labels with few values.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { isLadingError } from '../core/errors.ts';
import type { Observer } from '../core/observer.ts';
import type { Catalog, Clock, Resource, StagedWrites } from '../core/ports.ts';
import { HttpMetrics } from './http-metrics.ts';
import { HistogramFamily, type HistogramSeries } from './series.ts';

/** Catalog latency buckets, in seconds: an SQLite read (~50 µs) up to a slow PostgreSQL transaction. */
const CATALOG_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Catalog members that are no operation of a role (or are the metrics' own reads). */
const NOT_TIMED = new Set(['driver', 'inline', 'close', 'ping', 'poolFigures', 'jobQueue', 'countDamaged']);

/** Error codes of the resource that say the store failed, rather than the request or the client. */
const STORE_FAILURES = new Set(['UNAVAILABLE', 'STORAGE_FULL', 'INTERNAL']);

/** Where the figures read at each scrape come from: the unwrapped catalog and resource, so reading them is not counted as traffic. */
export interface ScrapeSources {
  catalog: Catalog;
  resource: Resource;
  clock: Clock;
}

export class Metrics {
  readonly registry = new Registry();
  readonly http: HttpMetrics;
  /** The observer port of the core and identity services, counting into this registry. */
  readonly observer: Required<Observer>;
  readonly #catalogDuration: HistogramFamily;
  readonly #resourceErrors: Counter<'operation' | 'code'>;

  constructor(options: { version: string }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({ name: 'lading_build_info', help: 'Always 1; the version of lading is its label.', labelNames: ['version'], registers }).set({ version: options.version }, 1);
    this.http = new HttpMetrics(this.registry);
    const loginFailures = new Counter({ name: 'lading_login_failures_total', help: 'Failed password logins (wrong user name or password), by door: api (POST /auth/login, /auth/b2safeproxy) or browser.', labelNames: ['via'], registers });
    const refusals = new Counter({ name: 'lading_limit_refusals_total', help: 'Requests refused by a limit (429), by limit.', labelNames: ['limit'], registers });
    const shareUses = new Counter({ name: 'lading_share_link_uses_total', help: 'Uses of share links: downloads of read links, deposits into drop boxes.', labelNames: ['kind'], registers });
    const jobFailures = new Counter({ name: 'lading_job_failures_total', help: 'Failed runs of durable jobs (PID registrations) on this node, by kind; final: not tried again.', labelNames: ['kind', 'final'], registers });
    const verified = new Counter({ name: 'lading_fixity_objects_verified_total', help: 'Stored objects whose bytes a fixity check (the background audit, or lading fsck run with this registry) read on this node, by outcome: ok, damaged (not the bytes recorded) or missing.', labelNames: ['outcome'], registers });
    const verifiedBytes = new Counter({ name: 'lading_fixity_verified_bytes_total', help: 'Bytes of stored objects a fixity check on this node read and found whole.', registers });
    const damagedFound = new Counter({ name: 'lading_fixity_damage_found_total', help: 'Findings of damaged or missing bytes by fixity checks on this node (an object found again counts again).', registers });
    this.observer = {
      loginFailed: (via) => loginFailures.inc({ via }),
      limited: (limit) => refusals.inc({ limit }),
      shareUsed: (kind) => shareUses.inc({ kind }),
      jobFailed: (kind, final) => jobFailures.inc({ kind, final: String(final) }),
      objectVerified: (bytes, outcome) => {
        verified.inc({ outcome });
        if (bytes > 0) verifiedBytes.inc(bytes);
      },
      objectDamaged: () => damagedFound.inc(),
    };
    this.#catalogDuration = new HistogramFamily(this.registry, {
      name: 'lading_catalog_operation_duration_seconds', help: 'Time catalog operations take, by operation (a method of a catalog role), failed ones included.',
      labelNames: ['operation'], buckets: CATALOG_BUCKETS,
    });
    this.#resourceErrors = new Counter({
      name: 'lading_resource_errors_total', help: 'Failures of the store (unreachable, full, an I/O error), by resource operation and error code.',
      labelNames: ['operation', 'code'], registers,
    });
  }

  /** The Prometheus text of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `catalog` with every operation timed; the same object otherwise (no `this` is relied on: see `composeCatalog`). */
  timeCatalog(catalog: Catalog): Catalog {
    const timed: Record<string, unknown> = { ...catalog };
    for (const [name, value] of Object.entries(catalog)) {
      if (typeof value !== 'function' || NOT_TIMED.has(name)) continue;
      const fn = value as (...args: unknown[]) => Promise<unknown>;
      const family = this.#catalogDuration;
      // NOTE: made at the first call, so operations never used show no series.
      let series: HistogramSeries | null = null;
      const observe = (started: number) => (series ??= family.series(name)).observe((performance.now() - started) / 1000);
      timed[name] = (...args: unknown[]) => {
        const started = performance.now();
        return fn.apply(catalog, args).then((value) => {
          observe(started);
          return value;
        }, (err: unknown) => {
          observe(started);
          throw err;
        });
      };
    }
    return timed as unknown as Catalog;
  }

  /** `resource` with the store's failures counted (see `STORE_FAILURES`); otherwise the same. */
  countResourceErrors(resource: Resource): Resource {
    const counted = this.#countErrors(resource, '', ['write', 'read', 'copy', 'size', 'delete', 'sweepTemporaries', 'probe']) as Resource;
    if (!resource.staging) return counted;
    const staging = this.#countErrors(resource.staging, 'staging.', ['begin', 'append', 'readStaged', 'complete', 'abort']) as StagedWrites;
    return { ...counted, staging };
  }

  #countErrors(target: object, prefix: string, operations: readonly string[]): object {
    const out: Record<string, unknown> = { ...target };
    for (const name of operations) {
      const fn = (target as Record<string, unknown>)[name];
      if (typeof fn !== 'function') continue;
      const operation = prefix + name;
      out[name] = (...args: unknown[]) => (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((err: unknown) => {
        const code = storeFailure(err);
        if (code !== null) this.#resourceErrors.inc({ operation, code });
        throw err;
      });
    }
    return out;
  }

  /**
   * Registers the figures read at each scrape: the job queue, open resumable uploads, the pool
   * of a PostgreSQL catalog, the free space of a file-system resource. A figure whose source
   * does not answer is left out of that scrape rather than failing it.
   */
  watch(sources: ScrapeSources): void {
    const registers = [this.registry];
    const { catalog, resource, clock } = sources;
    // NOTE: each gauge is collected on its own; those sharing a read share it within a scrape.
    const queue = shared(() => catalog.jobQueue());
    new Gauge({
      name: 'lading_jobs', help: 'Durable jobs (PID registrations) in the catalog, by state: pending (due or waiting for a retry), running, failed (for good).',
      labelNames: ['state'], registers,
      async collect() {
        this.reset();
        const q = await queue();
        if (!q) return;
        this.set({ state: 'pending' }, q.pending);
        this.set({ state: 'running' }, q.running);
        this.set({ state: 'failed' }, q.failed);
      },
    });
    new Gauge({
      name: 'lading_jobs_oldest_pending_age_seconds', help: 'Age of the oldest pending job (0 when none is pending).', registers,
      async collect() {
        this.reset();
        const q = await queue();
        if (q) this.set(q.oldestPending ? Math.max(0, (clock.now().getTime() - q.oldestPending.getTime()) / 1000) : 0);
      },
    });
    new Gauge({
      name: 'lading_resumable_uploads_open', help: 'Resumable (tus) uploads begun and neither finished, terminated nor expired, of every user and node.',
      registers,
      async collect() {
        this.reset();
        const open = await catalog.countOpenUploads(null, clock.now()).catch(() => null);
        if (open) this.set(open.count);
      },
    });
    new Gauge({
      name: 'lading_fixity_damaged_objects', help: 'Stored objects marked damaged by fixity checks (bytes missing or not the ones recorded), of every node: they are not served until restored or uploaded again.',
      registers,
      async collect() {
        this.reset();
        const n = await catalog.countDamaged().catch(() => null);
        if (n !== null) this.set(n);
      },
    });
    const pool = catalog.poolFigures?.bind(catalog);
    if (pool) {
      new Gauge({ name: 'lading_catalog_pool_connections', help: 'Connections open in the PostgreSQL pool.', registers, collect() { this.set(pool().total); } });
      new Gauge({ name: 'lading_catalog_pool_idle_connections', help: 'Open connections of the PostgreSQL pool that are idle.', registers, collect() { this.set(pool().idle); } });
      new Gauge({ name: 'lading_catalog_pool_waiting_requests', help: 'Queries waiting for a connection of the PostgreSQL pool.', registers, collect() { this.set(pool().waiting); } });
    }
    const readSpace = resource.space?.bind(resource);
    if (readSpace) {
      const space = shared(readSpace);
      new Gauge({
        name: 'lading_resource_free_bytes', help: 'Bytes free for lading on the file system holding the stored bytes (statfs at each scrape).', registers,
        async collect() {
          this.reset();
          const s = await space();
          if (s) this.set(s.free);
        },
      });
      new Gauge({
        name: 'lading_resource_size_bytes', help: 'Size of the file system holding the stored bytes.', registers,
        async collect() {
          this.reset();
          const s = await space();
          if (s) this.set(s.total);
        },
      });
    }
  }
}

/**
 * `read` shared by the callers of one scrape: a read started less than a second ago is reused.
 * A failed read gives null (the figure is left out of that scrape).
 */
function shared<T>(read: () => Promise<T>): () => Promise<T | null> {
  let last: { at: number; value: Promise<T | null> } | null = null;
  return () => {
    const now = performance.now();
    if (!last || now - last.at > 1000) last = { at: now, value: read().catch(() => null) };
    return last.value;
  };
}

/** The code a resource error is counted under, or null when it is not the store's failure (a missing key, a client that went away). */
function storeFailure(err: unknown): string | null {
  if (isLadingError(err)) return STORE_FAILURES.has(err.code) ? err.code : null;
  const e = err as NodeJS.ErrnoException | undefined;
  // NOTE: a system call's failure (EIO, EACCES, EROFS…) is the store's; a stream's (premature
  // close, a reset connection of the client) carries no `syscall` on the resource's side.
  return e && typeof e.syscall === 'string' && typeof e.code === 'string' && e.code !== 'ECONNRESET' ? e.code : null;
}
