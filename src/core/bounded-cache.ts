/**
 * A small least-recently-used map with a fixed number of entries, for caches on hot paths
 * (verified certificate chains, opened credentials). Pure: no timers, no I/O; what an entry is
 * valid for is the caller's business.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #max: number;

  /** `max` entries at most; the least recently used one goes first. */
  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError('BoundedCache: max must be at least 1');
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, marking it as recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    // NOTE: a Map iterates in insertion order, so re-inserting makes it the newest.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Deletes every entry whose key `drop` returns true for. */
  deleteWhere(drop: (key: K) => boolean): void {
    // NOTE: a Map may lose entries while it is iterated; the rest are still visited.
    for (const key of this.#entries.keys()) if (drop(key)) this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
