/**
 * RFC 3820 proxy certificates: the ProxyCertInfo extension (encoding and decoding) and the
 * derivation of a proxy from an end-entity certificate or another proxy. A proxy has its own
 * key pair, its issuer is the certificate it derives from, its subject is that certificate's
 * subject plus one `CN=<serial>`, and its ProxyCertInfo is critical with id-ppl-inheritAll.
 * This module builds; `verify.ts` judges. It never logs or returns key material except to the
 * caller that asked for it.
 */
import { TAG, children, decodeInteger, decodeOid, encodeInteger, encodeOid, readTlv, tlv } from './der.ts';
import { appendCommonName } from './dn.ts';
import { type CryptoKey, type CryptoKeyPair, SIGNING_ALGORITHM, generateKeyPair, randomSerial, x509 } from './x509.ts';

export const OID_PROXY_CERT_INFO = '1.3.6.1.5.5.7.1.14';
export const OID_PPL_INHERIT_ALL = '1.3.6.1.5.5.7.21.1';
export const OID_PPL_INDEPENDENT = '1.3.6.1.5.5.7.21.2';

export interface ProxyCertInfo {
  /** Largest number of proxies that may follow this one in a chain; undefined = no limit. */
  pathLength?: number;
  policyLanguage: string;
  policy?: Buffer;
}

/** The DER value of a ProxyCertInfo extension (RFC 3820 section 3.8). */
export function encodeProxyCertInfo(info: ProxyCertInfo): Buffer {
  const policy = tlv(TAG.SEQUENCE, encodeOid(info.policyLanguage), ...(info.policy ? [tlv(TAG.OCTET_STRING, info.policy)] : []));
  return tlv(TAG.SEQUENCE, ...(info.pathLength === undefined ? [] : [encodeInteger(info.pathLength)]), policy);
}

/** Decodes a ProxyCertInfo value; throws on anything malformed. */
export function decodeProxyCertInfo(der: Buffer): ProxyCertInfo {
  const outer = readTlv(der);
  if (outer.tag !== TAG.SEQUENCE || outer.end !== der.length) throw new Error('ProxyCertInfo: not a SEQUENCE');
  const parts = children(outer.content);
  let pathLength: number | undefined;
  if (parts[0]?.tag === TAG.INTEGER) {
    const v = decodeInteger(parts.shift()!.content);
    if (v < 0n || v > 0xffffn) throw new Error('ProxyCertInfo: bad path length');
    pathLength = Number(v);
  }
  const policy = parts.shift();
  if (!policy || policy.tag !== TAG.SEQUENCE || parts.length > 0) throw new Error('ProxyCertInfo: bad ProxyPolicy');
  const [lang, body, ...rest] = children(policy.content);
  if (!lang || lang.tag !== TAG.OID || rest.length > 0 || (body && body.tag !== TAG.OCTET_STRING)) throw new Error('ProxyCertInfo: bad ProxyPolicy');
  return { pathLength, policyLanguage: decodeOid(lang.content), ...(body ? { policy: Buffer.from(body.content) } : {}) };
}

export interface DerivedProxy {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

export interface ProxyOptions {
  /** The certificate the proxy derives from (end-entity or proxy) and its private key. */
  issuer: x509.X509Certificate;
  issuerKey: CryptoKey;
  now: Date;
  lifetimeSeconds: number;
  /** ProxyCertInfo pCPathLenConstraint; omitted = unlimited. */
  pathLength?: number;
  /** Policy language; id-ppl-inheritAll unless told otherwise (tests build others). */
  policyLanguage?: string;
  /** Whether ProxyCertInfo is marked critical; true unless a test builds a faulty proxy. */
  critical?: boolean;
}

// NOTE: clocks of relying parties drift; a proxy valid from five minutes ago is what
// grid-proxy-init does too.
const BACKDATE_MS = 5 * 60_000;

/**
 * Derives an RFC 3820 proxy with a fresh key pair. Its validity ends at `now + lifetime` or at
 * the issuer's own end, whichever is earlier, since a proxy cannot outlive its issuer.
 */
export async function createProxy(o: ProxyOptions): Promise<DerivedProxy> {
  const keys = await generateKeyPair();
  const serial = randomSerial();
  const issuerName = Buffer.from(o.issuer.subjectName.toArrayBuffer());
  const notAfter = new Date(Math.min(o.now.getTime() + o.lifetimeSeconds * 1000, o.issuer.notAfter.getTime()));
  const notBefore = new Date(Math.max(o.now.getTime() - BACKDATE_MS, o.issuer.notBefore.getTime()));
  const pci = encodeProxyCertInfo({ pathLength: o.pathLength, policyLanguage: o.policyLanguage ?? OID_PPL_INHERIT_ALL });
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.hex,
    issuer: new x509.Name(issuerName),
    subject: new x509.Name(appendCommonName(issuerName, serial.decimal)),
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: o.issuerKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.Extension(OID_PROXY_CERT_INFO, o.critical ?? true, pci),
    ],
  });
  return { cert, keys };
}
