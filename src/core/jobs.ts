/**
 * The job worker: claims durable jobs from the catalog under a lease, runs their handlers,
 * retries failures with exponential backoff, and tells waiters when a job has settled. A job
 * interrupted by a crash keeps its lease until it expires (or, for a single-owner catalog,
 * until the next start releases it) and then runs again, so handlers must be idempotent.
 */
import { EventEmitter } from 'node:events';
import type { Clock, JobStore } from './ports.ts';
import type { JobRecord } from './types.ts';
import type { Observer } from './observer.ts';
import { pruneInBatches } from './retention.ts';

export type JobHandler = (job: JobRecord) => Promise<void>;

/**
 * Removes the done jobs that settled more than `retentionSeconds` before `now`, a batch at a
 * time; returns how many went. 0 keeps every job. Failed jobs stay for an operator to see.
 * Safe on every node at once.
 */
export async function pruneJobs(store: Pick<JobStore, 'pruneJobs'>, now: Date, retentionSeconds: number): Promise<number> {
  return pruneInBatches(now, retentionSeconds, (before, limit) => store.pruneJobs(before, limit));
}

export interface JobWorkerOptions {
  catalog: JobStore;
  clock: Clock;
  handlers: Record<string, JobHandler>;
  /** Unique per process, e.g. `<host>:<pid>:<random>`. */
  workerId: string;
  /** How long a claimed job stays with this worker before others may take it over. */
  leaseMs?: number;
  /** How often to look for jobs enqueued elsewhere (other nodes, retries) when idle. */
  pollMs?: number;
  /** Jobs run at once. */
  concurrency?: number;
  /** Attempts before a job is marked failed. */
  maxAttempts?: number;
  log?: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Told of each failed run of a job (the metrics); none by default. */
  observer?: Pick<Observer, 'jobFailed'>;
}

export class JobWorker {
  readonly #o: Required<Omit<JobWorkerOptions, 'log' | 'observer'>> & Pick<JobWorkerOptions, 'log' | 'observer'>;
  readonly #settled = new EventEmitter();
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #pendingWake = false;
  #unwatch: Promise<(() => Promise<void>) | null> = Promise.resolve(null);

  constructor(options: JobWorkerOptions) {
    this.#o = { leaseMs: 60_000, pollMs: 2_000, concurrency: 8, maxAttempts: 8, ...options };
    this.#settled.setMaxListeners(0);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
    const watch = this.#o.catalog.watchJobs?.bind(this.#o.catalog);
    if (watch) {
      this.#unwatch = watch((event) => {
        if ('settled' in event) this.#settled.emit(event.settled);
        else if ('enqueued' in event) this.wake();
        else if ('interrupted' in event) {
          this.#o.log?.warn({ err: event.interrupted }, 'job events from other nodes are interrupted; waiting falls back to deadlines and polling until they are back');
        } else {
          this.#o.log?.info?.({}, 'job events from other nodes are back');
          // NOTE: what settled or was enqueued while the channel was down was not heard.
          this.#recheckWaiters();
          this.wake();
        }
      }).catch((err: unknown) => {
        this.#o.log?.warn({ err }, 'cannot watch job events; waiting falls back to deadlines and polling');
        return null;
      });
    }
  }

  /** Stops claiming; waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    await (await this.#unwatch)?.();
  }

  /** Looks for due jobs now instead of at the next poll (call after enqueueing). */
  wake(): void {
    this.#pendingWake = true;
    this.#wake?.();
  }

  /**
   * Resolves when every job in `ids` has settled (done or failed for good), or after
   * `timeoutMs`; true when all settled in time. Woken by completion, not by polling.
   */
  async waitFor(ids: readonly string[], timeoutMs: number): Promise<boolean> {
    const waits = ids.map((id) => new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.#settled.off(id, onSettled);
        resolve(ok);
      };
      const onSettled = () => finish(true);
      // NOTE: listen first, then look, so a job settling in between is not missed.
      this.#settled.on(id, onSettled);
      void this.#o.catalog.getJob(id).then((job) => {
        if (!job || job.state === 'done' || job.state === 'failed') finish(true);
      }, () => {});
    }));
    return (await Promise.all(waits)).every(Boolean);
  }

  /** Looks up every job someone waits for, and ends the waits of those that have settled. */
  #recheckWaiters(): void {
    for (const id of this.#settled.eventNames()) {
      if (typeof id !== 'string') continue;
      void this.#o.catalog.getJob(id).then((job) => {
        if (!job || job.state === 'done' || job.state === 'failed') this.#settled.emit(id);
      }, () => {});
    }
  }

  async #run(): Promise<void> {
    const { catalog, clock, workerId, leaseMs, concurrency } = this.#o;
    while (this.#running) {
      this.#pendingWake = false;
      let jobs: JobRecord[] = [];
      try {
        const now = clock.now();
        jobs = await catalog.claimJobs(workerId, now, new Date(now.getTime() + leaseMs), concurrency);
      } catch (err) {
        this.#o.log?.error({ err }, 'claiming jobs failed');
      }
      if (jobs.length > 0) {
        await Promise.all(jobs.map((job) => this.#runOne(job)));
        continue;
      }
      if (this.#pendingWake) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#o.pollMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  async #runOne(job: JobRecord): Promise<void> {
    const { catalog, clock, workerId, maxAttempts } = this.#o;
    const handler = this.#o.handlers[job.kind];
    try {
      if (!handler) throw new Error(`no handler for jobs of kind '${job.kind}'`);
      await handler(job);
      await catalog.completeJob(job.id, workerId, clock.now());
      this.#settled.emit(job.id);
    } catch (err) {
      const now = clock.now();
      const giveUp = job.attempts >= maxAttempts || !handler;
      const retryAt = giveUp ? null : new Date(now.getTime() + Math.min(300_000, 1000 * 2 ** (job.attempts - 1)));
      this.#o.log?.warn({ err, job: job.id, kind: job.kind, attempts: job.attempts, giveUp }, 'job failed');
      this.#o.observer?.jobFailed?.(job.kind, giveUp);
      await catalog.failJob(job.id, workerId, String((err as Error)?.message ?? err).slice(0, 1000), now, retryAt).catch(() => {});
      if (giveUp) this.#settled.emit(job.id);
      else setTimeout(() => this.wake(), retryAt!.getTime() - now.getTime()).unref();
    }
  }
}
