/**
 * Test fixtures for the credential tests: a throw-away CA, user certificates and proxies
 * built with lading's own code, and files in the layouts OpenSSL and Globus read.
 */
import { execFileSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { type CertificateAuthority, createCa, signUserCertificate } from '../../src/identity/x509/ca.ts';
import { OID_CN, encodeName } from '../../src/identity/x509/dn.ts';
import { createProxy, type ProxyOptions } from '../../src/identity/x509/proxy.ts';
import {
  type CryptoKeyPair, SIGNING_ALGORITHM, certificatePem, exportPrivateKeyPem, generateKeyPair, importPrivateKeyPem, x509,
} from '../../src/identity/x509/x509.ts';

export async function testCa(zone = 'tz', now = new Date()): Promise<CertificateAuthority> {
  const { cert, keyPem } = await createCa(zone, now);
  return { cert, certPem: certificatePem(cert), key: await importPrivateKeyPem(keyPem) };
}

export interface Holder {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  pem: string;
}

export async function csrFor(user: string, keys: CryptoKeyPair): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: new x509.Name(encodeName([[OID_CN, user]])), keys, signingAlgorithm: SIGNING_ALGORITHM });
  return csr.toString('pem');
}

export async function userCert(ca: CertificateAuthority, user: string, now = new Date(), lifetimeSeconds = 86400): Promise<Holder> {
  const keys = await generateKeyPair();
  const cert = await signUserCertificate(ca, await csrFor(user, keys), { now, lifetimeSeconds });
  return { cert, keys, pem: certificatePem(cert) };
}

export async function proxyOf(issuer: Holder, o: Partial<ProxyOptions> = {}): Promise<Holder> {
  const { cert, keys } = await createProxy({ issuer: issuer.cert, issuerKey: issuer.keys.privateKey, now: new Date(), lifetimeSeconds: 3600, ...o });
  return { cert, keys, pem: certificatePem(cert) };
}

/** A Globus proxy file: proxy certificate, its key, then the rest of the chain. */
export async function writeProxyFile(file: string, proxy: Holder, chain: readonly Holder[]): Promise<void> {
  await writeFile(file, proxy.pem + (await exportPrivateKeyPem(proxy.keys.privateKey)) + chain.map((c) => c.pem).join(''), { mode: 0o600 });
  await chmod(file, 0o600);
}

export async function writeKey(file: string, holder: Holder): Promise<void> {
  await writeFile(file, await exportPrivateKeyPem(holder.keys.privateKey), { mode: 0o400 });
}

export function hasTool(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Skip reason for a test needing Debian tools, or false; never skips in CI. */
export function needTools(tools: readonly string[], pkg: string): string | false {
  const missing = tools.filter((t) => !hasTool(t));
  if (missing.length === 0) return false;
  if (process.env.CI) throw new Error(`CI: ${missing.join(', ')} missing; install the Debian package ${pkg} (listed in .ci/apt-packages)`);
  return `needs ${missing.join(', ')}: apt-get install ${pkg}`;
}

