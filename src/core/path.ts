/**
 * The one place where backend paths are parsed and where the name rule (`name-rule.ts`, which
 * the web app shares) is applied. Everything
 * else handles the branded `Path` type, which can only be made here, so a path that reaches a
 * driver is always absolute, clean (no empty, `.` or `..` segment, no trailing slash), valid
 * UTF-8 and free of C0 control characters. Nothing in this module touches the file system.
 */
import { LadingError } from './errors.ts';
import { nameProblem } from './name-rule.ts';

export { MAX_NAME_BYTES, REFUSED_IN_NAMES, STORED_NAME_PATTERN } from './name-rule.ts';

export type Path = string & { readonly __brand: 'Path' };

/** Longest whole path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

export const ROOT = '/' as Path;

function invalid(message: string): LadingError {
  return new LadingError('INVALID_PATH', message);
}

/** The checks every segment of every path passes; `strict` adds the name rule's `new` characters. */
function checkName(name: string, strict: boolean): string {
  const problem = nameProblem(name, strict);
  if (problem !== null) throw invalid(problem);
  return name;
}

/**
 * Validates a name given to an entity now (a new data object or collection, a rename target,
 * a form's file name) against the name rule: non-empty, not `.` or `..`, no `/`, none of the
 * refused characters (C0 and C1 controls, DELETE, U+2028/U+2029, bidirectional controls,
 * U+FEFF), at most 255 UTF-8 bytes, well-formed Unicode. Rejects with `INVALID_PATH` whose
 * message names the refused character (`U+202E RIGHT-TO-LEFT OVERRIDE is not allowed in a name.`).
 */
export function parseName(name: string): string {
  return checkName(name, true);
}

/**
 * `path` when each of its last `count` segments (all of them with `Infinity`) obeys the name
 * rule of `parseName`: for a path about to be created, whose parents may be names stored before
 * the rule. Rejects with `INVALID_PATH` naming the refused character.
 */
export function parseNewPath(path: Path, count = 1): Path {
  const segments = path.split('/').filter((s) => s.length > 0);
  for (const s of segments.slice(Math.max(0, segments.length - count))) parseName(s);
  return path;
}

/**
 * Parses an already-decoded absolute path such as `/zone/home/alice/data.csv`, naming an
 * existing entity or one about to be created (then check its new names with `parseNewPath`).
 * Repeated and trailing slashes are cleaned away; `.` and `..` segments are refused (not
 * resolved), so a traversal attempt is an error rather than a different path. Segments may be
 * names stored before the name rule (see `parseName`), so such entities stay readable and
 * renamable; C0 controls and DELETE are refused always. Rejects with `INVALID_PATH`.
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
    if (!part.includes('%')) {
      segments.push(part);
      continue;
    }
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
  for (const s of segments) checkName(s, false);
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

/** A new child of `parent`; `name` is validated with `parseName` (the name rule). */
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

/**
 * Where the catalog keeps the rows of trashed entities: a trashed entity with the stable id
 * `id` is stored at `trash:<id>` (what lies below a trashed collection below that). Such a
 * path is not absolute, so no path a caller gives (`parsePath`) can ever name it: every read
 * and write by path misses a trashed entity, and its old path is free for a new one.
 */
export const TRASH_PREFIX = 'trash:';

/** The catalog path of the trashed entity with the stable id `id`. */
export function trashedPathOf(id: string): string {
  return `${TRASH_PREFIX}${id}`;
}

/** Whether a stored path is that of a trashed entity (or of one below a trashed collection). */
export function isTrashedPath(path: string): boolean {
  return path.startsWith(TRASH_PREFIX);
}
