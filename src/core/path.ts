/**
 * The one place where backend paths are parsed and where the name rule is decided. Everything
 * else handles the branded `Path` type, which can only be made here, so a path that reaches a
 * driver is always absolute, clean (no empty, `.` or `..` segment, no trailing slash), valid
 * UTF-8 and free of C0 control characters. Nothing in this module touches the file system.
 */
import { LadingError } from './errors.ts';

export type Path = string & { readonly __brand: 'Path' };

/** Longest name of one entity, in UTF-8 bytes (as most file systems allow). */
export const MAX_NAME_BYTES = 255;
/** Longest whole path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

export const ROOT = '/' as Path;

interface Refused {
  from: number;
  to: number;
  /** The character's Unicode name, or what the range is when it holds many. */
  name: string;
  /**
   * `always`: never accepted, so no stored name holds it; such a path cannot even be addressed.
   * `new`: refused in names given from now on; names stored before the rule keep working.
   */
  since: 'always' | 'new';
}

// NOTE: the name rule. Control characters are refused because names end up in HTTP headers
// (Content-Disposition), log lines and JSON; U+2028/U+2029 end a line in JavaScript and in
// regular expressions; bidirectional controls make a name display as another one
// (`a\u202Etxt.exe`); U+FEFF is invisible. A name must be what it looks like.
const REFUSED: readonly Refused[] = [
  { from: 0x00, to: 0x00, name: 'NULL', since: 'always' },
  { from: 0x0a, to: 0x0a, name: 'LINE FEED', since: 'always' },
  { from: 0x0d, to: 0x0d, name: 'CARRIAGE RETURN', since: 'always' },
  { from: 0x00, to: 0x1f, name: 'a C0 control character', since: 'always' },
  { from: 0x7f, to: 0x7f, name: 'DELETE', since: 'always' },
  { from: 0x80, to: 0x9f, name: 'a C1 control character', since: 'new' },
  { from: 0x2028, to: 0x2028, name: 'LINE SEPARATOR', since: 'new' },
  { from: 0x2029, to: 0x2029, name: 'PARAGRAPH SEPARATOR', since: 'new' },
  { from: 0x202a, to: 0x202a, name: 'LEFT-TO-RIGHT EMBEDDING', since: 'new' },
  { from: 0x202b, to: 0x202b, name: 'RIGHT-TO-LEFT EMBEDDING', since: 'new' },
  { from: 0x202c, to: 0x202c, name: 'POP DIRECTIONAL FORMATTING', since: 'new' },
  { from: 0x202d, to: 0x202d, name: 'LEFT-TO-RIGHT OVERRIDE', since: 'new' },
  { from: 0x202e, to: 0x202e, name: 'RIGHT-TO-LEFT OVERRIDE', since: 'new' },
  { from: 0x2066, to: 0x2066, name: 'LEFT-TO-RIGHT ISOLATE', since: 'new' },
  { from: 0x2067, to: 0x2067, name: 'RIGHT-TO-LEFT ISOLATE', since: 'new' },
  { from: 0x2068, to: 0x2068, name: 'FIRST STRONG ISOLATE', since: 'new' },
  { from: 0x2069, to: 0x2069, name: 'POP DIRECTIONAL ISOLATE', since: 'new' },
  { from: 0xfeff, to: 0xfeff, name: 'ZERO WIDTH NO-BREAK SPACE', since: 'new' },
];

const hex = (c: number) => c.toString(16).toUpperCase().padStart(4, '0');
/** A regular-expression character class body matching `rows` (rows inside another left out). */
const classOf = (rows: readonly Refused[]) => rows
  .filter((r) => !rows.some((o) => o !== r && o.from <= r.from && r.to <= o.to))
  .map((r) => (r.from === r.to ? `\\u${hex(r.from)}` : `\\u${hex(r.from)}-\\u${hex(r.to)}`)).join('');
const ALWAYS = REFUSED.filter((r) => r.since === 'always');
const ANY_REFUSED = new RegExp(`[${classOf(REFUSED)}]`, 'u');
const ALWAYS_REFUSED = new RegExp(`[${classOf(ALWAYS)}]`, 'u');

/**
 * A JSON-schema pattern (also a JavaScript regular expression) matching every name that can be
 * stored: the names the rule accepts and those stored before it. Response schemas use it for
 * keys that are names, so what the parser accepts and what a response may show are one rule.
 */
export const STORED_NAME_PATTERN = `^[^/${classOf(ALWAYS)}]+$`;

/** The characters the name rule refuses, for documentation: "U+0000–U+001F, U+007F, …". */
export const REFUSED_IN_NAMES = REFUSED
  .toSorted((x, y) => x.from - y.from)
  .reduce<{ from: number; to: number }[]>((runs, r) => {
    const last = runs.at(-1);
    if (last && r.from <= last.to + 1) last.to = Math.max(last.to, r.to);
    else runs.push({ from: r.from, to: r.to });
    return runs;
  }, [])
  .map((r) => (r.from === r.to ? `U+${hex(r.from)}` : `U+${hex(r.from)}–U+${hex(r.to)}`))
  .join(', ');

function invalid(message: string): LadingError {
  return new LadingError('INVALID_PATH', message);
}

function refusal(name: string, pattern: RegExp): LadingError | null {
  const found = pattern.exec(name);
  if (!found) return null;
  const code = found[0].codePointAt(0)!;
  const row = REFUSED.find((r) => code >= r.from && code <= r.to)!;
  const what = row.from === row.to ? `U+${hex(code)} ${row.name}` : `U+${hex(code)} (${row.name})`;
  return invalid(`${what} is not allowed in a name.`);
}

// NOTE: printable ASCII but '/': none of it is refused, it is well-formed, and each character
// is one UTF-8 byte. Most names are only that, and then the checks below reduce to the length.
const PLAIN_NAME = /^[\x20-\x2e\x30-\x7e]+$/;

/** The checks every segment of every path passes; `strict` adds the name rule's `new` characters. */
function checkName(name: string, strict: boolean): string {
  if (typeof name !== 'string' || name.length === 0) throw invalid('A name must not be empty.');
  if (name === '.' || name === '..') throw invalid(`'${name}' is not allowed as a name.`);
  if (name.length <= MAX_NAME_BYTES && PLAIN_NAME.test(name)) return name;
  if (name.includes('/')) throw invalid('A name must not contain \'/\'.');
  const refused = refusal(name, strict ? ANY_REFUSED : ALWAYS_REFUSED);
  if (refused) throw refused;
  if (!name.isWellFormed()) throw invalid('A name must be valid Unicode.');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    throw invalid(`A name must be at most ${MAX_NAME_BYTES} bytes long.`);
  }
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
