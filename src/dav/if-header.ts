/**
 * The WebDAV `If` header (RFC 4918 §10.4): parsed into its lists of conditions, each list
 * tagged with the resource it is about (or untagged: the request's), and the lock tokens it
 * submits. Evaluating a condition needs the resource's state: the caller supplies it.
 */
import { LadingError } from '../core/errors.ts';

export interface IfCondition {
  not: boolean;
  /** A state token (a lock token, or a URI naming none such as `DAV:no-lock`). */
  token?: string;
  /** An entity tag, as sent (quoted, `W/` kept). */
  etag?: string;
}

export interface IfList {
  /** The tagged resource's URL as sent, or null for the request's own resource. */
  resource: string | null;
  conditions: IfCondition[];
  /** The header ended inside this list: it never holds (see `parseIf`). */
  cut?: boolean;
}

export interface IfHeader {
  lists: IfList[];
  /** Every state token the header names: the lock tokens the request submits. */
  tokens: Set<string>;
}

function bad(): LadingError {
  return new LadingError('BAD_REQUEST', 'The If header is not valid (RFC 4918 §10.4).');
}

/**
 * Parses an `If` header value; null when absent. Rejects with `BAD_REQUEST` when malformed,
 * except for a header that ends inside its last list after at least one whole list: that list
 * is kept as `cut`, a list that never holds. (neon, and so litmus and cadaver, cut the header
 * at 256 bytes, which a list with two SHA-256 entity tags passes; reading the cut list as
 * false answers what the whole one would have, or 412 where it would have held.)
 */
export function parseIf(value: string | undefined): IfHeader | null {
  if (value === undefined) return null;
  const lists: IfList[] = [];
  const tokens = new Set<string>();
  let i = 0;
  let resource: string | null = null;
  // NOTE: commas are skipped: a client that sends two If headers (neon adds its own for the
  // locks it knows) gets them joined with ', ' by Node, and each keeps its meaning.
  const skip = () => {
    while (i < value.length && (value[i] === ' ' || value[i] === '\t' || value[i] === ',')) i++;
  };
  const until = (end: string) => {
    const j = value.indexOf(end, i);
    if (j < 0) throw bad();
    const text = value.slice(i, j);
    i = j + 1;
    return text;
  };
  for (skip(); i < value.length; skip()) {
    if (value[i] === '<') {
      i++;
      resource = until('>');
      continue;
    }
    if (value[i] !== '(') throw bad();
    i++;
    const conditions: IfCondition[] = [];
    const start = i;
    const cutShort = () => {
      const closed = value.indexOf(')', start);
      return lists.length > 0 && closed < 0;
    };
    for (skip(); value[i] !== ')'; skip()) {
      if (i >= value.length) {
        if (!cutShort()) throw bad();
        lists.push({ resource, conditions, cut: true });
        return { lists, tokens };
      }
      let not = false;
      if (value.slice(i, i + 3).toLowerCase() === 'not') {
        not = true;
        i += 3;
        skip();
      }
      if ((value[i] === '<' && value.indexOf('>', i) < 0) || (value[i] === '[' && value.indexOf(']', i) < 0)) {
        if (!cutShort()) throw bad();
        lists.push({ resource, conditions, cut: true });
        return { lists, tokens };
      }
      if (value[i] === '<') {
        i++;
        const token = until('>');
        tokens.add(token);
        conditions.push({ not, token });
      } else if (value[i] === '[') {
        i++;
        conditions.push({ not, etag: until(']').trim() });
      } else throw bad();
    }
    i++;
    if (conditions.length === 0) throw bad();
    lists.push({ resource, conditions });
  }
  if (lists.length === 0) throw bad();
  return { lists, tokens };
}
