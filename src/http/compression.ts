/**
 * Compressed text answers: JSON, HTML, JavaScript, CSS and XML go out with gzip (or Brotli) when
 * the client's `Accept-Encoding` asks for one, at a level cheap enough that a metadata GET or a
 * listing is no slower for it (bench/README.md); a streamed answer (a listing) is compressed as
 * it streams, never gathered first; the app's assets are compressed once, at the best level
 * (`keepCompressed`). The bytes of data objects are never compressed: they go
 * out as `application/octet-stream` with a `Content-Disposition` (see `download.ts`), often
 * hijacked past every hook, and are mostly compressed already; archives are `application/zip`.
 * An answer compressed here keeps its ETag as a weak one (as nginx does), since its bytes are
 * not the uncompressed answer's.
 */
import { Readable, pipeline } from 'node:stream';
import { brotliCompress, brotliCompressSync, constants, createBrotliCompress, createGzip, gzip, gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';

/** The types compressed: the API's JSON, the pages, the app's script and style, XML. */
const COMPRESSIBLE = /^(?:application\/(?:json|javascript|xml|problem\+json|[\w.+-]+\+(?:json|xml))|text\/(?:html|css|javascript|plain|xml|csv)|image\/svg\+xml)\s*(?:;|$)/i;

/** Below this many bytes an answer goes as it is: the headers would outweigh the gain. */
const MIN_BYTES = 1024;

/**
 * gzip level 1 for answers made per request, Brotli quality 1 for a client that takes only
 * Brotli: a 1,000-entry JSON listing (410 KiB) goes to 36 KiB in ~2 ms of CPU with gzip (Brotli
 * q1: 33 KiB in ~6.5 ms; q4: 27 KiB in ~37 ms), against ~27 ms to make the listing
 * (bench/README.md). The app's assets, compressed once, get Brotli's best.
 */
const BROTLI_QUALITY = 1;
const GZIP_LEVEL = 1;

/** Below this size a body is compressed at once on the event loop, cheaper than a trip to the thread pool. */
const SYNC_BYTES = 64 * 1024;

/** A streamed answer is compressed in pieces of about this size, not chunk by chunk (a listing's are one entry each). */
const PIECE_BYTES = 64 * 1024;

type Coding = 'br' | 'gzip';

/**
 * What `accept` (an Accept-Encoding header) allows, by the cost of making it: gzip first for
 * answers made per request (`cheap`), Brotli first for kept ones; null for neither.
 */
export function chooseCoding(accept: string | undefined, prefer: 'cheap' | 'small' = 'small'): Coding | null {
  if (!accept) return null;
  let br = false;
  let gz = false;
  let star = false;
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find((m) => m)?.[1];
    const ok = q === undefined || Number(q) > 0;
    if (name === 'br') br = ok;
    else if (name === 'gzip' || name === 'x-gzip') gz = ok;
    else if (name === '*') star = ok;
  }
  if (prefer === 'cheap' && (gz || star)) return 'gzip';
  if (br) return 'br';
  if (gz || star) return 'gzip';
  return null;
}

const brotliOnce = promisify(brotliCompress);
const gzipOnce = promisify(gzip);

/** Compressed copies of the buffers `keepCompressed` named, by coding. */
const keptBodies = new WeakMap<Buffer, Partial<Record<Coding, Buffer>>>();

/**
 * Marks `body` as answered again and again unchanged (the app's script and style): it is
 * compressed once, at the best level, and the result kept as long as `body` is.
 */
export function keepCompressed(body: Buffer): Buffer {
  if (!keptBodies.has(body)) keptBodies.set(body, {});
  return body;
}

async function compressBuffer(body: Buffer, coding: Coding): Promise<Buffer> {
  const memo = keptBodies.get(body);
  const known = memo?.[coding];
  if (known) return known;
  const keep = memo !== undefined;
  const brotli = { params: { [constants.BROTLI_PARAM_QUALITY]: keep ? constants.BROTLI_MAX_QUALITY : BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } };
  const level = { level: keep ? 9 : GZIP_LEVEL };
  let out: Buffer;
  if (!keep && body.length < SYNC_BYTES) out = coding === 'br' ? brotliCompressSync(body, brotli) : gzipSync(body, level);
  else out = coding === 'br' ? await brotliOnce(body, brotli) : await gzipOnce(body, level);
  if (keep) keptBodies.set(body, { ...memo, [coding]: out });
  return out;
}

/** `source`'s chunks gathered into pieces of at least `size` bytes (the last one smaller). */
async function* pieces(source: Readable, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk as Buffer;
    parts.push(b);
    length += b.length;
    if (length >= size) {
      yield Buffer.concat(parts, length);
      parts = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(parts, length);
}

function compressStream(body: Readable, coding: Coding): Readable {
  const zip = coding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : createGzip({ level: GZIP_LEVEL });
  // NOTE: each write to a compressor is a trip to the thread pool: a listing's one-entry
  // chunks go in 64 KiB pieces. A failure of the source (a listing cut by the catalog) destroys
  // the compressor with it, which cuts the answer as it would uncompressed; a client that goes
  // away destroys the compressor, and with it the source.
  pipeline(Readable.from(pieces(body, PIECE_BYTES)), zip, () => {});
  return zip;
}

/**
 * Compresses the text answers of `app` as the module says. Register it after every other
 * onSend hook that reads a payload (the response check), as it replaces the payload.
 */
export function registerCompression(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload: unknown) => {
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return payload;
    // NOTE: whether or not this one is, the answer at this URL may be compressed for another client.
    const vary = reply.getHeader('vary');
    if (!vary) reply.header('Vary', 'Accept-Encoding');
    else if (!/accept-encoding|\*/i.test(String(vary))) reply.header('Vary', `${String(vary)}, Accept-Encoding`);
    if (payload === null || payload === undefined || reply.statusCode === 204 || reply.statusCode === 304 || reply.statusCode === 206) return payload;
    if (reply.getHeader('content-encoding') || reply.getHeader('content-disposition') || /no-transform/i.test(String(reply.getHeader('cache-control') ?? ''))) return payload;
    const kept = Buffer.isBuffer(payload) && keptBodies.has(payload);
    const coding = chooseCoding(request.headers['accept-encoding'], kept ? 'small' : 'cheap');
    if (!coding) return payload;
    let out: Buffer | Readable;
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
      if (body.length < MIN_BYTES) return payload;
      out = await compressBuffer(body, coding);
    } else if (payload instanceof Readable) {
      out = compressStream(payload, coding);
    } else {
      return payload;
    }
    reply.header('Content-Encoding', coding);
    reply.removeHeader('content-length');
    const etag = reply.getHeader('etag');
    if (typeof etag === 'string' && !etag.startsWith('W/')) reply.header('ETag', `W/${etag}`);
    return out;
  });
}
