/**
 * The one place where backend paths are parsed and validated. Everything else handles the
 * branded `Path` type, which can only be made here, so a path that reaches a driver is always
 * absolute, clean (no empty, `.` or `..` segment, no trailing slash), valid UTF-8 and free of
 * control characters. Nothing in this module touches the file system.
 */
import { LadingError } from './errors.ts';

export type Path = string & { readonly __brand: 'Path' };

/** Longest name of one entity, in UTF-8 bytes (as most file systems allow). */
export const MAX_NAME_BYTES = 255;
/** Longest whole path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

export const ROOT = '/' as Path;

// NOTE: control characters are refused because names end up in HTTP headers
// (Content-Disposition), log lines and JSON; a newline in a name is never what a user meant.
const CONTROL = /[\u0000-\u001f\u007f]/;

function invalid(message: string): LadingError {
  return new LadingError('INVALID_PATH', message);
}

/**
 * Validates one entity name (a path segment): non-empty, not `.` or `..`, no `/`, no control
 * character or NUL, at most 255 UTF-8 bytes, and well-formed Unicode (no lone surrogate).
 * Rejects with `INVALID_PATH`. Used for rename targets and form file names too.
 */
export function parseName(name: string): string {
  if (typeof name !== 'string' || name.length === 0) throw invalid('A name must not be empty.');
  if (name === '.' || name === '..') throw invalid(`'${name}' is not allowed as a name.`);
  if (name.includes('/')) throw invalid('A name must not contain \'/\'.');
  if (CONTROL.test(name)) throw invalid('A name must not contain control characters or NUL.');
  if (!name.isWellFormed()) throw invalid('A name must be valid Unicode.');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    throw invalid(`A name must be at most ${MAX_NAME_BYTES} bytes long.`);
  }
  return name;
}

/**
 * Parses an already-decoded absolute path such as `/zone/home/alice/data.csv`. Repeated and
 * trailing slashes are cleaned away; `.` and `..` segments are refused (not resolved), so a
 * traversal attempt is an error rather than a different path. Rejects with `INVALID_PATH`.
 */
export function parsePath(raw: string): Path {
  if (typeof raw !== 'string' || !raw.startsWith('/')) throw invalid('A path must be absolute (start with \'/\').');
  const segments = raw.split('/').filter((s) => s.length > 0);
  return fromSegments(segments);
}

/**
 * Parses the percent-encoded path of a URL (the part after `/api/registered`), decoding each
 * segment on its own so that `%2F` can never introduce a separator and `%2e%2e` is caught as
 * `..`. Invalid percent-encoding or invalid UTF-8 rejects with `INVALID_PATH`.
 */
export function parseUrlPath(encoded: string): Path {
  const segments: string[] = [];
  for (const part of encoded.split('/')) {
    if (part.length === 0) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch (cause) {
      throw new LadingError('INVALID_PATH', 'The path is not valid percent-encoded UTF-8.', { cause });
    }
    segments.push(decoded);
  }
  return fromSegments(segments);
}

function fromSegments(segments: string[]): Path {
  for (const s of segments) parseName(s);
  const path = '/' + segments.join('/');
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) {
    throw invalid(`A path must be at most ${MAX_PATH_BYTES} bytes long.`);
  }
  return path as Path;
}

/** The last segment of a path; the root's name is the empty string. */
export function baseName(path: Path): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The parent collection of a path; the root is its own parent. */
export function parentOf(path: Path): Path {
  const i = path.lastIndexOf('/');
  return (i <= 0 ? '/' : path.slice(0, i)) as Path;
}

/** A child of `parent`; `name` is validated with `parseName`. */
export function childOf(parent: Path, name: string): Path {
  parseName(name);
  return (parent === '/' ? `/${name}` : `${parent}/${name}`) as Path;
}

/** Every ancestor of `path` from the root down, then `path` itself. */
export function lineage(path: Path): Path[] {
  const out: Path[] = [ROOT];
  if (path === ROOT) return out;
  let acc = '';
  for (const s of path.slice(1).split('/')) {
    acc += '/' + s;
    out.push(acc as Path);
  }
  return out;
}

/** True when `path` is `ancestor` or lies below it. */
export function isWithin(path: Path, ancestor: Path): boolean {
  if (ancestor === ROOT) return true;
  return path === ancestor || path.startsWith(ancestor + '/');
}
