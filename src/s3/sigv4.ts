/**
 * AWS Signature Version 4 for the S3 front, with `node:crypto` only: the signature of a request
 * in its `Authorization` header or in a presigned URL's query, the time window (15 minutes of
 * skew, as AWS allows; a presigned URL's own expiry, at most 7 days), and the per-chunk
 * signatures of `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` bodies, verified while the body streams.
 * It knows nothing of users: the caller looks the key id up and hands the secret in.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { S3Error } from './s3-errors.ts';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
export const STREAMING_PAYLOAD = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Largest skew between the client's clock and ours AWS accepts. */
export const MAX_SKEW_MS = 15 * 60_000;
/** Longest validity of a presigned URL (AWS: 7 days). */
export const MAX_PRESIGN_SECONDS = 7 * 86400;

/** What a request claims about its signature, parsed but not yet verified. */
export interface SignedRequest {
  keyId: string;
  /** `YYYYMMDD/region/s3/aws4_request`. */
  scope: string;
  date: string;
  region: string;
  /** `YYYYMMDDTHHMMSSZ`. */
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  /** The payload hash the signature covers: a hex SHA-256, `UNSIGNED-PAYLOAD` or a streaming mode. */
  payload: string;
  presigned: boolean;
  /** Seconds a presigned URL is valid for. */
  expires: number;
}

const CREDENTIAL = /^([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request$/;

/**
 * The signature claims of a request: from `Authorization: AWS4-HMAC-SHA256 …`, or from the
 * `X-Amz-*` query of a presigned URL; null when it carries neither (an anonymous request).
 * Throws `S3Error` for a malformed one.
 */
export function parseSignature(headers: IncomingHttpHeaders, query: URLSearchParams): SignedRequest | null {
  const auth = headers.authorization;
  if (auth !== undefined) {
    if (!auth.startsWith(`${ALGORITHM} `)) {
      if (auth.startsWith('AWS ')) throw new S3Error('InvalidRequest', 'Signature Version 2 is not supported; sign with AWS4-HMAC-SHA256 (Signature Version 4).');
      throw new S3Error('AuthorizationHeaderMalformed', `The authorization header is not ${ALGORITHM}.`);
    }
    const fields = new Map<string, string>();
    for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    const credential = fields.get('Credential');
    const signed = fields.get('SignedHeaders');
    const signature = fields.get('Signature');
    if (!credential || !signed || !signature) throw new S3Error('AuthorizationHeaderMalformed', 'The authorization header needs Credential, SignedHeaders and Signature.');
    const amzDate = header(headers, 'x-amz-date') ?? '';
    const payload = header(headers, 'x-amz-content-sha256');
    if (payload === undefined) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256.');
    return claims(credential, signed, signature, amzDate, payload, false, 0);
  }
  if (query.has('X-Amz-Signature') || query.has('X-Amz-Credential')) {
    if (query.get('X-Amz-Algorithm') !== ALGORITHM) throw new S3Error('AuthorizationQueryParametersError', `X-Amz-Algorithm must be ${ALGORITHM}.`);
    const expires = Number(query.get('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1) throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Expires must be a positive number of seconds.');
    if (expires > MAX_PRESIGN_SECONDS) throw new S3Error('AuthorizationQueryParametersError', `X-Amz-Expires must be less than a week (${MAX_PRESIGN_SECONDS} seconds).`);
    return claims(query.get('X-Amz-Credential') ?? '', query.get('X-Amz-SignedHeaders') ?? '', query.get('X-Amz-Signature') ?? '',
      query.get('X-Amz-Date') ?? '', header(headers, 'x-amz-content-sha256') ?? UNSIGNED_PAYLOAD, true, expires);
  }
  if (query.has('AWSAccessKeyId')) throw new S3Error('InvalidRequest', 'Signature Version 2 is not supported; presign with Signature Version 4.');
  return null;
}

function claims(credential: string, signed: string, signature: string, amzDate: string, payload: string, presigned: boolean, expires: number): SignedRequest {
  const m = CREDENTIAL.exec(credential);
  const problem = presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed';
  if (!m) throw new S3Error(problem, 'The credential must be <key id>/<date>/<region>/s3/aws4_request.');
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) throw new S3Error(presigned ? problem : 'AccessDenied', 'The request needs a valid X-Amz-Date (YYYYMMDDTHHMMSSZ).');
  if (!amzDate.startsWith(m[2]!)) throw new S3Error(problem, 'The date of the credential scope is not the date of X-Amz-Date.');
  if (!/^[0-9a-f]{64}$/.test(signature)) throw new S3Error(problem, 'The signature must be 64 hexadecimal digits.');
  const signedHeaders = signed.split(';');
  if (!signedHeaders.includes('host')) throw new S3Error(problem, 'The signed headers must include host.');
  return {
    keyId: m[1]!, date: m[2]!, region: m[3]!, scope: `${m[2]}/${m[3]}/s3/aws4_request`, amzDate, signedHeaders, signature, payload, presigned, expires,
  };
}

/** The instant of an `X-Amz-Date`. */
export function timeOf(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate)!;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/**
 * Throws `S3Error` unless `now` lies in the request's window: within `MAX_SKEW_MS` of its date
 * (a header signature), or after its date (less the skew) and before date + expiry (presigned).
 */
export function checkTime(claim: SignedRequest, now: number): void {
  const at = timeOf(claim.amzDate);
  if (claim.presigned) {
    if (at - now > MAX_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not valid yet.');
    if (now > at + claim.expires * 1000) throw new S3Error('AccessDenied', 'Request has expired.');
    return;
  }
  if (Math.abs(now - at) > MAX_SKEW_MS) throw new S3Error('RequestTimeTooSkewed', 'The difference between the request time and the server\'s time is too large.');
}

/** AWS's URI encoding: every byte but `A-Za-z0-9-_.~` as `%XX` (upper case); `/` kept when `path`. */
export function awsEncode(text: string, path = false): string {
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return path ? encoded.replace(/%2F/g, '/') : encoded;
}

/** Decodes `%XX` escapes (no `+` for space, as SigV4 clients never send one for it). Throws `S3Error` on bad escapes. */
export function awsDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Error('InvalidURI', 'The request URI holds an invalid percent-encoding.');
  }
}

/** The canonical URI of a raw request path: each segment decoded and encoded again, so any client's escaping signs alike. */
export function canonicalUri(rawPath: string): string {
  return rawPath.split('/').map((segment) => awsEncode(awsDecode(segment))).join('/');
}

/** The canonical query string of a raw query, without `X-Amz-Signature`. */
export function canonicalQuery(rawQuery: string): string {
  const pairs: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = awsDecode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : awsDecode(part.slice(eq + 1));
    if (key === 'X-Amz-Signature') continue;
    pairs.push([awsEncode(key), awsEncode(value)]);
  }
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The signing key of a secret for a scope's date and region. */
export function signingKey(secret: Buffer, date: string, region: string): Buffer {
  const kDate = createHmac('sha256', Buffer.concat([Buffer.from('AWS4'), secret])).update(date).digest();
  const kRegion = createHmac('sha256', kDate).update(region).digest();
  const kService = createHmac('sha256', kRegion).update('s3').digest();
  return createHmac('sha256', kService).update('aws4_request').digest();
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Verifies the request's signature with `secret`; throws `S3Error('SignatureDoesNotMatch')`
 * when it does not match. Returns the signing key and the seed signature of a streaming body.
 */
export function verifySignature(
  claim: SignedRequest, secret: Buffer, request: { method: string; rawPath: string; rawQuery: string; headers: IncomingHttpHeaders },
): { key: Buffer; signature: string } {
  const canonicalHeaders = claim.signedHeaders.map((name) => {
    const value = header(request.headers, name) ?? '';
    return `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
  }).join('');
  const canonical = [
    request.method, canonicalUri(request.rawPath), canonicalQuery(request.rawQuery), canonicalHeaders,
    claim.signedHeaders.join(';'), claim.presigned ? (header(request.headers, 'x-amz-content-sha256') ?? UNSIGNED_PAYLOAD) : claim.payload,
  ].join('\n');
  const toSign = [ALGORITHM, claim.amzDate, claim.scope, sha256Hex(canonical)].join('\n');
  const key = signingKey(secret, claim.date, claim.region);
  const expected = createHmac('sha256', key).update(toSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(claim.signature, 'hex'))) {
    throw new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
  return { key, signature: claim.signature };
}

/** Longest line of a chunk's header (`<hex size>;chunk-signature=<64 hex>`) or of a trailer. */
const MAX_CHUNK_LINE = 4096;

/**
 * Decodes an `aws-chunked` body into its data, as it streams. With `signing`, each chunk's
 * signature is checked against the previous one (the seed is the request's): a chunk whose
 * signature does not match fails the stream at its end, before the next one, so what was read
 * is never committed. Without it (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`), chunks carry no
 * signature. Trailing headers (`x-amz-checksum-*`) are handed to `onTrailer`. Fails with
 * `IncompleteBody` when the body ends inside a chunk or the decoded length differs from
 * `decodedLength`.
 */
export class ChunkedDecoder extends Transform {
  #signing: { key: Buffer; previous: string; amzDate: string; scope: string } | null;
  #decodedLength: number | null;
  #onTrailer: (name: string, value: string) => void;
  #state: 'header' | 'data' | 'crlf' | 'trailer' | 'done' = 'header';
  #line = '';
  #remaining = 0;
  #chunkSignature = '';
  #hash = createHash('sha256');
  #total = 0;

  constructor(options: {
    signing: { key: Buffer; seed: string; amzDate: string; scope: string } | null;
    decodedLength: number | null;
    onTrailer?: (name: string, value: string) => void;
  }) {
    super({ highWaterMark: 1 << 20 });
    const s = options.signing;
    this.#signing = s ? { key: s.key, previous: s.seed, amzDate: s.amzDate, scope: s.scope } : null;
    this.#decodedLength = options.decodedLength;
    this.#onTrailer = options.onTrailer ?? (() => {});
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      let at = 0;
      while (at < chunk.length) {
        if (this.#state === 'data') {
          const take = Math.min(this.#remaining, chunk.length - at);
          const piece = chunk.subarray(at, at + take);
          this.#hash.update(piece);
          this.#total += take;
          this.push(piece);
          this.#remaining -= take;
          at += take;
          if (this.#remaining === 0) this.#state = 'crlf';
          continue;
        }
        // NOTE: what follows the final empty line is ignored, as HTTP/1.1's chunked coding does.
        if (this.#state === 'done') break;
        const nl = chunk.indexOf(0x0a, at);
        const end = nl < 0 ? chunk.length : nl;
        this.#line += chunk.toString('latin1', at, end);
        if (this.#line.length > MAX_CHUNK_LINE) throw new S3Error('InvalidRequest', 'A chunk header of the body is too long.');
        at = end;
        if (nl < 0) break;
        at = nl + 1;
        const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
        this.#line = '';
        this.#onLine(line);
      }
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  #onLine(line: string): void {
    if (this.#state === 'crlf') {
      if (line !== '') throw new S3Error('InvalidRequest', 'A chunk of the body is longer than its header says.');
      this.#endChunk();
      this.#state = 'header';
      return;
    }
    if (this.#state === 'trailer') {
      if (line === '') {
        this.#state = 'done';
        return;
      }
      const colon = line.indexOf(':');
      if (colon > 0) this.#onTrailer(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      return;
    }
    const m = /^([0-9a-fA-F]{1,16})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(line);
    if (!m) throw new S3Error('InvalidRequest', 'A chunk header of the body is malformed.');
    if (this.#signing && m[2] === undefined) throw new S3Error('SignatureDoesNotMatch', 'A chunk of the body carries no signature.');
    this.#remaining = parseInt(m[1]!, 16);
    this.#chunkSignature = m[2] ?? '';
    if (this.#remaining === 0) {
      this.#endChunk();
      this.#state = 'trailer';
      return;
    }
    this.#state = 'data';
  }

  #endChunk(): void {
    const s = this.#signing;
    const digest = this.#hash.digest('hex');
    this.#hash = createHash('sha256');
    if (!s) return;
    const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', s.amzDate, s.scope, s.previous, EMPTY_SHA256, digest].join('\n');
    const expected = createHmac('sha256', s.key).update(toSign).digest();
    if (!timingSafeEqual(expected, Buffer.from(this.#chunkSignature, 'hex'))) {
      throw new S3Error('SignatureDoesNotMatch', 'The signature of a chunk of the body does not match.');
    }
    s.previous = this.#chunkSignature;
  }

  override _flush(cb: TransformCallback): void {
    // NOTE: a body ends with its zero-length chunk, its trailers and an empty line, which
    // `#onLine` turns into 'done' (the final CRLF may be missing: tolerated).
    if (this.#state !== 'done' && !(this.#state === 'trailer' && this.#line === '')) {
      cb(new S3Error('IncompleteBody', 'The chunked body ended before its last chunk.'));
      return;
    }
    if (this.#decodedLength !== null && this.#total !== this.#decodedLength) {
      cb(new S3Error('IncompleteBody', `The chunked body holds ${this.#total} bytes, not the ${this.#decodedLength} x-amz-decoded-content-length announced.`));
      return;
    }
    cb();
  }
}
