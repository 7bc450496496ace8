/**
 * One file up to the server, verified end to end: a streamed `PUT` with `Content-Digest` for
 * files up to the resumable threshold, the tus 1.0 protocol at `/api/uploads` above it (and for
 * any file whose earlier upload can be continued), its bytes hashed as they are sent. Either
 * way the server checks the file's SHA-256 before it makes the data object (`Content-Digest`;
 * `Repr-Digest` on the last tus request), and the checksum of the stored object must equal the
 * SHA-256 read here, else `INTEGRITY`. Never holds a file in memory beyond one block (small files: one read).
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { type ApiClient, type RetryOptions, discard, retryAfterOf, withRetry } from '../api.ts';
import { ClientError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { contentDigest, digestOfChecksum, hashRange, sha256File } from './digest.ts';
import type { ResumeKey, ResumeStore } from './resume-store.ts';
import type { Throttle } from './throttle.ts';
import { remoteStat } from './trees.ts';

/** What a transfer reports while it runs. */
export interface TransferContext {
  api: ApiClient;
  signal: AbortSignal;
  /** Bytes of this file done so far (absolute: after a retry it may go back). */
  onBytes(done: number): void;
  /** This file begins at `done` bytes that are there already (resumed, identical): not moved now. */
  onBase(done: number): void;
  onRetry(err: ClientError, waitMs: number): void;
  /** How requests are retried: tries, pauses, this signal and `onRetry`. */
  retry: RetryOptions;
  /** The run's bandwidth limit (`--bwlimit`), when it has one. */
  throttle?: Throttle;
}

/** How one file ended. `identical`: it was there already, with the same checksum. */
export interface Outcome {
  status: 'sent' | 'identical';
  size: number;
  sha256: Buffer;
  pid: string | null;
  /** Bytes sent or received over the network by this run. */
  transferred: number;
  /** Where a resumed transfer began (0 when it started from scratch). */
  resumedFrom: number;
}

export interface UploadJob {
  local: string;
  remote: string;
  size: number;
  mtimeMs: number;
  force: boolean;
  pidAwait: boolean;
  /** The local SHA-256 when it was computed already (`--sync`). */
  sha256?: Buffer;
}

export interface UploadOptions {
  /** Files larger than this go through the resumable endpoint. */
  resumableAbove: number;
  /** Bytes per tus request: what a broken request costs at most. */
  chunkBytes: number;
  store: ResumeStore;
}

/** Files up to this size are read in one go: cheaper than two passes, and bounded by jobs × this. */
const INLINE_BYTES = 256 * 1024;
const TUS = { 'tus-resumable': '1.0.0' };
/** Bytes per read of a file being sent. */
const READ_BYTES = 1 << 20;

interface UploadState {
  state: string;
  offset: number;
  object: null | Record<string, unknown> & { metadata: { PID: string | null; checksum: string | null } };
}

function changed(file: string): ClientError {
  return new ClientError(`${file} changed while it was being uploaded; nothing was stored: run the command again once it is complete`, EXIT.FAILED);
}

/** Yields `source`'s chunks, reporting the running count to `onBytes` (from `base`), at the rate `ctx.throttle` allows. */
async function* counted(source: AsyncIterable<Buffer>, base: number, onBytes: (n: number) => void, sent: { n: number }, ctx?: TransferContext): AsyncGenerator<Buffer> {
  let n = base;
  for await (const chunk of source) {
    if (ctx?.throttle) await ctx.throttle.take(chunk.length, ctx.signal);
    n += chunk.length;
    sent.n += chunk.length;
    onBytes(n);
    yield chunk;
  }
}

/** Yields `source`'s chunks after feeding them to `hash`: what is sent is what is hashed. */
async function* hashed(source: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    hash.update(chunk);
    yield chunk;
  }
}

/**
 * Rejects when the file's size or modification time is no longer what the upload began with:
 * hashing while sending cannot see a byte changed behind the part already sent.
 */
async function unchanged(job: UploadJob): Promise<void> {
  const now = await stat(job.local).catch(() => null);
  if (!now || now.size !== job.size || now.mtimeMs !== job.mtimeMs) throw changed(job.local);
}

/**
 * Before the request that would commit a resumable upload: when the file changed since it was
 * listed, the upload is removed on the server and forgotten here, and `changed` rejects.
 */
async function abandonIfChanged(ctx: TransferContext, job: UploadJob, url: string, store: ResumeStore, key: ResumeKey, sha256: Buffer): Promise<void> {
  try {
    await unchanged(job);
    // The SHA-256 `--sync` compared (read earlier) is the one of the bytes to commit.
    if (job.sha256 && !job.sha256.equals(sha256)) throw changed(job.local);
  } catch (err) {
    await ctx.api.request('DELETE', pathOf(url), { headers: TUS, signal: ctx.signal, accept: [404, 410] }).then((r) => r.body?.cancel(), () => {});
    await store.delete(key);
    throw err;
  }
}

/** A 400 about a digest: the bytes the server got are not the bytes announced. */
function integrityOf(err: unknown, file: string): unknown {
  if (err instanceof ClientError && err.status === 400 && /digest/i.test(err.message)) {
    return new ClientError(`${file}: ${err.message} (the file changed or was damaged on the way)`, EXIT.INTEGRITY, { status: 400 });
  }
  return err;
}

/**
 * After a 409 without force: `identical` when the object there has the local checksum, else
 * `CONFLICT` telling how to overwrite.
 */
async function existing(ctx: TransferContext, job: UploadJob, sha256: Buffer, message: string): Promise<Outcome> {
  const there = await remoteStat(ctx.api, job.remote, ctx.signal);
  if (there?.kind === 'dataobject' && digestOfChecksum(there.checksum)?.equals(sha256)) {
    ctx.onBase(job.size);
    return { status: 'identical', size: job.size, sha256, pid: there.pid, transferred: 0, resumedFrom: 0 };
  }
  const said = message.replace(/ Use force=true to overwrite it\.$/, '');
  throw new ClientError(`${said.includes(job.remote) ? '' : `${job.remote}: `}${said} (--force overwrites it, --sync replaces it when it differs)`, EXIT.CONFLICT, { status: 409 });
}

function verify(job: UploadJob, sha256: Buffer, checksum: string | null | undefined): void {
  const theirs = digestOfChecksum(checksum);
  if (!theirs || !theirs.equals(sha256)) {
    throw new ClientError(`${job.remote}: the server stored checksum ${checksum ?? 'none'}, but ${job.local} has sha2:${sha256.toString('base64')}; put it again with --force to replace what was stored`, EXIT.INTEGRITY);
  }
}

/** Uploads one file; see the module comment. */
export async function uploadFile(ctx: TransferContext, job: UploadJob, options: UploadOptions): Promise<Outcome> {
  const key: ResumeKey = { server: ctx.api.target.url, local: job.local, remote: job.remote, size: job.size, mtimeMs: job.mtimeMs };
  const record = job.size > 0 ? await options.store.get(key) : null;
  if (job.size > options.resumableAbove || record) return uploadResumable(ctx, job, options, key, record?.url ?? null);
  return uploadSimple(ctx, job);
}

async function uploadSimple(ctx: TransferContext, job: UploadJob): Promise<Outcome> {
  const { api } = ctx;
  let inline: Buffer | null = null;
  let sha256 = job.sha256;
  if (job.size <= INLINE_BYTES) {
    inline = await readFile(job.local);
    if (inline.length !== job.size) throw changed(job.local);
    sha256 = createHash('sha256').update(inline).digest();
  } else {
    sha256 ??= await sha256File(job.local, job.size);
  }
  // NOTE: unchanged since it was listed means the bytes just hashed are one state of the file;
  // the request that commits carries their digest, so bytes read later that differ are refused
  // by the server: what is committed is the file as it was here, never a mixture or a prefix.
  await unchanged(job);
  const digest = sha256;
  if (!inline && !job.force) {
    // NOTE: a server refuses an existing target before it reads the body and closes the
    // connection while the body is still being sent (EPIPE here): look first.
    const there = await withRetry(() => remoteStat(api, job.remote, ctx.signal), ctx.retry);
    if (there) return existing(ctx, job, digest, there.kind === 'collection' ? 'A collection of that name exists.' : 'A data object of that name exists.');
  }
  const query = [job.force ? 'force=true' : '', job.pidAwait ? 'pid_await=true' : ''].filter(Boolean).join('&');
  const sent = { n: 0 };
  return withRetry(async () => {
    ctx.onBytes(0);
    const url = `${api.registeredUrl(job.remote)}${query ? `?${query}` : ''}`;
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(job.size), 'content-digest': contentDigest(digest) };
    let status: number;
    let text: string;
    try {
      // NOTE: small files too go through `stream` (undici's request API): fetch costs about
      // a third of the client's CPU per small file.
      if (inline) await ctx.throttle?.take(inline.length, ctx.signal);
      const body = inline ?? counted(createReadStream(job.local, { start: 0, end: job.size - 1, highWaterMark: READ_BYTES }), 0, ctx.onBytes, sent, ctx);
      const response = await api.stream('PUT', url, { headers, body, signal: ctx.signal, accept: job.force ? [] : [409] });
      status = response.status;
      text = await textOf(response.body);
      if (inline) sent.n += inline.length;
    } catch (err) {
      throw integrityOf(err, job.local);
    }
    if (status === 409) return existing(ctx, job, digest, messageOf(text));
    const data = (JSON.parse(text) as { Response: { data: { PID: string | null; checksum: string } } }).Response.data;
    verify(job, digest, data.checksum);
    ctx.onBytes(job.size);
    return { status: 'sent' as const, size: job.size, sha256: digest, pid: data.PID, transferred: sent.n, resumedFrom: 0 };
  }, ctx.retry);
}

/** A response body as text. */
async function textOf(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function messageOf(text: string): string {
  try {
    const errors = (JSON.parse(text) as { Response: { errors: Record<string, string>[] } }).Response.errors;
    return errors.flatMap((e) => Object.values(e)).join('; ');
  } catch {
    return 'it exists already';
  }
}

/** The path part of an upload URL (the server's own: the client keeps one base URL). */
function pathOf(url: string): string {
  return new URL(url).pathname;
}

/** The upload's offset, or null when the server no longer has it (or it is for another length). */
async function headOffset(ctx: TransferContext, url: string, size: number): Promise<number | null> {
  const response = await ctx.api.request('HEAD', pathOf(url), { headers: TUS, signal: ctx.signal, accept: [404, 410] });
  if (response.status !== 200) return null;
  const offset = Number(response.headers.get('upload-offset'));
  if (Number(response.headers.get('upload-length')) !== size || !Number.isSafeInteger(offset)) return null;
  return offset;
}

async function uploadResumable(ctx: TransferContext, job: UploadJob, options: UploadOptions, key: ResumeKey, remembered: string | null): Promise<Outcome> {
  const { api } = ctx;
  const retry = ctx.retry;
  let url = remembered;
  let offset = 0;
  if (url) {
    const at = await withRetry(() => headOffset(ctx, url!, job.size), retry);
    if (at === null) {
      await options.store.delete(key);
      url = null;
    } else {
      offset = at;
    }
  }
  if (!url) {
    const metadata = [`path ${Buffer.from(job.remote).toString('base64')}`];
    if (job.force) metadata.push(`force ${Buffer.from('true').toString('base64')}`);
    const created = await withRetry(() => api.request('POST', '/api/uploads', {
      headers: { ...TUS, 'upload-length': String(job.size), 'upload-metadata': metadata.join(',') },
      signal: ctx.signal, accept: job.force ? [] : [409],
    }), retry);
    const text = await created.text();
    if (created.status === 409) return existing(ctx, job, job.sha256 ?? await sha256File(job.local, job.size), messageOf(text));
    const location = created.headers.get('location');
    if (!location) throw new ClientError('the server created an upload but did not say where (no Location)', EXIT.FAILED);
    url = new URL(location, api.target.url).href;
    await options.store.put(key, url);
  }
  // NOTE: where the first request this run sent was taken, not the offset first asked: a
  // request a killed run left may still add the bytes it brought up to its end meanwhile
  // (the server keeps them, and answers 409 until it is done).
  let resumedFrom: number | null = null;
  // The SHA-256 of the whole file as far as the server acknowledged it.
  let whole = createHash('sha256');
  await hashRange(job.local, 0, offset, [whole]);
  ctx.onBase(offset);
  const sent = { n: 0 };
  let dirty = false;
  let mismatches = 0;
  while (offset < job.size) {
    const start = offset;
    const end = Math.min(job.size, start + options.chunkBytes);
    const last = end === job.size;
    // NOTE: the bytes are hashed as they are sent, and no request carries Upload-Checksum (it
    // would need every chunk read, and hashed, once more before its request; and the server
    // would then keep nothing of a request that broke off). The last request carries the
    // SHA-256 of the whole file instead (Repr-Digest), which the server checks before it makes
    // the data object: a byte damaged on any request is caught before anything is visible. Only
    // the last chunk is read twice for it.
    let pending = whole;
    const at = await withRetry(async () => {
      if (dirty) {
        const now = await headOffset(ctx, url, job.size);
        if (now === null) throw new ClientError(`${job.remote}: the server no longer has the upload; run the command again to start it anew`, EXIT.FAILED);
        dirty = false;
        if (now !== start) return now;
      }
      dirty = true;
      ctx.onBytes(start);
      pending = whole.copy();
      const headers: Record<string, string> = { ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(start), 'content-length': String(end - start) };
      if (last) {
        await hashRange(job.local, start, end, [pending]);
        const final = pending.copy().digest();
        headers['repr-digest'] = contentDigest(final);
        // NOTE: this request commits. The file unchanged since it was listed means every byte
        // sent so far, and the last ones just hashed, are one state of it (the last ones are
        // read again as they are sent, and the digest refuses them if they differ): a file
        // that grew or was rewritten is abandoned here, before anything is committed.
        await abandonIfChanged(ctx, job, url, options.store, key, final);
      }
      const read = counted(createReadStream(job.local, { start, end: end - 1, highWaterMark: READ_BYTES }), start, ctx.onBytes, sent, ctx);
      const response = await api.stream('PATCH', pathOf(url), {
        headers, body: last ? read : hashed(read, pending), signal: ctx.signal, accept: [409, 460],
      });
      if (response.status === 460) {
        const message = messageOf(await textOf(response.body));
        // NOTE: the damage may be in these last bytes (sending them again mends it) or in
        // bytes the server acknowledged earlier (nothing mends it): one more try, then the
        // upload goes, so that nothing damaged stays behind. Where the server could check only
        // the completed bytes, it has removed the upload itself.
        const open = await headOffset(ctx, url, job.size).catch(() => null) !== null;
        if (open && ++mismatches === 1) throw new ClientError(`${job.remote}: the server received bytes other than the file's (${message})`, EXIT.INTEGRITY, { status: 460, retryable: true });
        if (open) await api.request('DELETE', pathOf(url), { headers: TUS, signal: ctx.signal, accept: [404] }).catch(() => {});
        await options.store.delete(key);
        throw new ClientError(`${job.remote}: the server received bytes other than ${job.local}'s (${message}); the upload was removed and nothing was stored: run the command again`, EXIT.INTEGRITY);
      }
      discard(response.body);
      // NOTE: 409 is the offset moved or another request still holds the upload (the one
      // a killed run left, until the server sees its connection gone, or a lease a server
      // that restarted still holds): ask again after what the server says is left of that
      // request's lease, for as long as it says so (withRetry), else after a pause.
      if (response.status === 409) {
        const retryAfter = retryAfterOf(response.headers.get('retry-after'));
        throw new ClientError(`${job.remote}: the upload is busy`, EXIT.CONFLICT, { status: 409, retryable: true, ...(retryAfter === undefined ? {} : { retryAfter }) });
      }
      dirty = false;
      resumedFrom ??= start;
      return Number(response.headers.get('upload-offset'));
    }, retry);
    if (!Number.isSafeInteger(at) || at < 0 || at > job.size) throw new ClientError(`${job.remote}: the server answered an offset of ${at}`, EXIT.FAILED);
    if (at === end) {
      whole = pending;
    } else if (at >= start) {
      // The server kept part of this request (up to a checkpoint): hash on from `start`.
      await hashRange(job.local, start, at, [whole]);
    } else {
      // The server is behind where this run thought: hash again up to where it is.
      whole = createHash('sha256');
      await hashRange(job.local, 0, at, [whole]);
    }
    offset = at;
    ctx.onBytes(offset);
  }
  const sha256 = whole.digest();
  const state = await withRetry(() => api.json<UploadState>('GET', `${pathOf(url)}${job.pidAwait ? '?pid_await=true' : ''}`, { signal: ctx.signal }), retry);
  await options.store.delete(key);
  if (!state.object) throw new ClientError(`${job.remote}: the server has all bytes but did not make the data object`, EXIT.FAILED);
  verify(job, sha256, state.object.metadata.checksum);
  return { status: 'sent', size: job.size, sha256, pid: state.object.metadata.PID, transferred: sent.n, resumedFrom: resumedFrom ?? offset };
}
