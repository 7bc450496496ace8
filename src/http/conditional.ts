/**
 * HTTP range and conditional-request rules (RFC 9110 §13, §14) for downloads, as pure
 * functions of request headers and the object's validators.
 */
import { LadingError } from '../core/errors.ts';
import type { ByteRange } from '../core/ports.ts';

export interface Validators {
  etag: string;
  lastModified: Date;
  size: number;
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function etagListMatches(list: string, etag: string, weak: boolean): boolean {
  if (list.trim() === '*') return true;
  const strip = (t: string) => (weak ? t.replace(/^W\//, '') : t);
  return list.split(',').map((t) => t.trim()).some((t) => strip(t) === etag);
}

function seconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}

/**
 * Evaluates If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since in the RFC's
 * order. Returns 'not-modified' (send 304) or 'proceed'; throws `PRECONDITION_FAILED`.
 */
export function evaluatePreconditions(headers: Headers, v: Validators): 'not-modified' | 'proceed' {
  const ifMatch = header(headers, 'if-match');
  if (ifMatch !== undefined) {
    if (!etagListMatches(ifMatch, v.etag, false)) throw new LadingError('PRECONDITION_FAILED', 'If-Match does not match the object\'s ETag.');
  } else {
    const ius = header(headers, 'if-unmodified-since');
    const t = ius ? Date.parse(ius) : NaN;
    if (!Number.isNaN(t) && seconds(v.lastModified) > Math.floor(t / 1000)) {
      throw new LadingError('PRECONDITION_FAILED', 'The object was modified after If-Unmodified-Since.');
    }
  }
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    if (etagListMatches(ifNoneMatch, v.etag, true)) return 'not-modified';
  } else {
    const ims = header(headers, 'if-modified-since');
    const t = ims ? Date.parse(ims) : NaN;
    if (!Number.isNaN(t) && seconds(v.lastModified) <= Math.floor(t / 1000)) return 'not-modified';
  }
  return 'proceed';
}

/**
 * The single byte range a `Range` header asks for, or undefined for the whole object (no
 * header, a syntax this server ignores, several ranges, or an If-Range that no longer holds).
 * Throws `RANGE_NOT_SATISFIABLE` (with `size`) when the range lies outside the object.
 */
export function selectRange(headers: Headers, v: Validators): ByteRange | undefined {
  const range = header(headers, 'range');
  if (!range) return undefined;
  const ifRange = header(headers, 'if-range');
  if (ifRange !== undefined) {
    const holds = ifRange.startsWith('"') || ifRange.startsWith('W/')
      ? ifRange === v.etag
      : Date.parse(ifRange) >= seconds(v.lastModified) * 1000;
    if (!holds) return undefined;
  }
  const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const unsatisfiable = () => new LadingError('RANGE_NOT_SATISFIABLE', `The range '${range}' lies outside the object of ${v.size} bytes.`, { details: { size: v.size } });
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || v.size === 0) throw unsatisfiable();
    return { start: Math.max(0, v.size - suffix), end: v.size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? v.size - 1 : Math.min(Number(m[2]), v.size - 1);
  if (start >= v.size) throw unsatisfiable();
  if (end < start) return undefined;
  return { start, end };
}

/** `Content-Disposition: attachment` with an ASCII fallback and the RFC 6266 UTF-8 form. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())}`;
}

/**
 * SHA-256 and MD5 digests a client announced for an upload body: `Content-Digest` /
 * `Repr-Digest` (RFC 9530, `sha-256=:<base64>:`) and `Content-MD5`. Other algorithms are
 * ignored. `BAD_REQUEST` for a malformed value or two sha-256 values that disagree.
 */
export function announcedDigests(headers: Headers): { sha256?: Buffer; md5?: Buffer } {
  const out: { sha256?: Buffer; md5?: Buffer } = {};
  for (const name of ['content-digest', 'repr-digest'] as const) {
    const digest = announcedSha256(headers, name);
    if (!digest) continue;
    if (out.sha256 && !out.sha256.equals(digest)) throw new LadingError('BAD_REQUEST', 'Content-Digest and Repr-Digest announce different sha-256 values.');
    out.sha256 = digest;
  }
  const md5 = header(headers, 'content-md5');
  if (md5 !== undefined) {
    const digest = /^[A-Za-z0-9+/]{22}==$/.test(md5.trim()) ? Buffer.from(md5.trim(), 'base64') : null;
    if (!digest || digest.length !== 16) throw new LadingError('BAD_REQUEST', 'Content-MD5 must be the base64 of a 16-byte MD5 digest.');
    out.md5 = digest;
  }
  return out;
}

/**
 * The sha-256 member of the RFC 9530 digest header `name` (`sha-256=:<base64>:`, other
 * algorithms ignored), or undefined when there is none. `BAD_REQUEST` for a malformed value
 * or two sha-256 members that disagree.
 */
export function announcedSha256(headers: Headers, name: 'content-digest' | 'repr-digest'): Buffer | undefined {
  const value = header(headers, name);
  if (!value) return undefined;
  let out: Buffer | undefined;
  for (const member of value.split(',')) {
    const m = /^\s*([A-Za-z0-9_.*-]+)\s*=\s*:([A-Za-z0-9+/]*={0,2}):\s*$/.exec(member);
    if (!m) throw new LadingError('BAD_REQUEST', `The ${name} header is malformed; expected sha-256=:<base64>:.`);
    if (m[1]!.toLowerCase() !== 'sha-256') continue;
    const digest = Buffer.from(m[2]!, 'base64');
    if (digest.length !== 32) throw new LadingError('BAD_REQUEST', `The sha-256 value in ${name} is not 32 bytes long.`);
    if (out && !out.equals(digest)) throw new LadingError('BAD_REQUEST', `The ${name} header announces different sha-256 values.`);
    out = digest;
  }
  return out;
}
