/**
 * Taking a request body's chunks with `'data'` listeners, for the resources that read a
 * source themselves rather than through `pipeline` (see `drainInto` in `resource/fs.ts`): the
 * listeners attached in one order, and the sources that ended, failed or were aborted before
 * anyone listened.
 */
import type { Readable } from 'node:stream';

/** What a reader of a source does on each of its events. */
export interface SourceListeners {
  data(chunk: Buffer | Uint8Array | string): void;
  end(): void;
  /** The source closed without ending (a client gone). */
  close(): void;
  /** The signal aborted. */
  abort(): void;
  /** The source failed; also called for a source already destroyed when `listen` is called. */
  fail(err: unknown): void;
}

/** A chunk of a source as a Buffer: an object-mode source may give strings or typed arrays. Copies only a string. */
export function asBuffer(chunk: Buffer | Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The error of a source that closed before its end. */
export function prematureClose(): Error {
  return Object.assign(new Error('The source closed before it ended.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Attaches `on` to `source` (and `signal`) and starts the source flowing. Calls `on.abort`,
 * `on.end` or `on.fail` at once, attaching nothing more, for a signal already aborted, a source
 * already ended, or one already destroyed.
 * NOTE: the error listener comes first, before anything can return, and is never removed (by
 * `unlisten` either): a source destroyed with an error just before the read began emits it on a
 * later tick, and its owner may destroy it with an error after the reader settled; either would
 * otherwise be an uncaught exception. `on.fail` must therefore be a no-op once the reader settled.
 */
export function listen(source: Readable, on: SourceListeners, signal?: AbortSignal): void {
  source.on('error', on.fail);
  if (signal?.aborted) {
    on.abort();
    return;
  }
  if (source.readableEnded) {
    on.end();
    return;
  }
  if (source.destroyed) {
    on.fail(source.errored ?? prematureClose());
    return;
  }
  signal?.addEventListener('abort', on.abort, { once: true });
  source.on('close', on.close);
  source.on('end', on.end);
  source.on('data', on.data);
  // NOTE: a 'data' listener does not start a source that was paused explicitly.
  source.resume();
}

/** Removes what `listen` attached, but the error listener. */
export function unlisten(source: Readable, on: SourceListeners, signal?: AbortSignal): void {
  source.off('data', on.data);
  source.off('end', on.end);
  source.off('close', on.close);
  signal?.removeEventListener('abort', on.abort);
}
