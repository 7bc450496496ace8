/**
 * Reading the body of a staged append (see `StagedWrites.append` in `core/ports.ts`): a source
 * that fails (the client went away) ends the reading rather than throwing through it, so that
 * what arrived before is still flushed and acknowledged, and the failure is rethrown after.
 */

/** The next chunk of `chunks`, or `{ failed }` with the error when the source fails. */
export async function nextChunk(chunks: AsyncIterator<Buffer>): Promise<IteratorResult<Buffer> | { failed: unknown }> {
  try {
    return await chunks.next();
  } catch (err) {
    return { failed: err };
  }
}
