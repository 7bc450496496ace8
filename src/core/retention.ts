/**
 * The periodic sweep's removal of what is older than a retention: in batches, so that no
 * statement holds the catalog's locks for long while the table shrinks.
 */

/** How many rows one statement of a prune removes at most. */
const PRUNE_BATCH = 1000;

/**
 * Calls `prune(before, PRUNE_BATCH)` with `before` = `now` − `retentionSeconds` until a call
 * removes fewer than a batch; resolves with how many went in all. A retention of 0 (or less)
 * keeps everything and calls nothing.
 */
export async function pruneInBatches(now: Date, retentionSeconds: number, prune: (before: Date, limit: number) => Promise<number>): Promise<number> {
  if (retentionSeconds <= 0) return 0;
  const before = new Date(now.getTime() - retentionSeconds * 1000);
  let removed = 0;
  for (;;) {
    const n = await prune(before, PRUNE_BATCH);
    removed += n;
    if (n < PRUNE_BATCH) return removed;
  }
}
