/**
 * One data object down to a local file, verified end to end: the bytes go to `<file>.lading-part`
 * while they are hashed; a part file left by an interrupted run is continued with `Range` and
 * `If-Range` (the object's ETag, so a changed object starts over); the whole file's SHA-256
 * must equal the server's `Repr-Digest` and the checksum the listing gave before the part file
 * is renamed into place. A mismatch removes the part file: nothing damaged is left behind.
 */
import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, mkdir, open, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { discard, withRetry } from '../api.ts';
import { ClientError, RunStopped, localFailure } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { digestOfChecksum, digestOfHeader, hashRange, sha256File, TrailingHash } from './digest.ts';
import type { Outcome, TransferContext } from './upload.ts';
import type { Throttle } from './throttle.ts';
import { remoteStat } from './trees.ts';

export interface DownloadJob {
  remote: string;
  local: string;
  /** The checksum the listing gave (`sha2:…`), when known. */
  checksum: string | null;
  size: number | null;
  pid: string | null;
  force: boolean;
  sync: boolean;
  /** The object's modification time on the server (ISO 8601), given to the local file. */
  modified?: string | null;
}

export const PART_SUFFIX = '.lading-part';

/**
 * Bytes gathered before one positional write, one write in flight. NOTE: larger batches (and a
 * larger response buffer) measured more CPU, not less: the reads concatenate buffered chunks
 * and fresh memory costs page faults; 1 MiB keeps the buffers reused.
 */
const WRITE_BATCH = 1 << 20;
/** Objects from this size on are hashed by a second thread. */
const THREADED_HASH_BYTES = 16 << 20;

/**
 * Writes `body` into `file` from `start` on, hashing it in order into `hash` (when given) and
 * telling `written` the length of the file's written prefix after each write; `tally.count`
 * follows the bytes received (from `start`). Writes are positional and one at a time, so the
 * file always ends with contiguous bytes only (a broken download leaves a valid prefix to
 * continue).
 */
async function receive(body: Readable, file: string, start: number, hash: Hash | null, tally: { count: number }, onBytes: (n: number) => void, signal: AbortSignal, written?: (bytes: number) => void, throttle?: Throttle): Promise<void> {
  // NOTE: 'r+' keeps the prefix a resumed download continues; truncated to it in case the
  // part file is longer than what was hashed.
  const handle = await open(file, start > 0 ? 'r+' : 'w').catch((err: unknown) => {
    body.on('error', () => {});
    body.destroy();
    throw err;
  });
  let writing: Promise<unknown> = Promise.resolve();
  try {
    if (start > 0) await handle.truncate(start);
    let position = start;
    let batch: Buffer[] = [];
    let batched = 0;
    const flush = async (): Promise<void> => {
      await writing;
      const chunks = batch;
      const at = position;
      position += batched;
      batch = [];
      batched = 0;
      writing = writeAll(handle, chunks, at).then(() => written?.(at + chunks.reduce((n, c) => n + c.length, 0)));
      // NOTE: a failed write (a full disk) is thrown by the next flush or the end; until then
      // it is not an unhandled rejection, which would end the process with a stack trace.
      writing.catch(() => {});
    };
    const onAbort = (): void => { body.destroy(new Error('interrupted')); };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        hash?.update(chunk);
        tally.count += chunk.length;
        onBytes(tally.count);
        batch.push(chunk);
        batched += chunk.length;
        if (batched >= WRITE_BATCH) await flush();
        // NOTE: not reading holds the socket back: the server sends no faster than the limit.
        if (throttle) await throttle.take(chunk.length, signal);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (batched > 0) await flush();
    await writing;
  } finally {
    if (!body.readableEnded) {
      body.on('error', () => {});
      body.destroy();
    }
    await writing.catch(() => {});
    await handle.close();
  }
}

/** `writev` until every byte of `chunks` is at `position` on. */
async function writeAll(handle: FileHandle, chunks: Buffer[], position: number): Promise<void> {
  let rest = chunks;
  while (rest.length > 0) {
    const { bytesWritten } = await handle.writev(rest, position);
    position += bytesWritten;
    let skip = bytesWritten;
    const next: Buffer[] = [];
    for (const c of rest) {
      if (skip >= c.length) skip -= c.length;
      else { next.push(skip > 0 ? c.subarray(skip) : c); skip = 0; }
    }
    rest = next;
  }
}

async function sizeOf(path: string): Promise<number | null> {
  const s = await stat(path).catch(() => null);
  return s?.isFile() ? s.size : null;
}

/**
 * Downloads one data object; see the module comment. A local failure no retry mends (a full
 * disk, a destination not writable) rejects at once as a fatal `ClientError`; then, and when
 * the run stopped for another transfer's such failure, a part file this call began is removed
 * (one an earlier run left stays, to be continued).
 */
export async function downloadFile(ctx: TransferContext, job: DownloadJob): Promise<Outcome> {
  const part = job.local + PART_SUFFIX;
  const fresh = (await sizeOf(part)) === null;
  try {
    return await download(ctx, job);
  } catch (err) {
    const local = err instanceof ClientError ? (localFailure(err.cause, job.local) ?? err) : (localFailure(err, job.local) ?? err);
    const stopped = ctx.signal.aborted && ctx.signal.reason instanceof RunStopped;
    if (fresh && ((local instanceof ClientError && local.fatal) || stopped || (await sizeOf(part)) === 0)) await rm(part, { force: true }).catch(() => {});
    throw local;
  }
}

async function download(ctx: TransferContext, job: DownloadJob): Promise<Outcome> {
  const { api } = ctx;
  let checksum = job.checksum;
  const existingSize = await sizeOf(job.local);
  if (existingSize !== null && !job.force) {
    checksum ??= (await remoteStat(api, job.remote, ctx.signal))?.checksum ?? null;
    const expected = digestOfChecksum(checksum);
    if (expected && (job.size === null || job.size === existingSize)) {
      const mine = await sha256File(job.local, existingSize);
      if (mine.equals(expected)) {
        ctx.onBase(existingSize);
        return { status: 'identical', size: existingSize, sha256: mine, pid: job.pid, transferred: 0, resumedFrom: 0 };
      }
    }
    if (!job.sync) throw new ClientError(`${job.local} exists and differs from ${job.remote} (--force overwrites it, --sync replaces it when it differs)`, EXIT.CONFLICT);
  }
  const part = job.local + PART_SUFFIX;
  await mkdir(dirname(job.local), { recursive: true });
  let transferred = 0;
  let resumedFrom = -1;
  return withRetry(async () => {
    let have = (await sizeOf(part)) ?? 0;
    const expected = digestOfChecksum(checksum);
    // NOTE: without a known ETag a part file cannot be checked to belong to the current
    // object, so it is not continued.
    if (have > 0 && !expected) have = 0;
    const headers: Record<string, string> = have > 0 ? { range: `bytes=${have}-`, 'if-range': `"${expected!.toString('hex')}"` } : {};
    const response = await api.stream('GET', `${api.registeredUrl(job.remote)}?download=true`, { headers, signal: ctx.signal, accept: [416] });
    if (response.status === 416) {
      // The part file is as long as the object or longer: it is not a prefix of it.
      discard(response.body);
      await rm(part, { force: true });
      throw new ClientError(`${job.remote}: the partial download did not fit the object; starting over`, EXIT.FAILED, { retryable: true, retryAfter: 0 });
    }
    if (response.status !== 206) have = 0;
    if (resumedFrom < 0) resumedFrom = have;
    const repr = digestOfHeader(response.headers.get('repr-digest'));
    const tap = { count: have };
    const before = have;
    ctx.onBase(have);
    // NOTE: a large object is hashed by a second thread reading the part file behind the
    // writes (SHA-256 costs about as much CPU as receiving and writing); a small one here,
    // where starting a thread would cost more than it saves.
    const size = response.headers.get('content-range')?.split('/')[1] ?? response.headers.get('content-length');
    const threaded = (job.size ?? Number(size ?? 0)) >= THREADED_HASH_BYTES;
    const hash = threaded ? null : createHash('sha256');
    let trailing: TrailingHash | null = null;
    let sha256: Buffer;
    try {
      if (hash && have > 0) await hashRange(part, 0, have, [hash]);
      if (threaded && have > 0) {
        trailing = new TrailingHash(part);
        trailing.written(have);
      }
      await receive(response.body, part, have, hash, tap, ctx.onBytes, ctx.signal, threaded ? (n) => {
        if (!trailing) trailing = new TrailingHash(part);
        trailing.written(n);
      } : undefined, ctx.throttle);
      if (threaded && !trailing) {
        // Nothing was written (an empty object, or the part file held all of it already).
        trailing = new TrailingHash(part);
        trailing.written(tap.count);
      }
      sha256 = hash ? hash.digest() : await trailing!.digest();
    } catch (err) {
      await (trailing as TrailingHash | null)?.close();
      transferred += tap.count - before;
      if (ctx.signal.aborted) throw new ClientError('interrupted', EXIT.INTERRUPTED, { cause: err });
      const local = localFailure(err, job.local);
      if (local) throw local;
      throw new ClientError(`${job.remote}: the download broke off: ${err instanceof Error ? err.message : String(err)}`, EXIT.FAILED, { retryable: true, cause: err });
    }
    transferred += tap.count - before;
    const refused = (repr && !repr.equals(sha256)) ? `the server's Repr-Digest is sha2:${repr.toString('base64')}`
      : (expected && !expected.equals(sha256)) ? `the listing's checksum is ${checksum}`
        : (job.size !== null && tap.count !== job.size) ? `the object has ${job.size} bytes, ${tap.count} arrived` : null;
    if (refused) {
      await rm(part, { force: true });
      throw new ClientError(`${job.remote}: the downloaded bytes have sha2:${sha256.toString('base64')}, but ${refused}; refused, nothing was kept`, EXIT.INTEGRITY);
    }
    await rename(part, job.local);
    // NOTE: the file's time is the data's, as cp -p and rclone keep it, not that of the download.
    const mtime = job.modified ? new Date(job.modified) : null;
    if (mtime && !Number.isNaN(mtime.getTime())) await utimes(job.local, mtime, mtime);
    return { status: 'sent' as const, size: tap.count, sha256, pid: job.pid, transferred, resumedFrom };
  }, ctx.retry);
}
