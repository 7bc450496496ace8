/**
 * Readiness, for load balancers: whether this node can serve now, that is whether the catalog
 * answers a trivial query and the store a cheap request, each within a short time. Liveness
 * (`/api/status`) is not this: a node whose database is down is alive, but not ready. A check's
 * answer is kept for a moment, so a load balancer probing often costs the dependencies nothing.
 */
import { LadingError, isLadingError } from './errors.ts';
import type { Catalog, Resource } from './ports.ts';

export interface ReadinessOptions {
  catalog: Pick<Catalog, 'ping'>;
  resource: Pick<Resource, 'probe'>;
  /** Longest wait for each dependency, in ms (default 2000). */
  timeoutMs?: number;
  /** How long an answer is reused, in ms (default 1000). */
  cacheMs?: number;
}

/** Seconds a node that is not ready asks to be probed again after (`Retry-After`). */
export const NOT_READY_RETRY_AFTER = 5;

export class Readiness {
  readonly #o: Required<ReadinessOptions>;
  #last: { until: number; answer: Promise<void> } | null = null;
  // NOTE: a probe still unanswered is waited for again rather than repeated, so a dependency
  // that hangs never gets one more request per check (nor a pool one more waiting query).
  readonly #inFlight = new Map<string, Promise<string | null>>();

  constructor(options: ReadinessOptions) {
    this.#o = { timeoutMs: 2000, cacheMs: 1000, ...options };
  }

  /**
   * Resolves when the catalog and the store both answered within `timeoutMs`; rejects with
   * `UNAVAILABLE` (`details.retryAfter`) naming each that did not, and why. Concurrent calls,
   * and calls within `cacheMs` of the last answer, share one check.
   */
  check(): Promise<void> {
    const now = performance.now();
    if (this.#last && now < this.#last.until) return this.#last.answer;
    const answer = this.#run();
    const entry = { until: Infinity, answer };
    this.#last = entry;
    // NOTE: the answer is kept from when it is known, so a slow check is not followed by another at once.
    void answer.catch(() => {}).finally(() => { entry.until = performance.now() + this.#o.cacheMs; });
    return answer;
  }

  async #run(): Promise<void> {
    const [catalog, store] = await Promise.all([
      this.#within('the catalog', () => this.#o.catalog.ping()),
      this.#within('the store', () => this.#o.resource.probe()),
    ]);
    const problems = [catalog, store].filter((p) => p !== null);
    if (problems.length > 0) {
      throw new LadingError('UNAVAILABLE', `Not ready: ${problems.join('; ')}.`, { details: { retryAfter: NOT_READY_RETRY_AFTER } });
    }
  }

  /** Null when `probe` resolved within the time; else what went wrong, as a phrase naming `what`. */
  async #within(what: string, probe: () => Promise<void>): Promise<string | null> {
    let answer = this.#inFlight.get(what);
    if (!answer) {
      answer = probe().then(() => null, (err: unknown) => `${what} cannot be reached (${isLadingError(err) ? err.message.replace(/\.$/, '') : 'error'})`);
      const settled = answer;
      this.#inFlight.set(what, settled);
      void settled.finally(() => { if (this.#inFlight.get(what) === settled) this.#inFlight.delete(what); });
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`${what} did not answer within ${this.#o.timeoutMs / 1000} s`), this.#o.timeoutMs);
    });
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
