/**
 * `-` as a file, as `aws s3 cp`, `rclone cat`/`rcat` and `iget obj -` have it: `lading get <object> -`
 * writes the object to standard output, `lading put - <object>` stores standard input. Verified
 * end to end as the file forms are: the bytes written out are hashed and compared with the
 * server's digest (written bytes cannot be taken back, so a mismatch is an exit 6 after them);
 * the bytes read in carry their SHA-256 to the server, which checks it before it makes the data
 * object. A stream of unknown length goes through the deferred-length resumable upload (tus
 * `Upload-Defer-Length`), one block held at a time so that a broken request can be sent again;
 * one that ends within its first block is a single PUT.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { type ApiClient, type RetryOptions, discard, retryAfterOf, withRetry } from '../api.ts';
import { ClientError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { contentDigest, digestOfChecksum, digestOfHeader } from './digest.ts';
import { type Throttle, throttled } from './throttle.ts';
import type { RemoteEntry } from './trees.ts';

const TUS = { 'tus-resumable': '1.0.0' };

/** What a streamed transfer reports: the object, its bytes and their SHA-256 (hex). */
export interface Streamed {
  path: string;
  size: number;
  sha256: string;
  pid: string | null;
}

/**
 * Writes the data object `entry` to `out`, continuing a broken transfer with `Range` and
 * `If-Range` from the bytes written so far, at the rate `throttle` allows; rejects with
 * `INTEGRITY` when what was written is not what the server stored.
 */
export async function getToStream(api: ApiClient, entry: RemoteEntry, out: NodeJS.WritableStream, retry: RetryOptions, throttle?: Throttle): Promise<Streamed> {
  const hash = createHash('sha256');
  const expected = digestOfChecksum(entry.checksum);
  let written = 0;
  let repr: Buffer | null = null;
  await withRetry(async () => {
    // NOTE: bytes written cannot be taken back: a continued transfer must be of the same
    // object (If-Range with its checksum's ETag), else it fails rather than start again.
    if (written > 0 && !expected) throw new ClientError(`${entry.path}: the transfer broke off after ${written} bytes and cannot be continued`, EXIT.FAILED);
    const headers: Record<string, string> = written > 0 ? { range: `bytes=${written}-`, 'if-range': `"${expected!.toString('hex')}"` } : {};
    const response = await api.stream('GET', `${api.registeredUrl(entry.path)}?download=true`, { headers, signal: retry.signal });
    if (written > 0 && response.status !== 206) {
      discard(response.body);
      throw new ClientError(`${entry.path}: the object changed while it was being written out; what was written is not one state of it`, EXIT.INTEGRITY);
    }
    repr ??= digestOfHeader(response.headers.get('repr-digest'));
    try {
      for await (const chunk of throttled(response.body as AsyncIterable<Buffer>, throttle, retry.signal)) {
        hash.update(chunk);
        written += chunk.length;
        if (!out.write(chunk)) await once(out, 'drain');
      }
    } catch (err) {
      if (retry.signal?.aborted) throw new ClientError('interrupted', EXIT.INTERRUPTED, { cause: err });
      throw new ClientError(`${entry.path}: the download broke off: ${err instanceof Error ? err.message : String(err)}`, EXIT.FAILED, { retryable: true, cause: err });
    }
  }, retry);
  const sha256 = hash.digest();
  const want = repr ?? expected;
  if ((want && !want.equals(sha256)) || (entry.size !== null && written !== entry.size)) {
    throw new ClientError(`${entry.path}: the bytes written out have sha2:${sha256.toString('base64')} (${written} bytes), but the server stored ${want ? `sha2:${want.toString('base64')}` : `${entry.size} bytes`}: do not use them`, EXIT.INTEGRITY);
  }
  return { path: entry.path, size: written, sha256: sha256.toString('hex'), pid: entry.pid };
}

/** Reads `input` into blocks of `size` bytes (the last one shorter, possibly empty). */
async function* blocks(input: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let have = 0;
  for await (const chunk of input) {
    let rest = chunk;
    while (have + rest.length >= size) {
      const take = size - have;
      parts.push(rest.subarray(0, take));
      yield Buffer.concat(parts, size);
      rest = rest.subarray(take);
      parts = [];
      have = 0;
    }
    if (rest.length > 0) {
      parts.push(rest);
      have += rest.length;
    }
  }
  yield Buffer.concat(parts, have);
}

/** The envelope's record of a data object, as PUT and an upload's state answer it. */
interface ObjectRecord { PID: string | null; checksum: string | null }

function verify(path: string, sha256: Buffer, checksum: string | null | undefined): void {
  const theirs = digestOfChecksum(checksum);
  if (!theirs || !theirs.equals(sha256)) throw new ClientError(`${path}: the server stored checksum ${checksum ?? 'none'}, but standard input had sha2:${sha256.toString('base64')}`, EXIT.INTEGRITY);
}

/**
 * Stores `input` as the data object `path` (`force`: over an existing one), read at the rate
 * `throttle` allows. `blockBytes` is what is held in memory, and what a broken request sends
 * again at most.
 */
export async function putFromStream(api: ApiClient, input: Readable, path: string, options: { force: boolean; blockBytes: number; retry: RetryOptions; throttle?: Throttle }): Promise<Streamed> {
  const { retry } = options;
  const hash = createHash('sha256');
  const source = blocks(throttled(input, options.throttle, retry.signal), options.blockBytes);
  // NOTE: one block read ahead tells whether the one to send is the last: the request that
  // brings the last bytes carries the length and the digest. null: the stream has ended.
  const after = async (current: Buffer): Promise<Buffer | null> => {
    if (current.length < options.blockBytes) return null;
    const { value } = await source.next();
    return value && value.length > 0 ? value : null;
  };
  let block = ((await source.next()).value as Buffer | undefined) ?? Buffer.alloc(0);
  let next = await after(block);
  if (next === null) {
    // All of it fits one block: one PUT with its digest.
    const sha256 = hash.update(block).digest();
    const data = await withRetry(() => api.json<ObjectRecord>('PUT', `${api.registeredUrl(path)}${options.force ? '?force=true' : ''}`, {
      headers: { 'content-type': 'application/octet-stream', 'content-digest': contentDigest(sha256) }, body: block, signal: retry.signal,
    }), retry);
    verify(path, sha256, data.checksum);
    return { path, size: block.length, sha256: sha256.toString('hex'), pid: data.PID };
  }
  const metadata = [`path ${Buffer.from(path).toString('base64')}`];
  if (options.force) metadata.push(`force ${Buffer.from('true').toString('base64')}`);
  const created = await withRetry(() => api.request('POST', '/api/uploads', {
    headers: { ...TUS, 'upload-defer-length': '1', 'upload-metadata': metadata.join(',') }, signal: retry.signal,
  }), retry);
  await created.body?.cancel();
  const location = created.headers.get('location');
  if (!location) throw new ClientError('the server created an upload but did not say where (no Location)', EXIT.FAILED);
  const url = new URL(location, api.target.url).pathname;
  let offset = 0;
  try {
    for (;;) {
      const last = next === null;
      hash.update(block);
      const start = offset;
      const headers: Record<string, string> = { ...TUS, 'content-type': 'application/offset+octet-stream' };
      if (last) {
        headers['upload-length'] = String(start + block.length);
        headers['repr-digest'] = contentDigest(hash.copy().digest());
      }
      let dirty = false;
      offset = await withRetry(async () => {
        let from = start;
        if (dirty) {
          const head = await api.request('HEAD', url, { headers: TUS, signal: retry.signal });
          from = Number(head.headers.get('upload-offset'));
          if (!Number.isSafeInteger(from) || from < start) throw new ClientError(`${path}: the server lost bytes of the stream it had acknowledged; nothing was stored`, EXIT.FAILED);
          if (from === start + block.length && !last) return from;
        }
        dirty = true;
        const response = await api.stream('PATCH', url, {
          headers: { ...headers, 'upload-offset': String(from), 'content-length': String(start + block.length - from) },
          body: block.subarray(from - start), signal: retry.signal, accept: [409],
        });
        discard(response.body);
        if (response.status === 409) {
          const after = retryAfterOf(response.headers.get('retry-after'));
          throw new ClientError(`${path}: the upload is busy`, EXIT.CONFLICT, { status: 409, retryable: true, ...(after === undefined ? {} : { retryAfter: after }) });
        }
        return Number(response.headers.get('upload-offset'));
      }, retry);
      if (last) break;
      block = next!;
      next = await after(block);
    }
  } catch (err) {
    await api.request('DELETE', url, { headers: TUS, accept: [404, 410] }).then((r) => r.body?.cancel(), () => {});
    throw err;
  }
  const sha256 = hash.digest();
  const state = await withRetry(() => api.json<{ object: null | { metadata: ObjectRecord } }>('GET', url, { signal: retry.signal }), retry);
  if (!state.object) throw new ClientError(`${path}: the server has all bytes but did not make the data object`, EXIT.FAILED);
  verify(path, sha256, state.object.metadata.checksum);
  return { path, size: offset, sha256: sha256.toString('hex'), pid: state.object.metadata.PID };
}
