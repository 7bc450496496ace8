/**
 * Distinguished names as grid software sees them: the `/O=…/OU=…/CN=…` text form used in
 * messages and in the catalog's DN mapping, name comparison by OpenSSL's canonical encoding
 * (case- and whitespace-insensitive, string types unified), and the `openssl x509
 * -subject_hash` value that names files in a grid-security trust directory. Works on DER bytes
 * only; it decides nothing about trust.
 */
import { createHash } from 'node:crypto';
import { TAG, children, decodeOid, encodeOid, readTlv, tlv } from './der.ts';

export interface Ava {
  /** Attribute type OID. */
  type: string;
  /** The value decoded to text, or null when it is not a string type. */
  text: string | null;
  /** The value element as encoded. */
  raw: Buffer;
}

/** One relative distinguished name: usually a single attribute. */
export type Rdn = Ava[];

const SHORT_NAMES: Record<string, string> = {
  '2.5.4.6': 'C',
  '2.5.4.8': 'ST',
  '2.5.4.7': 'L',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.3': 'CN',
  '2.5.4.4': 'SN',
  '2.5.4.42': 'GN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.12': 'title',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

export const OID_CN = '2.5.4.3';

function decodeString(tag: number, content: Buffer): string | null {
  switch (tag) {
    case TAG.UTF8_STRING:
    case TAG.PRINTABLE_STRING:
    case TAG.IA5_STRING:
    case TAG.VISIBLE_STRING:
      return content.toString('utf8');
    case TAG.T61_STRING:
      return content.toString('latin1');
    case TAG.BMP_STRING: {
      const swapped = Buffer.from(content);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    case TAG.UNIVERSAL_STRING: {
      let s = '';
      for (let i = 0; i + 3 < content.length; i += 4) s += String.fromCodePoint(content.readUInt32BE(i));
      return s;
    }
    default:
      return null;
  }
}

/** The RDNs of a DER-encoded Name, in encoded order. Throws on malformed input. */
export function parseName(der: Buffer): Rdn[] {
  const name = readTlv(der);
  if (name.tag !== TAG.SEQUENCE) throw new Error('DN: not a Name');
  return children(name.content).map((set) => {
    if (set.tag !== TAG.SET) throw new Error('DN: not an RDN');
    return children(set.content).map((seq) => {
      const [oid, value] = children(seq.content);
      if (seq.tag !== TAG.SEQUENCE || !oid || oid.tag !== TAG.OID || !value) throw new Error('DN: bad attribute');
      return { type: decodeOid(oid.content), text: decodeString(value.tag, value.content), raw: value.raw };
    });
  });
}

// NOTE: '/' and '+' separate RDNs and attributes in the text form, so they are escaped in
// values; otherwise a crafted value could read as a different name.
const escapeValue = (v: string) => v.replace(/[\\/+]/g, (c) => '\\' + c);

/** The `/O=lading/OU=zone/CN=alice` form (OpenSSL's one-line form, values escaped). */
export function formatDn(rdns: readonly Rdn[]): string {
  return rdns.map((rdn) => '/' + rdn.map((a) => {
    const key = SHORT_NAMES[a.type] ?? a.type;
    const value = a.text ?? '#' + a.raw.toString('hex');
    return `${key}=${escapeValue(value)}`;
  }).join('+')).join('');
}

export function formatDnDer(der: Buffer): string {
  return formatDn(parseName(der));
}

/** OpenSSL's canonical form of one value: UTF-8, trimmed, inner whitespace collapsed, ASCII lower case. */
function canonicalValue(a: Ava): Buffer {
  if (a.text === null) return a.raw;
  const text = a.text
    .replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '')
    .replace(/[ \t\n\v\f\r]+/g, ' ')
    .replace(/[A-Z]/g, (c) => c.toLowerCase());
  return tlv(TAG.UTF8_STRING, Buffer.from(text, 'utf8'));
}

function encodeSet(elements: Buffer[]): Buffer {
  // NOTE: DER orders the members of a SET OF by their encodings.
  return tlv(TAG.SET, ...[...elements].sort(Buffer.compare));
}

/** The canonical encoding of each RDN (as OpenSSL's `X509_NAME_cmp` and subject hash use). */
export function canonicalRdns(rdns: readonly Rdn[]): Buffer[] {
  return rdns.map((rdn) => encodeSet(rdn.map((a) => tlv(TAG.SEQUENCE, encodeOid(a.type), canonicalValue(a)))));
}

/** Whether two names are the same name (OpenSSL's comparison). */
export function sameName(a: readonly Rdn[], b: readonly Rdn[]): boolean {
  return Buffer.concat(canonicalRdns(a)).equals(Buffer.concat(canonicalRdns(b))) && a.length === b.length;
}

/** `openssl x509 -subject_hash` of a DER-encoded name: 8 lower-case hex digits. */
export function subjectHash(der: Buffer): string {
  const md = createHash('sha1').update(Buffer.concat(canonicalRdns(parseName(der)))).digest();
  return md.readUInt32LE(0).toString(16).padStart(8, '0');
}

/** `name` with one more RDN, `CN=<value>`, at its end: the subject of a proxy it issues. */
export function appendCommonName(der: Buffer, value: string): Buffer {
  const name = readTlv(der);
  if (name.tag !== TAG.SEQUENCE) throw new Error('DN: not a Name');
  const rdn = tlv(TAG.SET, tlv(TAG.SEQUENCE, encodeOid(OID_CN), tlv(TAG.UTF8_STRING, Buffer.from(value, 'utf8'))));
  return tlv(TAG.SEQUENCE, name.content, rdn);
}

/** A DER Name from `[type OID, value]` pairs, one attribute per RDN, values as UTF8String. */
export function encodeName(attributes: readonly (readonly [string, string])[]): Buffer {
  return tlv(TAG.SEQUENCE, ...attributes.map(([type, value]) =>
    tlv(TAG.SET, tlv(TAG.SEQUENCE, encodeOid(type), tlv(TAG.UTF8_STRING, Buffer.from(value, 'utf8'))))));
}

export const OID = {
  O: '2.5.4.10',
  OU: '2.5.4.11',
  CN: OID_CN,
} as const;
