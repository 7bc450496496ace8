/**
 * The backend's proxy-chain verification and the proxy authority: what is accepted, and that
 * each kind of bad credential is refused with the right code (and, for an expired proxy, the
 * exact message of spec section 7).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ErrorCode } from '../../src/core/errors.ts';
import type { CertificateAuthority } from '../../src/identity/x509/ca.ts';
import { exportGridSecurity, issuerDn, subjectDn } from '../../src/identity/x509/ca.ts';
import { createProxyAuthority } from '../../src/identity/x509/authority.ts';
import { appendCommonName } from '../../src/identity/x509/dn.ts';
import {
  OID_PPL_INDEPENDENT, OID_PPL_INHERIT_ALL, OID_PROXY_CERT_INFO, decodeProxyCertInfo, encodeProxyCertInfo,
} from '../../src/identity/x509/proxy.ts';
import { loadTrustAnchors, verifyProxyChain } from '../../src/identity/x509/verify.ts';
import { SIGNING_ALGORITHM, certificatePem, generateKeyPair, x509 } from '../../src/identity/x509/x509.ts';
import { type Holder, proxyOf, testCa, userCert } from './pki.ts';

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode, message?: RegExp | string): Promise<void> {
  await assert.rejects(promise, (err: { code?: string; message?: string }) => {
    assert.equal(err.code, code, err.message);
    if (typeof message === 'string') assert.equal(err.message, message);
    else if (message) assert.match(err.message ?? '', message);
    return true;
  });
}

/** The PEM with one bit of its signature flipped (in a copy: the certificate stays intact). */
function tamper(cert: x509.X509Certificate): string {
  const der = Buffer.from(new Uint8Array(cert.rawData));
  der[der.length - 5]! ^= 0x01;
  return x509.PemConverter.encode(der, 'CERTIFICATE');
}

describe('RFC 3820 proxy chain verification', () => {
  let ca: CertificateAuthority;
  let other: CertificateAuthority;
  let alice: Holder;
  let proxy: Holder;
  const now = () => new Date();

  before(async () => {
    const earlier = new Date(Date.now() - 3 * 3600_000);
    [ca, other] = await Promise.all([testCa('tz', earlier), testCa('tz', earlier)]);
    alice = await userCert(ca, 'alice');
    proxy = await proxyOf(alice);
  });

  it('accepts a lading proxy and names its end-entity identity', async () => {
    const v = await verifyProxyChain([proxy.pem, alice.pem], [ca.cert], now());
    assert.equal(v.identity, '/O=lading/OU=tz/CN=alice');
    assert.match(v.leafSubject, /^\/O=lading\/OU=tz\/CN=alice\/CN=\d+$/);
  });

  it('gives the proxy the RFC 3820 shape: critical ProxyCertInfo with inheritAll, subject = issuer + CN', () => {
    const ext = proxy.cert.extensions.find((e) => e.type === OID_PROXY_CERT_INFO);
    assert.ok(ext?.critical);
    assert.equal(decodeProxyCertInfo(Buffer.from(ext.value)).policyLanguage, OID_PPL_INHERIT_ALL);
    assert.equal(issuerDn(proxy.cert), subjectDn(alice.cert));
    assert.equal(subjectDn(proxy.cert), `${subjectDn(alice.cert)}/CN=${BigInt('0x' + proxy.cert.serialNumber)}`);
    assert.ok(alice.cert.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.digitalSignature);
  });

  it('refuses an expired proxy with PROXY_EXPIRED and the spec\'s message', async () => {
    const t = new Date(Date.now() - 3600_000);
    const then = await userCert(ca, 'alice', t);
    const short = await proxyOf(then, { now: t, lifetimeSeconds: 60 });
    const at = new Date(t.getTime() + 60_000 + 3 * 60_000 + 1000);
    await rejectsWith(verifyProxyChain([short.pem, then.pem], [ca.cert], at), 'PROXY_EXPIRED',
      `'/O=lading/OU=tz/CN=alice/CN=${BigInt('0x' + short.cert.serialNumber)}' became invalid 3 minutes ago.\nTo refresh the proxy make 'POST' on URI '/auth/proxy'`);
  });

  it('refuses a proxy of an expired end-entity certificate with INVALID_CREDENTIAL', async () => {
    const t = new Date(Date.now() - 3600_000);
    const old = await userCert(ca, 'alice', t, 120);
    const p = await proxyOf(old, { now: t, lifetimeSeconds: 3600 });
    assert.equal(p.cert.notAfter.getTime(), old.cert.notAfter.getTime(), 'a proxy never outlives its issuer');
    await rejectsWith(verifyProxyChain([p.pem, old.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /end-entity/);
  });

  it('refuses tampered signatures on the proxy and on the user certificate', async () => {
    await rejectsWith(verifyProxyChain([tamper(proxy.cert), alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /signature/);
    await rejectsWith(verifyProxyChain([proxy.pem, tamper(alice.cert)], [ca.cert], now()), 'INVALID_CREDENTIAL');
  });

  it('refuses a chain from an unknown CA', async () => {
    const mallory = await userCert(other, 'alice');
    const p = await proxyOf(mallory);
    assert.equal(mallory.cert.subject.replace(/CN=alice, /, ''), alice.cert.subject.replace(/CN=alice, /, ''));
    await rejectsWith(verifyProxyChain([p.pem, mallory.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /trusted/);
    await rejectsWith(verifyProxyChain([p.pem, mallory.pem], [], now()), 'INVALID_CREDENTIAL');
  });

  it('refuses a plain certificate where a proxy is expected', async () => {
    await rejectsWith(verifyProxyChain([alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /not a proxy/);
    await rejectsWith(verifyProxyChain([alice.pem, ca.certPem], [ca.cert], now()), 'INVALID_CREDENTIAL', /not a proxy/);
    await rejectsWith(verifyProxyChain([proxy.pem], [ca.cert], now()), 'INVALID_CREDENTIAL');
    await rejectsWith(verifyProxyChain(['not a certificate'], [ca.cert], now()), 'INVALID_CREDENTIAL');
  });

  it('accepts a proxy of a proxy, within the path length the first proxy allows', async () => {
    const p2 = await proxyOf(proxy);
    const v = await verifyProxyChain([p2.pem, proxy.pem, alice.pem], [ca.cert], now());
    assert.equal(v.identity, '/O=lading/OU=tz/CN=alice');
    const limited = await proxyOf(alice, { pathLength: 0 });
    const below = await proxyOf(limited);
    await verifyProxyChain([limited.pem, alice.pem], [ca.cert], now());
    await rejectsWith(verifyProxyChain([below.pem, limited.pem, alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /path length/);
    await rejectsWith(verifyProxyChain([p2.pem, alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL');
  });

  it('refuses a non-critical ProxyCertInfo and policies other than inheritAll', async () => {
    const lax = await proxyOf(alice, { critical: false });
    await rejectsWith(verifyProxyChain([lax.pem, alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /critical/);
    const independent = await proxyOf(alice, { policyLanguage: OID_PPL_INDEPENDENT });
    await rejectsWith(verifyProxyChain([independent.pem, alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /inherit/);
  });

  it('refuses a proxy whose subject is not its issuer plus one CN, or that claims to be a CA', async () => {
    const keys = await generateKeyPair();
    const issuerName = Buffer.from(alice.cert.subjectName.toArrayBuffer());
    const make = (subject: Buffer, extra: x509.Extension[] = []) => x509.X509CertificateGenerator.create({
      serialNumber: '01', issuer: new x509.Name(issuerName), subject: new x509.Name(subject),
      notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3600_000),
      publicKey: keys.publicKey, signingKey: alice.keys.privateKey, signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [new x509.Extension(OID_PROXY_CERT_INFO, true, encodeProxyCertInfo({ policyLanguage: OID_PPL_INHERIT_ALL })), ...extra],
    });
    const bob = Buffer.from((await userCert(ca, 'bob')).cert.subjectName.toArrayBuffer());
    const wrong = await make(appendCommonName(bob, '1'));
    await rejectsWith(verifyProxyChain([certificatePem(wrong), alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /subject/);
    const caProxy = await make(appendCommonName(issuerName, '2'), [new x509.BasicConstraintsExtension(true, undefined, true)]);
    await rejectsWith(verifyProxyChain([certificatePem(caProxy), alice.pem], [ca.cert], now()), 'INVALID_CREDENTIAL', /CA/);
    const fine = await make(appendCommonName(issuerName, '3'));
    await verifyProxyChain([certificatePem(fine), alice.pem], [ca.cert], now());
  });

  it('encodes ProxyCertInfo as RFC 3820 defines it', () => {
    // SEQUENCE { SEQUENCE { OID id-ppl-inheritAll } }
    assert.equal(encodeProxyCertInfo({ policyLanguage: OID_PPL_INHERIT_ALL }).toString('hex'), '300c300a06082b06010505071501');
    assert.deepEqual(decodeProxyCertInfo(encodeProxyCertInfo({ pathLength: 2, policyLanguage: OID_PPL_INHERIT_ALL })),
      { pathLength: 2, policyLanguage: OID_PPL_INHERIT_ALL });
    assert.throws(() => decodeProxyCertInfo(Buffer.from('3000', 'hex')));
  });

  it('loads trust anchors from a grid-security directory, ignoring policies and non-CA certificates', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-anchors-'));
    try {
      await exportGridSecurity(ca, dir);
      await writeFile(join(dir, 'user.pem'), alice.pem);
      await writeFile(join(dir, 'other.crt'), other.certPem);
      const anchors = await loadTrustAnchors(dir);
      assert.deepEqual(anchors.map((a) => a.subject).sort(), [ca.cert.subject, other.cert.subject].sort());
      assert.deepEqual(await loadTrustAnchors(join(dir, 'missing')), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('proxy authority', () => {
    const catalog = { userForSubject: async (dn: string) => (dn === '/O=lading/OU=tz/CN=alice' ? 'alice' : null) };

    it('maps the verified end-entity DN to the backend user', async () => {
      const authority = createProxyAuthority({ trustAnchors: [ca.cert], catalog });
      assert.equal(await authority.resolve({ kind: 'x509-proxy', chain: [proxy.pem, alice.pem] }, now()), 'alice');
    });

    it('refuses a valid proxy whose DN has no mapping', async () => {
      const authority = createProxyAuthority({ trustAnchors: [ca.cert], catalog });
      const carol = await userCert(ca, 'carol');
      const p = await proxyOf(carol);
      await rejectsWith(authority.resolve({ kind: 'x509-proxy', chain: [p.pem, carol.pem] }, now()), 'INVALID_CREDENTIAL', /not mapped/);
    });

    it('reads the trust anchors again when a chain is refused, and accepts it once a new CA is trusted', async () => {
      const next = await testCa();
      const later = await userCert(next, 'alice');
      const p = await proxyOf(later);
      let trusted = [ca.cert];
      let refreshes = 0;
      const authority = createProxyAuthority({
        trustAnchors: () => trusted, catalog,
        refreshAnchors: async () => {
          refreshes++;
          return false;
        },
      });
      await rejectsWith(authority.resolve({ kind: 'x509-proxy', chain: [p.pem, later.pem] }, now()), 'INVALID_CREDENTIAL', /not issued by a trusted/);
      assert.equal(refreshes, 1, 'a refusal asks for fresh anchors once');
      const rotating = createProxyAuthority({
        trustAnchors: () => trusted, catalog,
        refreshAnchors: async () => {
          trusted = [next.cert, ca.cert];
          return true;
        },
      });
      assert.equal(await rotating.resolve({ kind: 'x509-proxy', chain: [p.pem, later.pem] }, now()), 'alice');
      assert.equal(await rotating.resolve({ kind: 'x509-proxy', chain: [proxy.pem, alice.pem] }, now()), 'alice', 'the previous CA is still trusted');
    });

    it('refuses credentials of any other kind, such as a bare user name', async () => {
      const authority = createProxyAuthority({ trustAnchors: [ca.cert], catalog });
      await rejectsWith(authority.resolve({ kind: 'trusted', user: 'alice' }, now()), 'INVALID_CREDENTIAL');
      await rejectsWith(authority.resolve({ kind: 'x509-proxy', chain: 'nope' }, now()), 'INVALID_CREDENTIAL');
    });

    it('verifies a chain once, then remembers the verdict only until the earliest notAfter', async () => {
      let verifications = 0;
      const counting: typeof verifyProxyChain = (...args) => {
        verifications++;
        return verifyProxyChain(...args);
      };
      const authority = createProxyAuthority({ trustAnchors: [ca.cert], catalog, verify: counting });
      const t = new Date(Date.now() - 600_000);
      const then = await userCert(ca, 'alice', t);
      const short = await proxyOf(then, { now: t, lifetimeSeconds: 60 });
      const credential = { kind: 'x509-proxy', chain: [short.pem, then.pem] };
      const inside = new Date(t.getTime() + 30_000);
      for (let i = 0; i < 5; i++) assert.equal(await authority.resolve(credential, inside), 'alice');
      assert.equal(verifications, 1, 'the signatures are checked once');
      // One millisecond past the proxy's notAfter the remembered verdict no longer holds.
      const after = new Date(short.cert.notAfter.getTime() + 1);
      await rejectsWith(authority.resolve(credential, after), 'PROXY_EXPIRED');
      assert.equal(verifications, 2);
      // Before the chain's notBefore it is not trusted either.
      await rejectsWith(authority.resolve(credential, new Date(short.cert.notBefore.getTime() - 1000)), 'INVALID_CREDENTIAL');
    });

    it('never remembers a refusal, and looks up the DN mapping on every call', async () => {
      let mapped = true;
      const changing = { userForSubject: async () => (mapped ? 'alice' : null) };
      const authority = createProxyAuthority({ trustAnchors: [ca.cert], catalog: changing });
      const credential = { kind: 'x509-proxy', chain: [proxy.pem, alice.pem] };
      assert.equal(await authority.resolve(credential, now()), 'alice');
      mapped = false;
      await rejectsWith(authority.resolve(credential, now()), 'INVALID_CREDENTIAL', /not mapped/);
      await rejectsWith(authority.resolve({ kind: 'x509-proxy', chain: [tamper(proxy.cert), alice.pem] }, now()), 'INVALID_CREDENTIAL', /signature/);
    });
  });
});
