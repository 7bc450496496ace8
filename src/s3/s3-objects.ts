/**
 * How S3's names map onto lading's namespace, for the S3 front: a bucket is a user's home
 * (`s3://alice/run1/x.csv` is `/<zone>/home/alice/run1/x.csv`), a key with `/` is a path below
 * it, and a key ending in `/` names a collection. Also the ETag S3 clients check. Every path
 * is made by `core/path.ts`; nothing here reads or writes the catalog.
 */
import { type Path, parsePath } from '../core/path.ts';
import { checksumDigest } from '../core/meter.ts';
import type { DataObject } from '../core/types.ts';
import { S3Error } from './s3-errors.ts';

/** Longest key S3 accepts, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** The entity a key names: its path, and whether the key named a collection (ends in `/`). */
export interface KeyTarget {
  path: Path;
  folder: boolean;
}

/**
 * The path of `key` in the bucket whose collection is `bucket`. Throws `S3Error` for an empty
 * or too long key and for one with an empty segment (`a//b`), which would alias another key;
 * `INVALID_PATH` (from the path parser) for `.`/`..` segments or refused characters.
 */
export function keyTarget(bucket: Path, key: string): KeyTarget {
  if (key === '') throw new S3Error('InvalidArgument', 'The key must not be empty.');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new S3Error('KeyTooLongError', `Your key is longer than ${MAX_KEY_BYTES} bytes.`);
  const folder = key.endsWith('/');
  const segments = (folder ? key.slice(0, -1) : key).split('/');
  if (segments.some((s) => s === '')) throw new S3Error('InvalidArgument', `The key '${key}' has an empty segment ('//' or a leading '/'), which lading cannot store apart from the key without it.`);
  return { path: parsePath(`${bucket}/${segments.join('/')}`), folder };
}

/** The key of the entity at `path` in the bucket `bucket` (a collection's ends in `/`). */
export function keyOf(bucket: Path, path: string, collection: boolean): string {
  return path.slice(bucket.length + 1) + (collection ? '/' : '');
}

/** The MD5 of no bytes: the ETag of a collection written as a zero-byte key ending in `/`. */
export const EMPTY_MD5 = 'd41d8cd98f00b204e9800998ecf8427e';

/**
 * The ETag of a data object, quoted: its recorded MD5 (or multipart tag); for an object stored
 * without one (by the API), 32 hex digits of its SHA-256 with `-1`, which S3 clients take for a
 * multipart tag and so do not compare with an MD5 of the bytes.
 */
export function etagOf(object: DataObject): string {
  return `"${object.etag ?? `${checksumDigest(object.checksum).toString('hex').slice(0, 32)}-1`}"`;
}

/** Compares two strings in UTF-8 byte order, the order of S3's listings and of the catalog. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * A string that sorts just before every string starting with `prefix` (for a listing that
 * starts after a bound); null for an empty prefix or one ending in a surrogate.
 */
export function justBefore(prefix: string): string | null {
  if (prefix === '') return null;
  const last = prefix.charCodeAt(prefix.length - 1);
  if (last === 0 || (last >= 0xd800 && last <= 0xdfff)) return null;
  return `${prefix.slice(0, -1)}${String.fromCharCode(last - 1)}\u{10FFFF}`;
}
