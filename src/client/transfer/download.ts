/**
 * One data object down to a local file, verified end to end: the bytes go to `<file>.lading-part`
 * while they are hashed; a part file left by an interrupted run is continued with `Range` and
 * `If-Range` (the object's ETag, so a changed object starts over); the whole file's SHA-256
 * must equal the server's `Repr-Digest` and the checksum the listing gave before the part file
 * is renamed into place. A mismatch removes the part file: nothing damaged is left behind.
 */
import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { withRetry } from '../api.ts';
import { ClientError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { digestOfChecksum, digestOfHeader, hashRange, sha256File } from './digest.ts';
import type { Outcome, TransferContext } from './upload.ts';
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
}

export const PART_SUFFIX = '.lading-part';

/** Hashes and counts what flows through. */
class Tap extends Transform {
  readonly hash: Hash;
  count: number;
  readonly #onBytes: (n: number) => void;

  constructor(hash: Hash, start: number, onBytes: (n: number) => void) {
    super({ highWaterMark: 1 << 20 });
    this.hash = hash;
    this.count = start;
    this.#onBytes = onBytes;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.count += chunk.length;
    this.#onBytes(this.count);
    cb(null, chunk);
  }
}

async function sizeOf(path: string): Promise<number | null> {
  const s = await stat(path).catch(() => null);
  return s?.isFile() ? s.size : null;
}

/** Downloads one data object; see the module comment. */
export async function downloadFile(ctx: TransferContext, job: DownloadJob): Promise<Outcome> {
  const { api } = ctx;
  let checksum = job.checksum;
  const existingSize = await sizeOf(job.local);
  if (existingSize !== null && !job.force) {
    checksum ??= (await remoteStat(api, job.remote, ctx.signal))?.checksum ?? null;
    const expected = digestOfChecksum(checksum);
    if (expected && (job.size === null || job.size === existingSize)) {
      const mine = await sha256File(job.local, existingSize);
      if (mine.equals(expected)) {
        ctx.onBytes(existingSize);
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
    let hash = createHash('sha256');
    if (have > 0) await hashRange(part, 0, have, [hash]);
    const headers: Record<string, string> = have > 0 ? { range: `bytes=${have}-`, 'if-range': `"${expected!.toString('hex')}"` } : {};
    const response = await api.request('GET', `${api.registeredUrl(job.remote)}?download=true`, { headers, signal: ctx.signal, accept: [416] });
    if (response.status === 416) {
      // The part file is as long as the object or longer: it is not a prefix of it.
      await response.body?.cancel();
      await rm(part, { force: true });
      throw new ClientError(`${job.remote}: the partial download did not fit the object; starting over`, EXIT.FAILED, { retryable: true, retryAfter: 0 });
    }
    if (response.status !== 206) {
      have = 0;
      hash = createHash('sha256');
    }
    if (resumedFrom < 0) resumedFrom = have;
    const repr = digestOfHeader(response.headers.get('repr-digest'));
    const tap = new Tap(hash, have, ctx.onBytes);
    const before = have;
    try {
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), tap, createWriteStream(part, { flags: have > 0 ? 'a' : 'w' }), { signal: ctx.signal });
    } catch (err) {
      transferred += tap.count - before;
      if (ctx.signal.aborted) throw new ClientError('interrupted', EXIT.INTERRUPTED, { cause: err });
      throw new ClientError(`${job.remote}: the download broke off: ${err instanceof Error ? err.message : String(err)}`, EXIT.FAILED, { retryable: true, cause: err });
    }
    transferred += tap.count - before;
    const sha256 = tap.hash.digest();
    const refused = (repr && !repr.equals(sha256)) ? `the server's Repr-Digest is sha2:${repr.toString('base64')}`
      : (expected && !expected.equals(sha256)) ? `the listing's checksum is ${checksum}`
        : (job.size !== null && tap.count !== job.size) ? `the object has ${job.size} bytes, ${tap.count} arrived` : null;
    if (refused) {
      await rm(part, { force: true });
      throw new ClientError(`${job.remote}: the downloaded bytes have sha2:${sha256.toString('base64')}, but ${refused}; refused, nothing was kept`, EXIT.INTEGRITY);
    }
    await rename(part, job.local);
    return { status: 'sent' as const, size: tap.count, sha256, pid: job.pid, transferred, resumedFrom };
  }, { signal: ctx.signal, onRetry: ctx.onRetry });
}
