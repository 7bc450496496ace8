/**
 * The HTTP `CertificateIssuer` against lading's own online CA endpoint over a real socket, and
 * a lading node that obtains its users' certificates from another node's CA.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ErrorCode } from '../../src/core/errors.ts';
import { subjectDn } from '../../src/identity/x509/ca.ts';
import { createHttpIssuer } from '../../src/identity/x509/issuer-http.ts';
import { generateKeyPair, parseCertificate, SIGNING_ALGORITHM, x509 } from '../../src/identity/x509/x509.ts';
import { encodeName, OID } from '../../src/identity/x509/dn.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { csrFor } from './pki.ts';

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (err: { code?: string; message?: string }) => {
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe('online CA endpoint and HTTP certificate issuer', () => {
  let server: TestServer;
  let endpoint: string;
  let secret: string;
  before(async () => {
    server = await startTestServer();
    endpoint = `${server.url}/ca/certificate`;
    secret = server.deps.caEndpoint!.secret;
  });
  after(() => server.stop());

  it('issues a certificate for the CSR\'s key, naming the user in the CA\'s namespace', async () => {
    const keys = await generateKeyPair();
    const issuer = createHttpIssuer({ url: endpoint, secret });
    const cert = parseCertificate(await issuer.issue(await csrFor('alice', keys)));
    const ca = server.deps.x509.ca!;
    assert.equal(subjectDn(cert), '/O=lading/OU=tz/CN=alice');
    assert.equal(cert.issuer, ca.cert.subject);
    assert.ok(await cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true }));
    const spki = Buffer.from(await (await import('node:crypto')).webcrypto.subtle.exportKey('spki', keys.publicKey));
    assert.deepEqual(Buffer.from(cert.publicKey.rawData), spki);
    assert.ok(cert.notAfter.getTime() - Date.now() <= 604800_000, 'a short-lived user certificate');
  });

  it('publishes the CA certificate', async () => {
    const res = await fetch(`${server.url}/ca/cacert.pem`);
    assert.equal(res.status, 200);
    assert.equal(parseCertificate(await res.text()).subject, server.deps.x509.ca!.cert.subject);
  });

  it('refuses a wrong or missing credential (401 at the endpoint, INTERNAL at the client)', async () => {
    const csr = await csrFor('alice', await generateKeyPair());
    const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/pkcs10', authorization: 'Bearer nope' }, body: csr });
    assert.equal(res.status, 401);
    assert.deepEqual(Object.keys((await json(res)).Response.errors![0]!), ['Unauthorized']);
    const anonymous = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/pkcs10' }, body: csr });
    assert.equal(anonymous.status, 401);
    await rejectsWith(createHttpIssuer({ url: endpoint, secret: secret + 'x' }).issue(csr), 'INTERNAL');
  });

  it('refuses requests that are not a self-signed CSR naming one user (BAD_REQUEST)', async () => {
    const issuer = createHttpIssuer({ url: endpoint, secret });
    await rejectsWith(issuer.issue('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n'), 'BAD_REQUEST');
    const keys = await generateKeyPair();
    const twoCns = await x509.Pkcs10CertificateRequestGenerator.create({
      name: new x509.Name(encodeName([[OID.CN, 'alice'], [OID.CN, 'bob']])), keys, signingAlgorithm: SIGNING_ALGORITHM,
    });
    await rejectsWith(issuer.issue(twoCns.toString('pem')), 'BAD_REQUEST');
    const slash = await csrFor('alice/CN=bob', keys);
    await rejectsWith(issuer.issue(slash), 'BAD_REQUEST');
    // A CSR whose signature does not match its key: proof of possession fails.
    const der = Buffer.from(x509.PemConverter.decode(await csrFor('alice', keys))[0]!);
    der[der.length - 3]! ^= 0x01;
    await rejectsWith(issuer.issue(x509.PemConverter.encode(der, 'CERTIFICATE REQUEST')), 'BAD_REQUEST');
  });

  it('reports an unreachable CA as UNAVAILABLE', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    await rejectsWith(createHttpIssuer({ url: `http://127.0.0.1:${port}/ca/certificate`, secret }).issue(await csrFor('a', await generateKeyPair())), 'UNAVAILABLE');
  });

  it('lets another lading node issue its users\' proxies through this CA', async () => {
    const node = await startTestServer({
      'ca.issuer': endpoint,
      'ca.issuer_secret_file': join(server.dataDir, 'keys', 'ca-issuer.secret'),
      'ca.trust_dir': join(server.dataDir, 'ca'),
    });
    try {
      assert.equal(node.deps.x509.ca, null);
      assert.equal(node.deps.caEndpoint, null);
      const auth = await node.bearer('dora');
      const put = await fetch(node.home('dora', 'f.txt'), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: 'hi' });
      assert.equal(put.status, 200, JSON.stringify(await json(put)));
      assert.deepEqual(await node.deps.catalog.subjectsOf('dora'), ['/O=lading/OU=tz/CN=dora']);
    } finally {
      await node.stop();
    }
  });
});
