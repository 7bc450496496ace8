/**
 * A resource that keeps small objects in the catalog's database and hands larger ones to
 * another resource. A small upload then costs one more row in a transaction whose log flush
 * many uploads share, instead of a file of its own: a create, a write, a flush of the file and
 * of its directory, a rename and a close, each a hand-off to Node's thread pool (on a 2-core
 * machine 1.5-2× more small objects per second: bench/README.md, 2026-11-25). It follows
 * SQLite's own measurements, which find blobs of up to ~100 KB faster to keep in the database
 * than as files (https://sqlite.org/fasterthanfs.html).
 *
 * A write reads at most `limit` bytes before it decides: a body that ends within them is stored
 * inline; a larger one is handed, whole and unchanged, to the other resource (the bytes read
 * so far are put back at the front of the source). So at most `limit` bytes of a body are ever
 * held in memory. A small write hands its bytes to the catalog, which stores them in the
 * transaction of the commit that makes their object visible (see `InlineStore.put`): one
 * transaction and one flush of the log for both. Reads, sizes and deletes look inline first.
 * Writes in pieces (resumable uploads) and the sweep of temporaries are the other resource's.
 */
import { Readable, type Writable } from 'node:stream';
import type { ByteRange, InlineStore, Resource, ResourceStream } from '../../core/ports.ts';
import { type SourceListeners, asBuffer, listen, prematureClose, unlisten } from '../source-listeners.ts';

/** Objects of up to this many bytes are stored inline by default. */
export const INLINE_LIMIT = 64 * 1024;

/** `inner` with the objects of at most `limit` bytes kept in `store`. */
export function inlineSmallObjects(inner: Resource, store: InlineStore, limit = INLINE_LIMIT): Resource {
  return {
    driver: inner.driver,
    // NOTE: every inline stream has copyTo and honours ranges, and holds its bytes once read,
    // so these are the other resource's.
    capabilities: inner.capabilities,
    ...(inner.staging ? { staging: inner.staging } : {}),

    async write(key, source, options = {}) {
      const small = await takeAtMost(source, limit, options.signal);
      if (small === null) return inner.write(key, source, options);
      // NOTE: no `publishAfter`: nothing is stored outside the commit that makes the object
      // visible, so there is nothing a crash could leave behind for the caller to track.
      if (options.signal?.aborted) throw options.signal.reason;
      await store.put(key, small);
      return { size: small.length };
    },

    // NOTE: bytes kept inline are copied as bytes, kept for the commit of the copy's object
    // like a small write's; a copy of a larger object is the other resource's.
    ...(inner.copy ? {
      copy: async (from: string, to: string, options: { publishAfter?: () => Promise<unknown> } = {}) => {
        const bytes = store.get(from);
        if (bytes === null) return inner.copy!(from, to, options);
        await store.put(to, Buffer.from(bytes));
        return { size: bytes.length };
      },
    } : {}),

    async read(key, range?: ByteRange) {
      const bytes = store.get(key);
      if (bytes === null) return inner.read(key, range);
      return inlineStream(range ? bytes.subarray(range.start, range.end + 1) : bytes);
    },

    async size(key) {
      return store.size(key) ?? inner.size(key);
    },

    async delete(key) {
      if (!(await store.delete(key))) await inner.delete(key);
    },

    // NOTE: bytes kept inline live and die with their object's row (`InlineStore.put`): never
    // an orphan, and checked through `read` like any other.
    list: () => inner.list(),
    sweepTemporaries: (before, keep) => inner.sweepTemporaries(before, keep),
    probe: () => inner.probe(),
    ...(inner.space ? { space: inner.space } : {}),
    close: () => inner.close(),
  };
}

/** A stream of `bytes` with `copyTo` (one write). */
function inlineStream(bytes: Buffer): ResourceStream {
  const stream = Readable.from(bytes.length > 0 ? [bytes] : [], { objectMode: false });
  const copyTo = (dest: Writable): Promise<void> => new Promise<void>((resolve, reject) => {
    stream.destroy();
    if (dest.destroyed) {
      reject(new Error('The destination closed before the copy ended.'));
      return;
    }
    if (bytes.length === 0) {
      resolve();
      return;
    }
    // NOTE: a destination destroyed before the write completes may never call it back.
    const onClose = (): void => reject(new Error('The destination closed before the copy ended.'));
    dest.once('close', onClose);
    dest.write(bytes, (err) => {
      dest.off('close', onClose);
      if (err) reject(err);
      else resolve();
    });
  });
  return Object.assign(stream, { copyTo });
}

/**
 * Reads `source` to its end when it holds at most `limit` bytes and returns them; otherwise
 * returns null with every byte read put back at the front of `source`, which is left paused
 * for its next reader. Rejects with the source's error, or the signal's reason.
 */
function takeAtMost(source: Readable, limit: number, signal?: AbortSignal): Promise<Buffer | null> {
  return new Promise<Buffer | null>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (err: unknown): void => {
      if (done) return;
      done = true;
      unlisten(source, listeners, signal);
      source.destroy();
      reject(err);
    };
    const listeners: SourceListeners = {
      data(chunk) {
        const buffer = asBuffer(chunk);
        chunks.push(buffer);
        size += buffer.length;
        if (size <= limit) return;
        done = true;
        unlisten(source, listeners, signal);
        source.pause();
        // Back at the front, in order: the next reader sees the body from its first byte.
        for (let i = chunks.length - 1; i >= 0; i--) source.unshift(chunks[i]);
        resolve(null);
      },
      end() {
        if (done) return;
        done = true;
        unlisten(source, listeners, signal);
        resolve(Buffer.concat(chunks, size));
      },
      close() {
        fail(prematureClose());
      },
      abort() {
        fail(signal?.reason ?? new Error('The write was aborted.'));
      },
      fail,
    };
    listen(source, listeners, signal);
  });
}
