/**
 * The CA's storage: created once per data directory (also when processes start together),
 * its key sealed under the master key, or an operator's CA used instead; and DN handling.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSealer } from '../../src/identity/secrets/sealing.ts';
import { createCa, loadOrCreateCa, signUserCertificate, subjectDn } from '../../src/identity/x509/ca.ts';
import { certificateNames } from '../../src/identity/x509/der.ts';
import { encodeName, formatDnDer, OID, parseName, sameName, subjectHash } from '../../src/identity/x509/dn.ts';
import { certificatePem, generateKeyPair } from '../../src/identity/x509/x509.ts';
import { csrFor } from './pki.ts';

const sealer = createSealer(Buffer.alloc(32, 1));

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lading-ca-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('certificate authority storage', () => {
  it('creates one CA per directory even when several processes start at once, and reloads it', () => withDir(async (dir) => {
    const now = new Date();
    const cas = await Promise.all([1, 2, 3].map(() => loadOrCreateCa({ dir, zone: 'tz', sealer, now })));
    assert.equal(new Set(cas.map((c) => c.certPem)).size, 1);
    const again = await loadOrCreateCa({ dir, zone: 'tz', sealer, now });
    assert.equal(again.certPem, cas[0]!.certPem);
    assert.equal(await readFile(join(dir, 'ca.pem'), 'utf8'), again.certPem);
    assert.match(subjectDn(again.cert), /^\/O=lading\/OU=tz\/CN=lading CA [0-9a-f]{8}$/);
    // The reloaded key signs what the certificate's key verifies.
    const user = await signUserCertificate(again, await csrFor('alice', await generateKeyPair()), { now, lifetimeSeconds: 60 });
    assert.ok(await user.verify({ publicKey: cas[0]!.cert.publicKey, signatureOnly: true }));
    assert.ok(!(await readFile(join(dir, 'ca.json'), 'utf8')).includes('PRIVATE KEY'));
  }));

  it('refuses to open the CA key under another master key (INTERNAL)', () => withDir(async (dir) => {
    await loadOrCreateCa({ dir, zone: 'tz', sealer, now: new Date() });
    await assert.rejects(loadOrCreateCa({ dir, zone: 'tz', sealer: createSealer(Buffer.alloc(32, 2)), now: new Date() }), { code: 'INTERNAL' });
  }));

  it('uses an operator\'s CA from ca.cert/ca.key and publishes it in the CA directory', () => withDir(async (dir) => {
    const { cert, keyPem } = await createCa('site', new Date());
    await writeFile(join(dir, 'site-ca.pem'), certificatePem(cert));
    await writeFile(join(dir, 'site-ca.key'), keyPem, { mode: 0o600 });
    const ca = await loadOrCreateCa({ dir: join(dir, 'ca'), zone: 'tz', sealer, now: new Date(), certFile: join(dir, 'site-ca.pem'), keyFile: join(dir, 'site-ca.key') });
    assert.equal(ca.cert.subject, cert.subject);
    assert.deepEqual(await readdir(join(dir, 'ca')), ['ca.pem']);
    const user = await signUserCertificate(ca, await csrFor('bob', await generateKeyPair()), { now: new Date(), lifetimeSeconds: 60 });
    assert.equal(subjectDn(user), '/O=lading/OU=site/CN=bob');
    await assert.rejects(loadOrCreateCa({ dir, zone: 'tz', sealer, now: new Date(), certFile: join(dir, 'site-ca.pem') }));
  }));
});

describe('distinguished names', () => {
  it('formats the /K=V form, escaping separators inside values', () => {
    assert.equal(formatDnDer(encodeName([[OID.O, 'lading'], [OID.OU, 'a/b+c'], [OID.CN, 'x\\y']])), '/O=lading/OU=a\\/b\\+c/CN=x\\\\y');
  });

  it('compares names as OpenSSL does: case and inner whitespace do not matter, order does', () => {
    const a = parseName(encodeName([[OID.O, 'Lading'], [OID.CN, 'Alice  Liddell']]));
    const b = parseName(encodeName([[OID.O, 'lading'], [OID.CN, ' alice liddell ']]));
    const c = parseName(encodeName([[OID.CN, 'alice liddell'], [OID.O, 'lading']]));
    assert.ok(sameName(a, b));
    assert.ok(!sameName(a, c));
    assert.ok(!sameName(a, a.slice(0, 1)));
  });

  it('computes the same subject hash for names that differ only in case', async () => {
    const { cert } = await createCa('tz', new Date());
    const der = certificateNames(Buffer.from(cert.rawData)).subject;
    assert.match(subjectHash(der), /^[0-9a-f]{8}$/);
    const upper = encodeName(parseName(der).map((rdn) => [rdn[0]!.type, rdn[0]!.text!.toUpperCase()] as const));
    assert.equal(subjectHash(upper), subjectHash(der));
  });
});
