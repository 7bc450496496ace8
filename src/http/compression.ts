/**
 * Compressed text answers: JSON, HTML, JavaScript, CSS and XML go out with Brotli or gzip when
 * the client's `Accept-Encoding` asks for one, at a level cheap enough that a metadata GET or a
 * listing is no slower for it (bench/README.md); a streamed answer (a listing) is compressed as
 * it streams, never gathered first; the app's assets are compressed once, at the best level
 * (`keepCompressed`). The bytes of data objects are never compressed: they go
 * out as `application/octet-stream` with a `Content-Disposition` (see `download.ts`), often
 * hijacked past every hook, and are mostly compressed already; archives are `application/zip`.
 * An answer compressed here keeps its ETag as a weak one (as nginx does), since its bytes are
 * not the uncompressed answer's.
 */
import { Readable } from 'node:stream';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';

/** The types compressed: the API's JSON, the pages, the app's script and style, XML. */
const COMPRESSIBLE = /^(?:application\/(?:json|javascript|xml|problem\+json|[\w.+-]+\+(?:json|xml))|text\/(?:html|css|javascript|plain|xml|csv)|image\/svg\+xml)\s*(?:;|$)/i;

/** Below this many bytes an answer goes as it is: the headers would outweigh the gain. */
const MIN_BYTES = 1024;

/**
 * Brotli quality 4 and gzip level 4 for answers made per request: about a fifth of a JSON
 * listing's bytes at a small part of its CPU (bench/README.md).
 */
const BROTLI_QUALITY = 4;
const GZIP_LEVEL = 4;

type Coding = 'br' | 'gzip';

/** What `accept` (an Accept-Encoding header) allows: Brotli first, then gzip; null for neither. */
export function chooseCoding(accept: string | undefined): Coding | null {
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
  if (br) return 'br';
  if (gz || star) return 'gzip';
  return null;
}

const brotliOnce = promisify(brotliCompress);
const gzipOnce = promisify(gzip);

/** Compressed copies of the buffers `keepCompressed` named, by coding. */
const kept = new WeakMap<Buffer, Partial<Record<Coding, Buffer>>>();

/**
 * Marks `body` as answered again and again unchanged (the app's script and style): it is
 * compressed once, at the best level, and the result kept as long as `body` is.
 */
export function keepCompressed(body: Buffer): Buffer {
  if (!kept.has(body)) kept.set(body, {});
  return body;
}

async function compressBuffer(body: Buffer, coding: Coding): Promise<Buffer> {
  const memo = kept.get(body);
  const known = memo?.[coding];
  if (known) return known;
  const keep = memo !== undefined;
  const quality = keep ? constants.BROTLI_MAX_QUALITY : BROTLI_QUALITY;
  const out = coding === 'br'
    ? await brotliOnce(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : await gzipOnce(body, { level: keep ? 9 : GZIP_LEVEL });
  if (keep) kept.set(body, { ...memo, [coding]: out });
  return out;
}

function compressStream(body: Readable, coding: Coding): Readable {
  const zip = coding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : createGzip({ level: GZIP_LEVEL });
  // NOTE: a failure of the source (a listing cut by the catalog) must cut the answer, as it
  // would uncompressed: destroying the compressor with the error makes Fastify end the socket.
  body.on('error', (err) => zip.destroy(err));
  return body.pipe(zip);
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
    const coding = chooseCoding(request.headers['accept-encoding']);
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
