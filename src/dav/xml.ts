/**
 * The XML of WebDAV: request bodies parsed into a small namespace-resolved tree by saxes (a
 * strict, well-formedness-checking parser), bounded in size and depth, with no DTD at all (so
 * no entity beyond XML's five predefined ones is ever expanded), and the escaping and
 * re-serialisation the answers need. It knows no WebDAV method.
 */
import type { Readable } from 'node:stream';
import { SaxesParser } from 'saxes';
import { LadingError } from '../core/errors.ts';

export const DAV_NS = 'DAV:';

/** The largest XML request body read, in bytes. */
export const MAX_XML_BYTES = 1024 * 1024;
/** The deepest nesting of elements accepted in a request body. */
export const MAX_XML_DEPTH = 64;

/** An element with its namespace resolved; its children in document order (text as strings). */
export interface XmlElement {
  ns: string;
  local: string;
  /** Attributes by `{ns}local` (`local` alone without a namespace); namespace declarations left out. */
  attrs: Map<string, string>;
  children: (XmlElement | string)[];
}

/** The child elements of `el`. */
export function elements(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => typeof c !== 'string');
}

/** The first child element of `el` in namespace `ns` named `local`, or undefined. */
export function child(el: XmlElement, ns: string, local: string): XmlElement | undefined {
  return elements(el).find((c) => c.ns === ns && c.local === local);
}

/** The text of `el` and everything in it. */
export function textOf(el: XmlElement): string {
  return el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
}

function badXml(message: string, cause?: unknown): LadingError {
  return new LadingError('BAD_REQUEST', `The XML body is not acceptable: ${message}`, cause === undefined ? {} : { cause });
}

/**
 * Reads `body` and parses it: the root element, or null for an empty (or blank) body. Rejects
 * with `BAD_REQUEST` for XML that is not well-formed or namespace-well-formed, holds a DOCTYPE,
 * or nests deeper than `MAX_XML_DEPTH`, and with `PAYLOAD_TOO_LARGE` past `MAX_XML_BYTES`.
 * Stops reading at the first fault.
 */
export async function readXml(body: Readable): Promise<XmlElement | null> {
  const parser = new SaxesParser({ xmlns: true, position: false });
  let root: XmlElement | null = null;
  const stack: XmlElement[] = [];
  let fault: LadingError | null = null;
  let sawAnything = false;
  parser.on('error', (err) => {
    fault ??= badXml(err.message, err);
  });
  parser.on('doctype', () => {
    fault ??= badXml('a DOCTYPE is not accepted.');
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_XML_DEPTH) {
      fault ??= badXml(`elements nest deeper than ${MAX_XML_DEPTH}.`);
      return;
    }
    const attrs = new Map<string, string>();
    for (const a of Object.values(tag.attributes)) {
      if (a.prefix === 'xmlns' || (a.prefix === '' && a.local === 'xmlns')) continue;
      attrs.set(a.uri ? `{${a.uri}}${a.local}` : a.local, a.value);
    }
    const el: XmlElement = { ns: tag.uri ?? '', local: tag.local ?? tag.name, attrs, children: [] };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.on('text', (text) => {
    if (stack.length > 0) stack[stack.length - 1]!.children.push(text);
  });
  parser.on('cdata', (text) => {
    if (stack.length > 0) stack[stack.length - 1]!.children.push(text);
  });
  let size = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_XML_BYTES) throw new LadingError('PAYLOAD_TOO_LARGE', `An XML body may be at most ${MAX_XML_BYTES} bytes.`);
      const text = decoder.decode(chunk, { stream: true });
      if (!sawAnything && text.trim().length === 0) continue;
      sawAnything = true;
      parser.write(text);
      if (fault) throw fault;
    }
    const rest = decoder.decode();
    if (!sawAnything && rest.trim().length === 0) return null;
    parser.write(rest).close();
  } catch (err) {
    if (err instanceof TypeError) throw badXml('it is not valid UTF-8.', err);
    throw fault ?? err;
  }
  if (fault) throw fault;
  return root;
}

/** `text` escaped for XML character data and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&apos;' })[c]!);
}

/**
 * `el` as XML text that stands on its own: each element declares its namespace as the default
 * one (`xmlns=""` for none), so it can be pasted into any answer and still mean the same.
 */
export function serialize(el: XmlElement): string {
  let attrs = ` xmlns="${escapeXml(el.ns)}"`;
  let i = 0;
  for (const [key, value] of el.attrs) {
    const m = /^\{(.*)\}(.*)$/.exec(key);
    if (m) {
      const prefix = `a${i++}`;
      attrs += ` xmlns:${prefix}="${escapeXml(m[1]!)}" ${prefix}:${m[2]}="${escapeXml(value)}"`;
    } else attrs += ` ${key}="${escapeXml(value)}"`;
  }
  if (el.children.length === 0) return `<${el.local}${attrs}/>`;
  return `<${el.local}${attrs}>${el.children.map((c) => (typeof c === 'string' ? escapeXml(c) : serialize(c))).join('')}</${el.local}>`;
}
