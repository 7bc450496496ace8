/**
 * lading's online certificate authority: creates (once) or loads the CA key and certificate,
 * signs short-lived end-entity user certificates from PKCS#10 requests, and writes the CA in
 * grid-security layout (`<hash>.0`, `<hash>.signing_policy`) for relying parties. The CA
 * private key is stored only sealed under the master key, never logged, never returned.
 * It does not decide who may obtain a certificate: its callers authenticate the requester.
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sealer } from '../secrets/sealing.ts';
import { LadingError } from '../../core/errors.ts';
import { certificateNames } from './der.ts';
import { OID, OID_CN, encodeName, formatDn, parseName, subjectHash } from './dn.ts';
import {
  SIGNING_ALGORITHM, certificatePem, exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem, parseCertificate, randomSerial, x509,
  type CryptoKey,
} from './x509.ts';

export interface CertificateAuthority {
  /** The certificate; the embedded CA's is parsed by the X.509 library when first read. */
  readonly cert: x509.X509Certificate;
  certPem: string;
  /** Private signing key; non-extractable once loaded. */
  key: CryptoKey;
}

/** What a CA's private key is sealed for (`Sealer.seal`'s purpose). */
export const CA_KEY_PURPOSE = 'lading.ca-key';
const CA_LIFETIME_MS = 10 * 365 * 86400_000;
const BACKDATE_MS = 5 * 60_000;

/** Creates a self-signed CA named `/O=lading/OU=<zone>/CN=lading CA <random>`. */
export async function createCa(zone: string, now: Date): Promise<{ cert: x509.X509Certificate; keyPem: string }> {
  const keys = await generateKeyPair();
  // NOTE: a random suffix keeps two installations' CAs apart in a shared trust directory,
  // where files are named by the hash of the subject.
  const name = encodeName([[OID.O, 'lading'], [OID.OU, zone], [OID.CN, `lading CA ${randomBytes(4).toString('hex')}`]]);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial().hex,
    issuer: new x509.Name(name),
    subject: new x509.Name(name),
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_LIFETIME_MS),
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keyPem: await exportPrivateKeyPem(keys.privateKey) };
}

export interface LoadCaOptions {
  /**
   * The CA's own directory (`<data>/ca`): `ca.json` (certificate + sealed key) of the embedded
   * CA, and `ca.pem`, the CA certificate, written for either kind of CA.
   */
  dir: string;
  zone: string;
  sealer: Sealer;
  now: Date;
  /** Operator-provided CA certificate and (PEM, unencrypted) key files; both or neither. */
  certFile?: string | null;
  keyFile?: string | null;
}

/**
 * Loads the configured CA, or the embedded one, creating the embedded one on first use. Safe
 * when several processes start at once on one data directory: exactly one CA is created.
 * Throws `INTERNAL` when the stored key cannot be opened (wrong master key).
 *
 * NOTE: a server loads an operator's CA (`certFile`, `keyFile`) here; lading's own CA now lives
 * in the catalog (`ca-ring.ts`), which imports a `ca.json` this function wrote in earlier
 * versions. The embedded branch stays as the definition of that file's layout.
 */
export async function loadOrCreateCa(o: LoadCaOptions): Promise<CertificateAuthority> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  if (o.certFile || o.keyFile) {
    if (!o.certFile || !o.keyFile) throw new Error('ca.cert and ca.key must be configured together');
    const cert = parseCertificate(await readFile(o.certFile, 'utf8'));
    // NOTE: published in the CA's own directory too, the default trust directory.
    await writeAtomically(join(o.dir, 'ca.pem'), certificatePem(cert), 0o644);
    return { cert, certPem: certificatePem(cert), key: await importPrivateKeyPem(await readFile(o.keyFile, 'utf8')) };
  }
  const stateFile = join(o.dir, 'ca.json');
  let state: { cert: string; key: string };
  try {
    state = JSON.parse(await readFile(stateFile, 'utf8')) as typeof state;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const created = await createCa(o.zone, o.now);
    const fresh = { cert: certificatePem(created.cert), key: o.sealer.seal(created.keyPem, CA_KEY_PURPOSE) };
    // NOTE: written aside and hard-linked into place, so the file appears complete or not at
    // all, and a second process starting at once finds it and uses that CA, not its own.
    const tmp = `${stateFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(fresh) + '\n', { mode: 0o600 });
    try {
      await link(tmp, stateFile);
      state = fresh;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      state = JSON.parse(await readFile(stateFile, 'utf8')) as typeof state;
    } finally {
      await unlink(tmp);
    }
  }
  // NOTE: Node's own parser checks the certificate and writes the PEM `certificatePem` would;
  // the X.509 library is loaded only once the certificate is used (see `x509.ts`).
  const certPem = new X509Certificate(state.cert).toString();
  const key = await importPrivateKeyPem(o.sealer.open(state.key, CA_KEY_PURPOSE).toString('utf8'));
  await writeAtomically(join(o.dir, 'ca.pem'), certPem, 0o644);
  let cert: x509.X509Certificate | undefined;
  return {
    certPem, key,
    get cert() {
      return (cert ??= parseCertificate(certPem));
    },
  };
}

async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing === text) return;
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text, { mode });
  await rename(tmp, file);
}

/** The RDNs every user certificate of this CA starts with: the CA's subject without its last RDN. */
function userBase(ca: CertificateAuthority) {
  return parseName(certificateNames(Buffer.from(ca.cert.rawData)).subject).slice(0, -1);
}

const USER_NAME = /^[^\u0000-\u001f\u007f/\\+]{1,128}$/;

/**
 * Signs an end-entity certificate for the user named by the request's (single) `CN`, with the
 * subject `<CA subject without its last RDN>/CN=<user>`; the rest of the requested subject and
 * any requested extensions are ignored. Rejects with `BAD_REQUEST` when the request is not a
 * PKCS#10 request with a valid self-signature and one acceptable `CN`.
 */
export async function signUserCertificate(
  ca: CertificateAuthority, csrPem: string, o: { now: Date; lifetimeSeconds: number },
): Promise<x509.X509Certificate> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (cause) {
    throw new LadingError('BAD_REQUEST', 'The body is not a PEM certificate signing request.', { cause });
  }
  if (!(await csr.verify().catch(() => false))) throw new LadingError('BAD_REQUEST', 'The certificate signing request is not signed by its key.');
  const cns = parseName(Buffer.from(csr.subjectName.toArrayBuffer())).flat().filter((a) => a.type === OID_CN);
  const user = cns.length === 1 ? cns[0]!.text : null;
  if (!user || !USER_NAME.test(user)) throw new LadingError('BAD_REQUEST', 'The request must name the user in exactly one CN.');
  const base = userBase(ca);
  const subject = encodeName([...base.map((rdn) => [rdn[0]!.type, rdn[0]!.text ?? ''] as const), [OID_CN, user]]);
  const notAfter = new Date(Math.min(o.now.getTime() + o.lifetimeSeconds * 1000, ca.cert.notAfter.getTime()));
  return x509.X509CertificateGenerator.create({
    serialNumber: randomSerial().hex,
    issuer: ca.cert.subjectName,
    subject: new x509.Name(subject),
    notBefore: new Date(o.now.getTime() - BACKDATE_MS),
    notAfter,
    publicKey: csr.publicKey,
    signingKey: ca.key,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      // NOTE: digitalSignature is what lets the holder sign proxies; without it Globus treats
      // a proxy of this certificate as invalid.
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.SubjectKeyIdentifierExtension.create(csr.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
}

/** The `/O=…/CN=…` subject of a certificate. */
export function subjectDn(cert: x509.X509Certificate): string {
  return formatDn(parseName(certificateNames(Buffer.from(cert.rawData)).subject));
}

/** The `/O=…/CN=…` issuer of a certificate. */
export function issuerDn(cert: x509.X509Certificate): string {
  return formatDn(parseName(certificateNames(Buffer.from(cert.rawData)).issuer));
}

/**
 * Writes the CA certificate into `dir` in grid-security layout: `<hash>.0` (PEM) and
 * `<hash>.signing_policy` allowing the CA to sign subjects under its own name prefix. The hash
 * is OpenSSL's subject hash (`openssl x509 -subject_hash`). Returns the file names.
 */
export async function exportGridSecurity(ca: Pick<CertificateAuthority, 'certPem'>, dir: string): Promise<string[]> {
  const names = certificateNames(new X509Certificate(ca.certPem).raw);
  const hash = subjectHash(names.subject);
  const caDn = formatDn(parseName(names.subject));
  const prefix = formatDn(parseName(names.subject).slice(0, -1));
  const policy = [
    `# Signing policy of the lading CA ${caDn}`,
    `access_id_CA      X509         '${caDn}'`,
    `pos_rights        globus        CA:sign`,
    `cond_subjects     globus       '"${prefix}/*"'`,
    '',
  ].join('\n');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${hash}.0`), ca.certPem, { mode: 0o644 });
  await writeFile(join(dir, `${hash}.signing_policy`), policy, { mode: 0o644 });
  return [`${hash}.0`, `${hash}.signing_policy`];
}
