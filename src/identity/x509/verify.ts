/**
 * Verification of an RFC 3820 proxy chain, as a relying party must do it: every signature up to
 * a trust anchor, the proxy path rules of RFC 3820 section 4, key usage and basic constraints,
 * and the validity period of every certificate. It takes nothing on trust from the caller and
 * looks nothing up besides the trust anchors it is given; mapping the identity to a user is the
 * caller's job.
 */
import { type KeyObject, createPublicKey, verify as verifySignature } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LadingError } from '../../core/errors.ts';
import { type CertificateParts, certificateNames, certificateParts } from './der.ts';
import { OID_CN, type Rdn, formatDn, parseName, sameName } from './dn.ts';
import { OID_PPL_INHERIT_ALL, OID_PROXY_CERT_INFO, decodeProxyCertInfo } from './proxy.ts';
import { certificatesInPem, parseCertificate, x509 } from './x509.ts';

const OID_KEY_USAGE = '2.5.29.15';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_SUBJECT_ALT_NAME = '2.5.29.17';
const OID_ISSUER_ALT_NAME = '2.5.29.18';

// Critical extensions a relying party must understand to accept a certificate (RFC 5280 4.2).
const UNDERSTOOD = new Set([
  OID_KEY_USAGE, OID_BASIC_CONSTRAINTS, OID_SUBJECT_ALT_NAME, OID_ISSUER_ALT_NAME, OID_PROXY_CERT_INFO,
  '2.5.29.14', '2.5.29.35', '2.5.29.37', '2.5.29.32', '2.5.29.31',
]);

export interface VerifiedChain {
  /** The certificate the backend acts on (the first of the chain). */
  leaf: x509.X509Certificate;
  /** Its `/O=…/CN=…` subject. */
  leafSubject: string;
  /** The end-entity certificate the proxies derive from. */
  endEntity: x509.X509Certificate;
  /** The identity: the end-entity certificate's subject in `/O=…/CN=…` form. */
  identity: string;
  /**
   * The span in which this verdict holds: from the latest `notBefore` to the earliest
   * `notAfter` of every certificate in the chain and of the trust anchor. Outside it the
   * chain must be verified again (and is then refused).
   */
  validFrom: Date;
  validUntil: Date;
}

interface Parsed {
  cert: x509.X509Certificate;
  subject: Rdn[];
  issuer: Rdn[];
  parts: CertificateParts;
  key: KeyObject;
}

const invalid = (message: string, cause?: unknown) =>
  new LadingError('INVALID_CREDENTIAL', message, cause === undefined ? {} : { cause });

function parse(cert: x509.X509Certificate): Parsed {
  const der = Buffer.from(cert.rawData);
  const names = certificateNames(der);
  const parts = certificateParts(der);
  return {
    cert, subject: parseName(names.subject), issuer: parseName(names.issuer), parts,
    key: createPublicKey({ key: parts.spki, format: 'der', type: 'spki' }),
  };
}

// NOTE: parsing is pure and costs more than all the checks together, so parsed certificates
// are kept (bounded); every check below still runs on every call.
const PARSED_LIMIT = 2048;
const parsedByPem = new Map<string, Parsed>();
const parsedAnchors = new WeakMap<x509.X509Certificate, Parsed>();

function parsePem(pem: string): Parsed {
  let p = parsedByPem.get(pem);
  if (!p) {
    p = parse(parseCertificate(pem));
    if (parsedByPem.size >= PARSED_LIMIT) parsedByPem.delete(parsedByPem.keys().next().value!);
    parsedByPem.set(pem, p);
  }
  return p;
}

function parseAnchor(a: x509.X509Certificate): Parsed {
  let p = parsedAnchors.get(a);
  if (!p) parsedAnchors.set(a, (p = parse(a)));
  return p;
}

function keyUsage(cert: x509.X509Certificate): number | null {
  const ext = cert.getExtension(x509.KeyUsagesExtension);
  return ext ? ext.usages : null;
}

function basicConstraintsCa(cert: x509.X509Certificate): boolean {
  return cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false;
}

const HASH_BY_SIGNATURE_OID: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
};

async function signedBy(child: Parsed, parent: Parsed): Promise<boolean> {
  const hash = HASH_BY_SIGNATURE_OID[child.parts.signatureAlgorithm];
  if (hash) {
    try {
      return verifySignature(hash, child.parts.tbs, parent.key, child.parts.signature);
    } catch {
      return false;
    }
  }
  // Algorithms with parameters (RSA-PSS) or without a hash (Ed25519): the library's check.
  return child.cert.verify({ publicKey: parent.cert.publicKey, signatureOnly: true }).catch(() => false);
}

/**
 * Verifies `chain` (PEM certificates, the proxy first, then the certificates it derives from:
 * further proxies, the end-entity certificate, optionally intermediate CAs) against `anchors`
 * at `now`. Resolves with the end-entity identity. Rejects with `PROXY_EXPIRED` when the chain
 * is genuine and well-formed but a proxy in it is no longer valid (message as spec section 7),
 * and with `INVALID_CREDENTIAL` for anything else: unparsable certificates, a plain
 * certificate where a proxy is expected, a broken RFC 3820 rule, a bad signature, an unknown
 * CA, an expired or not-yet-valid end-entity or CA certificate.
 */
export async function verifyProxyChain(chain: readonly string[], anchors: readonly x509.X509Certificate[], now: Date): Promise<VerifiedChain> {
  let certs: Parsed[];
  try {
    certs = chain.map(parsePem);
  } catch (cause) {
    throw invalid('The credential is not a certificate chain.', cause);
  }
  if (certs.length === 0) throw invalid('The credential holds no certificate.');
  const isProxy = (p: Parsed) => p.cert.extensions.some((e) => e.type === OID_PROXY_CERT_INFO);
  const eeIndex = certs.findIndex((p) => !isProxy(p));
  if (eeIndex === 0) throw invalid('The credential is a plain certificate, not a proxy certificate.');
  if (eeIndex < 0) throw invalid('The proxy chain does not include its end-entity certificate.');

  for (const p of certs) {
    const unknown = p.cert.extensions.find((e) => e.critical && !UNDERSTOOD.has(e.type));
    if (unknown) throw invalid(`A certificate in the chain has an unsupported critical extension ${unknown.type}.`);
  }

  // RFC 3820 section 4: each proxy against the certificate that issued it.
  for (let i = eeIndex - 1; i >= 0; i--) {
    const proxy = certs[i]!;
    const issuer = certs[i + 1]!;
    const pciExt = proxy.cert.extensions.find((e) => e.type === OID_PROXY_CERT_INFO)!;
    if (!pciExt.critical) throw invalid('The proxy certificate\'s ProxyCertInfo extension is not critical.');
    let pci;
    try {
      pci = decodeProxyCertInfo(Buffer.from(pciExt.value));
    } catch (cause) {
      throw invalid('The proxy certificate\'s ProxyCertInfo extension is malformed.', cause);
    }
    if (pci.policyLanguage !== OID_PPL_INHERIT_ALL) throw invalid('Only proxies that inherit all rights (id-ppl-inheritAll) are accepted.');
    // NOTE: i is the number of proxies issued below this one.
    if (pci.pathLength !== undefined && i > pci.pathLength) throw invalid('The proxy chain is longer than a proxy\'s path length allows.');
    if (!sameName(proxy.issuer, issuer.subject)) throw invalid('A proxy certificate\'s issuer does not match the certificate that signed it.');
    const last = proxy.subject.at(-1);
    if (proxy.subject.length !== issuer.subject.length + 1 || !sameName(proxy.subject.slice(0, -1), issuer.subject)
      || !last || last.length !== 1 || last[0]!.type !== OID_CN) {
      throw invalid('A proxy certificate\'s subject is not its issuer\'s subject plus one CN.');
    }
    if (basicConstraintsCa(proxy.cert)) throw invalid('A proxy certificate claims to be a CA.');
    if (proxy.cert.extensions.some((e) => e.type === OID_SUBJECT_ALT_NAME || e.type === OID_ISSUER_ALT_NAME)) {
      throw invalid('A proxy certificate carries alternative names.');
    }
    const usage = keyUsage(issuer.cert);
    if (usage !== null && !(usage & x509.KeyUsageFlags.digitalSignature)) throw invalid('The certificate that issued a proxy may not sign (no digitalSignature key usage).');
    if (!(await signedBy(proxy, issuer))) throw invalid('A proxy certificate\'s signature does not verify.');
  }

  const ee = certs[eeIndex]!;
  if (basicConstraintsCa(ee.cert)) throw invalid('A CA certificate cannot issue proxies.');

  // The end-entity certificate and any intermediate CAs, up to a trust anchor.
  let anchored: Parsed | null = null;
  for (let i = eeIndex; i < certs.length && !anchored; i++) {
    const child = certs[i]!;
    const anchor = await findAnchor(child, anchors);
    if (anchor) {
      anchored = anchor;
      if (!withinValidity(anchor.cert, now)) throw invalid(`The CA certificate '${formatDn(anchor.subject)}' is not valid now.`);
      break;
    }
    const parent = certs[i + 1];
    if (!parent) break;
    if (!sameName(child.issuer, parent.subject) || !(await signedBy(child, parent))) throw invalid('The certificate chain is broken: a signature does not verify.');
    if (!basicConstraintsCa(parent.cert)) throw invalid('An intermediate certificate is not a CA.');
    const usage = keyUsage(parent.cert);
    if (usage !== null && !(usage & x509.KeyUsageFlags.keyCertSign)) throw invalid('An intermediate CA may not sign certificates.');
  }
  if (!anchored) throw invalid('The credential was not issued by a trusted certificate authority.');

  // Validity last, so that only a genuine chain is ever reported as an expired proxy.
  for (let i = eeIndex; i < certs.length; i++) {
    const c = certs[i]!;
    if (!withinValidity(c.cert, now)) {
      throw invalid(`The ${i === eeIndex ? 'end-entity' : 'CA'} certificate '${formatDn(c.subject)}' is not valid now; log in again.`);
    }
  }
  for (let i = eeIndex - 1; i >= 0; i--) {
    const p = certs[i]!;
    if (p.cert.notBefore.getTime() > now.getTime()) throw invalid(`The proxy certificate '${formatDn(p.subject)}' is not valid yet.`);
    if (p.cert.notAfter.getTime() < now.getTime()) throw expiredProxy(formatDn(certs[0]!.subject), p.cert.notAfter, now);
  }
  const span = [...certs, anchored].map((p) => p.cert);
  return {
    leaf: certs[0]!.cert, leafSubject: formatDn(certs[0]!.subject), endEntity: ee.cert, identity: formatDn(ee.subject),
    validFrom: new Date(Math.max(...span.map((c) => c.notBefore.getTime()))),
    validUntil: new Date(Math.min(...span.map((c) => c.notAfter.getTime()))),
  };
}

/** The spec's expired-proxy error (section 7). */
export function expiredProxy(subject: string, notAfter: Date, now: Date): LadingError {
  const minutes = Math.floor((now.getTime() - notAfter.getTime()) / 60_000);
  return new LadingError('PROXY_EXPIRED', `'${subject}' became invalid ${minutes} minutes ago.\nTo refresh the proxy make 'POST' on URI '/auth/proxy'`);
}

function withinValidity(cert: x509.X509Certificate, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() <= cert.notAfter.getTime();
}

async function findAnchor(child: Parsed, anchors: readonly x509.X509Certificate[]): Promise<Parsed | null> {
  for (const a of anchors) {
    const anchor = parseAnchor(a);
    // NOTE: a chain may end with the anchor itself; a copy of a trusted CA is trusted as is.
    if (Buffer.from(a.rawData).equals(Buffer.from(child.cert.rawData))) return anchor;
    if (sameName(child.issuer, anchor.subject) && (await signedBy(child, anchor))) return anchor;
  }
  return null;
}

/**
 * Loads trust anchors from a directory of PEM files, as `/etc/grid-security/certificates`:
 * files named `*.pem`, `*.crt` or `<hash>.<n>`; others (signing policies, CRLs, namespaces)
 * are ignored. Only CA certificates (basicConstraints cA) are kept. A missing directory
 * yields none.
 */
export async function loadTrustAnchors(dir: string): Promise<x509.X509Certificate[]> {
  return parseTrustAnchors(await readTrustAnchors(dir));
}

/**
 * The first half of `loadTrustAnchors`: the text of each file of `dir` it would read (a file
 * that cannot be read is skipped), for `parseTrustAnchors` to parse when the anchors are first
 * needed. Rejects as `loadTrustAnchors` does when the directory cannot be listed.
 */
export async function readTrustAnchors(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const texts: string[] = [];
  for (const name of names.filter((n) => /\.(pem|crt)$|^[0-9a-f]{8}\.\d+$/.test(n))) {
    try {
      texts.push(await readFile(join(dir, name), 'utf8'));
    } catch {
      continue;
    }
  }
  return texts;
}

/** The second half of `loadTrustAnchors`: the CA certificates in `texts`, each once; a text that does not parse is skipped. */
export function parseTrustAnchors(texts: readonly string[]): x509.X509Certificate[] {
  const out: x509.X509Certificate[] = [];
  const seen = new Set<string>();
  for (const text of texts) {
    let certs: x509.X509Certificate[];
    try {
      certs = certificatesInPem(text);
    } catch {
      continue;
    }
    for (const c of certs) {
      const key = Buffer.from(c.rawData).toString('base64');
      if (basicConstraintsCa(c) && !seen.has(key)) {
        seen.add(key);
        out.push(c);
      }
    }
  }
  return out;
}
