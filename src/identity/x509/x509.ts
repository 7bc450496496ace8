/**
 * The one entry to `@peculiar/x509`: loads `reflect-metadata` first (the library's ASN.1
 * schemas need it), binds it to Node's WebCrypto, and holds the key algorithm lading uses for
 * CA, user and proxy keys. Key material passes through here in memory only; nothing is logged.
 *
 * The library (about 200 modules, a fifth of a server's start and some 20 MiB) is loaded when
 * `x509` is first used, not when this module is: a server loads it at the first certificate it
 * issues or verifies, and the admin commands that touch no certificate never do.
 */
import { createRequire } from 'node:module';
import { createPrivateKey, webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

const require = createRequire(import.meta.url);
let library: typeof X509 | null = null;

function load(): typeof X509 {
  if (!library) {
    require('reflect-metadata');
    const lib = require('@peculiar/x509') as typeof X509;
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    library = lib;
  }
  return library;
}

/** `@peculiar/x509`, loaded on the first access to any of its members. */
export const x509: typeof X509 = new Proxy({} as typeof X509, {
  get: (_target, name) => Reflect.get(load(), name),
});

// NOTE: the library's types under the same name, so `x509.X509Certificate` names the type too.
export declare namespace x509 {
  export type X509Certificate = X509.X509Certificate;
  export type Pkcs10CertificateRequest = X509.Pkcs10CertificateRequest;
  export type Extension = X509.Extension;
  export type Name = X509.Name;
}

export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;

// NOTE: RSA rather than EC keys, because Globus and older grid middleware handle RSA proxies
// everywhere; 2048 bits is what grid CAs issue to users.
export const KEY_ALGORITHM = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

export const SIGNING_ALGORITHM = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

export async function generateKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** PKCS#8 PEM (`BEGIN PRIVATE KEY`), which OpenSSL and Globus read. */
export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

/** Imports an RSA private key from PKCS#8 PEM (or traditional `BEGIN RSA PRIVATE KEY`) for signing. */
export async function importPrivateKeyPem(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
  return webcrypto.subtle.importKey('pkcs8', der, SIGNING_ALGORITHM, false, ['sign']);
}

/** Parses one PEM or DER certificate; throws the library's error when malformed. */
export function parseCertificate(data: string | Buffer): x509.X509Certificate {
  return new x509.X509Certificate(data);
}

export function certificatePem(cert: x509.X509Certificate): string {
  return cert.toString('pem') + '\n';
}

/** Every certificate in a PEM text (other blocks, such as keys, are skipped). */
export function certificatesInPem(text: string): x509.X509Certificate[] {
  return x509.PemConverter.decodeWithHeaders(text)
    .filter((b) => b.type === 'CERTIFICATE')
    .map((b) => new x509.X509Certificate(b.rawData));
}

export function randomSerial(): { hex: string; decimal: string } {
  const bytes = webcrypto.getRandomValues(new Uint8Array(8));
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  const hex = Buffer.from(bytes).toString('hex');
  return { hex, decimal: BigInt('0x' + hex).toString(10) };
}
