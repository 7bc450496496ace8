/**
 * `--bwlimit`: one rate for all the transfers of a run together, as rclone's. Each chunk is
 * given its slot after the previous ones at the rate (a virtual clock), and whoever is ahead of
 * that clock by more than a short burst waits: the total over any second stays near the limit
 * however many transfers run, and an idle moment is not saved up for a later burst.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** What may go at once before the clock makes anyone wait, in milliseconds of the rate. */
const BURST_MS = 100;

export class Throttle {
  readonly #bytesPerMs: number;
  #clock = 0;

  constructor(bytesPerSecond: number) {
    this.#bytesPerMs = bytesPerSecond / 1000;
  }

  /** Resolves once `bytes` more may go (rejects when `signal` aborts meanwhile). */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    this.#clock = Math.max(this.#clock, now - BURST_MS) + bytes / this.#bytesPerMs;
    const wait = this.#clock - now - BURST_MS;
    if (wait > 0) await sleep(wait, undefined, { signal });
  }
}

/** `source`'s chunks, each let through when `throttle` allows (all of them at once without one). */
export async function* throttled(source: AsyncIterable<Buffer>, throttle: Throttle | undefined, signal?: AbortSignal): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    if (throttle) await throttle.take(chunk.length, signal);
    yield chunk;
  }
}
