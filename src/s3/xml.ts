/**
 * The XML of the S3 front. Writing: elements with escaped text, built as strings (answers are
 * small or written in pages). Reading: the only bodies S3 clients send are DeleteObjects and
 * CompleteMultipartUpload, so `parseXml` is a small strict parser of elements and text, bounded
 * in size and depth, that refuses every declaration (`<!DOCTYPE`, `<!ENTITY`), CDATA and
 * processing instruction but the XML declaration: no entity is ever expanded but the five
 * predefined ones and character references, so no entity expansion or external fetch exists.
 */
import { S3Error } from './s3-errors.ts';

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&apos;' };

/** `text` safe inside an element or attribute; characters XML 1.0 cannot hold become U+FFFD. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
}

/** `<name>text</name>`, or the nested elements of an array of strings. */
export function el(name: string, content: string | number | boolean | null | undefined): string {
  if (content === null || content === undefined) return '';
  return `<${name}>${typeof content === 'string' ? escapeXml(content) : String(content)}</${name}>`;
}

/** An element around already-written children. */
export function wrap(name: string, children: string, attributes = ''): string {
  return `<${name}${attributes}>${children}</${name}>`;
}

/** A whole S3 document with its root element in S3's namespace. */
export function document(root: string, children: string): string {
  return `${XML_DECLARATION}${wrap(root, children, ` xmlns="${S3_NAMESPACE}"`)}`;
}

/** A parsed element: its local name (prefix dropped), its child elements and its text. */
export interface XmlElement {
  name: string;
  children: XmlElement[];
  text: string;
}

/** Largest XML body read (a DeleteObjects of 1,000 keys of 1,024 bytes fits). */
export const MAX_XML_BYTES = 2 * 1024 * 1024;
const MAX_DEPTH = 16;

/**
 * The root element of `text`. Throws `S3Error('MalformedXML')` for anything that is not
 * well-formed in the subset described above, or deeper than 16 levels.
 */
export function parseXml(text: string): XmlElement {
  const bad = (why: string) => new S3Error('MalformedXML', `The XML you provided was not well-formed or did not validate against our published schema (${why}).`);
  let at = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  if (text.charCodeAt(0) === 0xfeff) at = 1;
  while (at < text.length) {
    const lt = text.indexOf('<', at);
    const chunk = text.slice(at, lt < 0 ? text.length : lt);
    if (chunk.length > 0) {
      const top = stack.at(-1);
      if (top) top.text += decodeText(chunk, bad);
      else if (chunk.trim() !== '') throw bad('text outside the root element');
    }
    if (lt < 0) break;
    if (text.startsWith('<?', lt)) {
      const end = text.indexOf('?>', lt);
      if (end < 0 || !/^<\?xml[\s?]/.test(text.slice(lt, lt + 6)) || lt > 1 || root) throw bad('processing instruction');
      at = end + 2;
      continue;
    }
    if (text.startsWith('<!--', lt)) {
      const end = text.indexOf('-->', lt + 4);
      if (end < 0) throw bad('unterminated comment');
      at = end + 3;
      continue;
    }
    if (text.startsWith('<!', lt)) throw bad('declarations and CDATA are not accepted');
    const gt = text.indexOf('>', lt);
    if (gt < 0) throw bad('unterminated tag');
    const tag = text.slice(lt + 1, gt);
    at = gt + 1;
    if (tag.startsWith('/')) {
      const name = localName(tag.slice(1).trim());
      const open = stack.pop();
      if (!open || open.name !== name) throw bad(`unexpected closing tag ${name}`);
      if (stack.length === 0) root = open;
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const m = /^([A-Za-z_][\w.:-]*)(\s[^]*)?$/.exec(selfClosing ? tag.slice(0, -1) : tag);
    if (!m) throw bad('malformed tag');
    if (m[2] && !/^(\s+[A-Za-z_][\w.:-]*\s*=\s*("[^"<]*"|'[^'<]*'))*\s*$/.test(m[2])) throw bad('malformed attributes');
    if (root || (stack.length === 0 && root !== null)) throw bad('more than one root element');
    const element: XmlElement = { name: localName(m[1]!), children: [], text: '' };
    stack.at(-1)?.children.push(element);
    if (selfClosing) {
      if (stack.length === 0) root = element;
      continue;
    }
    stack.push(element);
    if (stack.length > MAX_DEPTH) throw bad('nested too deep');
  }
  if (stack.length > 0 || !root) throw bad('no complete root element');
  return root;
}

function localName(qualified: string): string {
  const colon = qualified.indexOf(':');
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'' };

function decodeText(text: string, bad: (why: string) => S3Error): string {
  return text.replace(/&([^;&\s]{0,10});?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw bad('a bare &');
    if (ref in NAMED) return NAMED[ref]!;
    const m = /^#(x[0-9a-fA-F]{1,6}|[0-9]{1,7})$/.exec(ref);
    if (!m) throw bad(`the entity &${ref}; (only the predefined ones are accepted)`);
    const code = m[1]!.startsWith('x') ? parseInt(m[1]!.slice(1), 16) : Number(m[1]);
    if (code > 0x10ffff || code === 0 || (code >= 0xd800 && code <= 0xdfff)) throw bad('an invalid character reference');
    return String.fromCodePoint(code);
  });
}

/** The child elements named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}

/** The text of the first child named `name`, or undefined. */
export function childText(element: XmlElement, name: string): string | undefined {
  return element.children.find((c) => c.name === name)?.text;
}
