/**
 * The few DER (ASN.1 distinguished encoding) operations the credential code needs and that no
 * certificate library exposes: reading the raw issuer and subject names out of a certificate,
 * encoding small structures (the ProxyCertInfo value, a name with one more RDN) and object
 * identifiers. It is a reader and writer of bytes only: it knows nothing of trust or validity.
 * Malformed input throws a plain `Error`; callers turn it into their own error code.
 */

export interface Tlv {
  tag: number;
  /** The value bytes. */
  content: Buffer;
  /** The whole element, header included. */
  raw: Buffer;
}

/** Reads one element at `offset`; throws on truncated or non-DER (indefinite) lengths. */
export function readTlv(buf: Buffer, offset = 0): Tlv & { end: number } {
  if (offset + 2 > buf.length) throw new Error('DER: truncated header');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: multi-byte tags are not supported');
  let len = buf[offset + 1]!;
  let pos = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('DER: unsupported length');
    len = 0;
    for (let i = 0; i < n; i++) {
      if (pos >= buf.length) throw new Error('DER: truncated length');
      len = len * 256 + buf[pos++]!;
    }
  }
  const end = pos + len;
  if (end > buf.length) throw new Error('DER: truncated value');
  return { tag, content: buf.subarray(pos, end), raw: buf.subarray(offset, end), end };
}

/** The elements inside a constructed element's content. */
export function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  let pos = 0;
  while (pos < content.length) {
    const t = readTlv(content, pos);
    out.push({ tag: t.tag, content: t.content, raw: t.raw });
    pos = t.end;
  }
  return out;
}

export function encodeLength(len: number): Buffer {
  if (len < 0x80) return Buffer.from([len]);
  const bytes: number[] = [];
  for (let l = len; l > 0; l = Math.floor(l / 256)) bytes.unshift(l & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

export const TAG = {
  INTEGER: 0x02,
  OCTET_STRING: 0x04,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  VISIBLE_STRING: 0x1a,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

export function encodeOid(oid: string): Buffer {
  const parts = oid.split('.').map((p) => BigInt(p));
  if (parts.length < 2) throw new Error(`DER: bad OID ${oid}`);
  const bytes: number[] = [];
  const push = (v: bigint) => {
    const chunk: number[] = [Number(v & 0x7fn)];
    for (let x = v >> 7n; x > 0n; x >>= 7n) chunk.unshift(Number(x & 0x7fn) | 0x80);
    bytes.push(...chunk);
  };
  push(parts[0]! * 40n + parts[1]!);
  for (const p of parts.slice(2)) push(p);
  return tlv(TAG.OID, Buffer.from(bytes));
}

export function decodeOid(content: Buffer): string {
  const values: bigint[] = [];
  let cur = 0n;
  for (const b of content) {
    cur = (cur << 7n) | BigInt(b & 0x7f);
    if (!(b & 0x80)) {
      values.push(cur);
      cur = 0n;
    }
  }
  const first = values.shift();
  if (first === undefined) throw new Error('DER: empty OID');
  const a = first < 40n ? 0n : first < 80n ? 1n : 2n;
  return [a, first - a * 40n, ...values].join('.');
}

/** A non-negative INTEGER. */
export function encodeInteger(value: number | bigint): Buffer {
  let hex = BigInt(value).toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(TAG.INTEGER, bytes);
}

export function decodeInteger(content: Buffer): bigint {
  if (content.length === 0) throw new Error('DER: empty INTEGER');
  let v = BigInt('0x' + content.toString('hex'));
  if (content[0]! & 0x80) v -= 1n << BigInt(content.length * 8);
  return v;
}

/** The raw DER of a certificate's issuer and subject names (from its TBSCertificate). */
export function certificateNames(der: Buffer): { issuer: Buffer; subject: Buffer } {
  const cert = readTlv(der);
  const tbs = children(cert.content)[0];
  if (!tbs || tbs.tag !== TAG.SEQUENCE) throw new Error('DER: not a certificate');
  const fields = children(tbs.content);
  // NOTE: the version field is an explicit [0] tag that is absent on v1 certificates.
  const base = fields[0]?.tag === 0xa0 ? 1 : 0;
  const issuer = fields[base + 2];
  const subject = fields[base + 4];
  if (!issuer || !subject || issuer.tag !== TAG.SEQUENCE || subject.tag !== TAG.SEQUENCE) throw new Error('DER: not a certificate');
  return { issuer: issuer.raw, subject: subject.raw };
}

export interface CertificateParts {
  /** The signed part (TBSCertificate), as encoded. */
  tbs: Buffer;
  /** OID of the signature algorithm. */
  signatureAlgorithm: string;
  signature: Buffer;
  /** SubjectPublicKeyInfo, as encoded. */
  spki: Buffer;
}

/** Splits a certificate into what a signature check needs. Throws on malformed input. */
export function certificateParts(der: Buffer): CertificateParts {
  const [tbs, alg, sig] = children(readTlv(der).content);
  if (!tbs || !alg || !sig || tbs.tag !== TAG.SEQUENCE || alg.tag !== TAG.SEQUENCE || sig.tag !== 0x03) throw new Error('DER: not a certificate');
  const algOid = children(alg.content)[0];
  if (!algOid || algOid.tag !== TAG.OID) throw new Error('DER: bad signature algorithm');
  const fields = children(tbs.content);
  const base = fields[0]?.tag === 0xa0 ? 1 : 0;
  const spki = fields[base + 5];
  if (!spki || spki.tag !== TAG.SEQUENCE || sig.content[0] !== 0) throw new Error('DER: not a certificate');
  return { tbs: tbs.raw, signatureAlgorithm: decodeOid(algOid.content), signature: sig.content.subarray(1), spki: spki.raw };
}
