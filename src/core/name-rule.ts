/**
 * The name rule itself: what a name of a collection or data object may be, as data and one
 * check that says in words what is wrong. `path.ts` applies it to every path (and is the only
 * place that parses paths); the web app imports this module too, so the hint under a name
 * field and its check before the form is sent are the server's rule, not a copy of it. It
 * imports nothing, not even Node's modules, since it also runs in browsers.
 */

/** Longest name of one entity, in UTF-8 bytes (as most file systems allow). */
export const MAX_NAME_BYTES = 255;

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
// NOTE: with the `u` flag a surrogate code unit matches only when it is alone (not half of a pair).
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * A JSON-schema pattern (also a JavaScript regular expression) matching every name that can be
 * stored: the names the rule accepts and those stored before it. Response schemas use it for
 * keys that are names, so what the parser accepts and what a response may show are one rule.
 */
export const STORED_NAME_PATTERN = `^[^/${classOf(ALWAYS)}]+$`;

/** The characters the name rule refuses, for documentation: "U+0000–U+001F, U+007F, …". */
export const REFUSED_IN_NAMES = [...REFUSED]
  .sort((x, y) => x.from - y.from)
  .reduce<{ from: number; to: number }[]>((runs, r) => {
    const last = runs.at(-1);
    if (last && r.from <= last.to + 1) last.to = Math.max(last.to, r.to);
    else runs.push({ from: r.from, to: r.to });
    return runs;
  }, [])
  .map((r) => (r.from === r.to ? `U+${hex(r.from)}` : `U+${hex(r.from)}–U+${hex(r.to)}`))
  .join(', ');

/** The rule in a sentence for people, as the hint under a field where a name is typed. */
export const NAME_RULE_TEXT = `Any name up to ${MAX_NAME_BYTES} bytes, except "." and "..", without "/" or invisible control characters.`;

// NOTE: printable ASCII but '/': none of it is refused, it is well-formed, and each character
// is one UTF-8 byte. Most names are only that, and then the checks below reduce to the length.
const PLAIN_NAME = /^[\x20-\x2e\x30-\x7e]+$/;

const encoder = new TextEncoder();

/**
 * What is wrong with `name` under the name rule, in a sentence, or null when nothing is:
 * empty, `.` or `..`, a `/`, a refused character (with `strict`, also those refused only in
 * names given from now on, see `since`), not well-formed Unicode, or over `MAX_NAME_BYTES`.
 */
export function nameProblem(name: string, strict: boolean): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'A name must not be empty.';
  if (name === '.' || name === '..') return `'${name}' is not allowed as a name.`;
  if (name.length <= MAX_NAME_BYTES && PLAIN_NAME.test(name)) return null;
  if (name.includes('/')) return 'A name must not contain \'/\'.';
  const found = (strict ? ANY_REFUSED : ALWAYS_REFUSED).exec(name);
  if (found) {
    const code = found[0].codePointAt(0)!;
    const row = REFUSED.find((r) => code >= r.from && code <= r.to)!;
    return `${row.from === row.to ? `U+${hex(code)} ${row.name}` : `U+${hex(code)} (${row.name})`} is not allowed in a name.`;
  }
  if (LONE_SURROGATE.test(name)) return 'A name must be valid Unicode.';
  if (encoder.encode(name).length > MAX_NAME_BYTES) return `A name must be at most ${MAX_NAME_BYTES} bytes long.`;
  return null;
}
