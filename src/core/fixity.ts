/**
 * Fixity: whether the bytes the resource holds are still the ones the catalog recorded. One
 * check reads an object's bytes whole and compares them with its size and SHA-256 (the hashing
 * downloads of archives use, `checkedBytes`); `fsck` checks every stored object and looks for
 * bytes no object refers to (orphans), removing those when asked; `FixityAudit` checks every
 * object again in the background, a bounded number of bytes a second, each once per interval,
 * on any number of nodes (the catalog gives each object to one checker at a time). A damaged or
 * missing object is marked in the catalog, which makes every download refuse it
 * (`OBJECT_DAMAGED`) rather than serve other bytes. Knows nothing of HTTP, files or S3.
 */
import { isLadingError } from './errors.ts';
import { checkedBytes } from './meter.ts';
import type { Observer } from './observer.ts';
import type { Clock, FixityStore, Resource, StoredObject } from './ports.ts';

/** What one check found: the bytes whole, different from those recorded, or gone. */
export type FixityOutcome = { kind: 'ok' } | { kind: 'damaged' | 'missing'; reason: string };

/** The reason recorded for an object whose bytes the resource does not have. */
export const MISSING_REASON = 'bytes missing from the store';

/** Waits before the next `bytes` are read, to keep a rate (see `pacer`). */
export type Pace = (bytes: number) => Promise<void>;

/**
 * Reads the bytes of `object` whole and compares them with its recorded size and checksum,
 * waiting on `pace` for each chunk. Resolves with `missing` when the resource has no such key
 * and `damaged` when the bytes differ; rejects with what else the resource rejects with (an
 * unreachable store: nothing is known then). Changes nothing.
 */
export async function verifyObject(resource: Resource, object: StoredObject, pace: Pace = async () => {}): Promise<FixityOutcome> {
  let stream;
  try {
    stream = await resource.read(object.blob);
  } catch (err) {
    if (isLadingError(err, 'NOT_FOUND')) return { kind: 'missing', reason: MISSING_REASON };
    throw err;
  }
  try {
    for await (const chunk of checkedBytes(object, stream)) await pace(chunk.length);
    return { kind: 'ok' };
  } catch (err) {
    if (isLadingError(err, 'CHECKSUM_MISMATCH')) return { kind: 'damaged', reason: String(err.details.reason ?? err.message) };
    throw err;
  } finally {
    stream.destroy();
  }
}

/**
 * A pace of at most `bytesPerSecond` on average (a token bucket holding one second's worth),
 * measured on the monotonic clock `now` (ms); `Infinity` never waits. `sleep` is how it waits.
 */
export function pacer(bytesPerSecond: number, sleep: (ms: number) => Promise<void> = delay, now: () => number = () => performance.now()): Pace {
  if (!Number.isFinite(bytesPerSecond)) return async () => {};
  let allowance = bytesPerSecond;
  let last = now();
  return async (bytes) => {
    const at = now();
    allowance = Math.min(bytesPerSecond, allowance + ((at - last) / 1000) * bytesPerSecond);
    last = at;
    allowance -= bytes;
    if (allowance < 0) await sleep((-allowance / bytesPerSecond) * 1000);
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Checks `object`, records what was found and tells `observer`; the recorded object, or null when it changed meanwhile. */
async function checkAndRecord(
  o: { catalog: FixityStore; resource: Resource; clock: Clock; observer?: Observer | undefined }, object: StoredObject, pace: Pace,
): Promise<{ outcome: FixityOutcome; recorded: StoredObject } | null> {
  const outcome = await verifyObject(o.resource, object, pace);
  const damage = outcome.kind === 'ok' ? null : outcome.reason;
  const recorded = await o.catalog.recordFixity({ blob: object.blob, now: o.clock.now(), damage });
  // NOTE: overwritten or removed while it was read: what was read is no object's any more.
  if (!recorded) return null;
  o.observer?.objectVerified?.(outcome.kind === 'ok' ? object.size : 0, outcome.kind);
  if (outcome.kind !== 'ok') o.observer?.objectDamaged?.(recorded.path, outcome.reason);
  return { outcome, recorded };
}

/** One problem `fsck` found. */
export interface FsckProblem {
  /** The object's stored path; for an orphan, its key on the resource. */
  path: string;
  kind: 'damaged' | 'missing' | 'orphan';
  detail: string;
  /** For an orphan: whether `repair` removed it. */
  repaired?: boolean;
}

export interface FsckReport {
  problems: FsckProblem[];
  /** Objects checked, and their bytes read. */
  checked: number;
  bytes: number;
  /** Keys on the resource looked at for orphans (0 when limited to a path). */
  keys: number;
}

export interface FsckOptions {
  catalog: FixityStore;
  resource: Resource;
  clock: Clock;
  observer?: Observer;
  /**
   * Bytes no object refers to count as orphans only once they are older than this (ms):
   * younger ones may be a write whose commit is under way on some node.
   */
  orphanAgeMs: number;
  /** Remove the orphans found. Damaged and missing objects are only marked: their bytes are for an operator to restore. */
  repair?: boolean;
  /** Check only the objects at or below this stored path, and look for no orphans. */
  path?: string;
  /** Objects checked at once (default 4: a store far away answers each read after a round trip). */
  concurrency?: number;
  /** Told after each object checked. */
  progress?: (checked: number) => void;
}

/** How many stored objects `fsck` reads from the catalog at a time, and keys it asks about. */
const FSCK_PAGE = 500;

/**
 * Checks every stored object's bytes against its recorded size and checksum (marking in the
 * catalog what is damaged or missing, and clearing the mark of what reads whole again), then
 * lists the resource's keys for bytes no object, tracked write or resumable upload refers to,
 * older than `orphanAgeMs`, and with `repair` removes them. Resolves with every problem found,
 * objects in blob order first, then orphans. Rejects with `UNAVAILABLE` when the catalog or the
 * store cannot be reached (what was checked until then stays recorded).
 */
export async function fsck(o: FsckOptions): Promise<FsckReport> {
  const report: FsckReport = { problems: [], checked: 0, bytes: 0, keys: 0 };
  const inScope = (path: string): boolean => o.path === undefined || o.path === '/' || path === o.path || path.startsWith(`${o.path}/`);
  const concurrency = Math.max(1, o.concurrency ?? 4);
  let after: string | null = null;
  for (;;) {
    const page: StoredObject[] = await o.catalog.storedObjects(after, FSCK_PAGE);
    const todo = page.filter((obj) => inScope(obj.path));
    const found: (FsckProblem | null)[] = new Array(todo.length).fill(null);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < todo.length) {
        const i = next++;
        const done = await checkAndRecord(o, todo[i]!, async () => {});
        if (!done) continue;
        report.checked++;
        o.progress?.(report.checked);
        if (done.outcome.kind === 'ok') report.bytes += todo[i]!.size;
        else found[i] = { path: done.recorded.path, kind: done.outcome.kind, detail: `${done.outcome.reason} (key ${done.recorded.blob})` };
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
    for (const p of found) if (p) report.problems.push(p);
    if (page.length < FSCK_PAGE) break;
    after = page.at(-1)!.blob;
  }
  if (o.path !== undefined && o.path !== '/') return report;
  const cutoff = o.clock.now().getTime() - o.orphanAgeMs;
  let batch: { key: string; size: number; modifiedAt: Date }[] = [];
  const judge = async (): Promise<void> => {
    const old = batch.filter((k) => k.modifiedAt.getTime() < cutoff);
    batch = [];
    if (old.length === 0) return;
    const known = await o.catalog.knownBlobs(old.map((k) => k.key));
    for (const k of old) {
      if (known.has(k.key)) continue;
      const problem: FsckProblem = { path: k.key, kind: 'orphan', detail: `${k.size} bytes no object refers to, stored ${k.modifiedAt.toISOString()}` };
      if (o.repair) {
        // NOTE: asked again just before: the catalog may have learnt of the key meanwhile.
        if ((await o.catalog.knownBlobs([k.key])).has(k.key)) continue;
        await o.resource.delete(k.key);
        problem.repaired = true;
      }
      report.problems.push(problem);
    }
  };
  for await (const k of o.resource.list()) {
    report.keys++;
    batch.push(k);
    if (batch.length >= FSCK_PAGE) await judge();
  }
  await judge();
  return report;
}

export interface FixityAuditOptions {
  catalog: FixityStore;
  resource: Resource;
  /** What decides which objects are due and what is recorded: the test clock in tests. */
  clock: Clock;
  /** This checker's name among the nodes (it holds the objects it claims). */
  holder: string;
  /** Bytes read a second at most, on this node (`fixity.rate`). */
  bytesPerSecond: number;
  /** How long after its last check an object is checked again (`fixity.interval`), in ms. */
  intervalMs: number;
  observer?: Observer;
  log?: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Objects claimed at a time (default 32). */
  batch?: number;
  /** How long a claim keeps other checkers off (default 1 h); a batch left unfinished then goes to whoever claims it. */
  leaseMs?: number;
  /** How long the loop waits when nothing is due, or after a failure (default 10 minutes). */
  idleMs?: number;
  /** How the pace waits (tests); default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The background audit: claims the objects whose last check is older than the interval (those
 * never checked first), reads them at no more than the rate and records what it found, until
 * none is due; then waits and looks again. Every node runs one; the catalog's claims keep two
 * from reading the same object at once. A store that cannot be reached pauses the audit (the
 * claim runs out and the objects are checked later); it never marks an object for it.
 */
export class FixityAudit {
  readonly #o: FixityAuditOptions;
  readonly #pace: Pace;
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;

  constructor(options: FixityAuditOptions) {
    this.#o = options;
    const pace = pacer(options.bytesPerSecond > 0 ? options.bytesPerSecond : Infinity, options.sleep);
    // NOTE: a stop ends the read of a large object between two chunks, not at its end: the
    // object stays claimed until its claim runs out, and is checked then.
    this.#pace = async (bytes) => {
      if (this.#loop !== null && !this.#running) throw new Stopped();
      await pace(bytes);
    };
  }

  /** Starts the loop (no-op when running). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops claiming, and resolves once the object being read is recorded. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  /**
   * Checks the objects due at the clock's now, a batch at a time, until none is (or, when
   * running, the audit is stopped). Resolves with how many were checked and how many of them
   * found damaged or missing. Rejects with what the catalog or the store rejects with.
   */
  async pass(): Promise<{ checked: number; damaged: number }> {
    const { catalog, clock, holder, intervalMs } = this.#o;
    const batch = this.#o.batch ?? 32;
    const leaseMs = this.#o.leaseMs ?? 3_600_000;
    let checked = 0;
    let damaged = 0;
    for (;;) {
      const now = clock.now();
      const until = new Date(now.getTime() + leaseMs);
      const claimed = await catalog.claimFixity({ holder, now, dueBefore: new Date(now.getTime() - intervalMs), until, limit: batch });
      for (const object of claimed) {
        // NOTE: past its claim, another checker may hold the rest of the batch: it is theirs.
        if (clock.now().getTime() >= until.getTime() || (this.#loop !== null && !this.#running)) return { checked, damaged };
        let done;
        try {
          done = await checkAndRecord(this.#o, object, this.#pace);
        } catch (err) {
          if (err instanceof Stopped) return { checked, damaged };
          throw err;
        }
        if (!done) continue;
        checked++;
        if (done.outcome.kind !== 'ok') {
          damaged++;
          this.#o.log?.error({ path: done.recorded.path, problem: done.outcome.kind, reason: done.outcome.reason }, `fixity: ${done.recorded.path} is ${done.outcome.kind === 'missing' ? 'missing its bytes' : 'damaged'} (${done.outcome.reason}); downloads of it are refused until it is restored or uploaded again`);
        }
      }
      if (claimed.length < batch) return { checked, damaged };
    }
  }

  async #run(): Promise<void> {
    const idleMs = this.#o.idleMs ?? 600_000;
    while (this.#running) {
      try {
        const { checked, damaged } = await this.pass();
        if (checked > 0) this.#o.log?.info?.({ checked, damaged }, 'fixity: checked the objects due');
      } catch (err) {
        this.#o.log?.warn({ err }, 'fixity: the audit failed; it tries again later');
      }
      if (!this.#running) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idleMs);
        timer.unref();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }
}

/** The audit was stopped in the middle of an object. */
class Stopped extends Error {
  constructor() {
    super('The fixity audit was stopped.');
  }
}
