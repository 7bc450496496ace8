/**
 * Interoperability with real grid tools from Debian's packages (openssl, globus-proxy-utils):
 * lading's proxies pass `openssl verify -allow_proxy_certs` and read as RFC 3820 proxies in
 * `grid-proxy-info`; a proxy made by `grid-proxy-init` from a lading user certificate is
 * accepted by lading's backend; `grid-proxy-init -verify` checks the chain against lading's CA
 * as `lading ca export` writes it; `lading proxy show` prints what the backend sees. Skipped
 * locally when the tools are missing; in CI a missing tool fails the suite.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hashToken } from '../../src/identity/sessions/sessions.ts';
import type { ProxyBundle } from '../../src/identity/x509/proxy-credentials.ts';
import { subjectDn } from '../../src/identity/x509/ca.ts';
import { subjectHash } from '../../src/identity/x509/dn.ts';
import { certificateNames } from '../../src/identity/x509/der.ts';
import { certificatesInPem, parseCertificate } from '../../src/identity/x509/x509.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { needTools } from './pki.ts';

const run = promisify(execFile);
const LADING = join(import.meta.dirname, '..', '..', 'bin', 'lading');
const skip = needTools(['openssl', 'grid-proxy-info', 'grid-proxy-init'], 'openssl globus-proxy-utils');

describe('interoperability with openssl and Globus', { skip }, () => {
  let server: TestServer;
  let work: string;
  let bundle: ProxyBundle;
  const env = (extra: Record<string, string>) => ({ ...process.env, HOME: work, ...extra });

  before(async () => {
    server = await startTestServer({}, { keepData: true });
    await server.addUser('alice');
    const token = await server.login('alice');
    const session = await server.deps.catalog.getSession(hashToken(token), new Date());
    bundle = server.deps.x509.credentials.unseal(session!.credential!);
    work = await mkdtemp(join(tmpdir(), 'lading-interop-'));
    await writeFile(join(work, 'x509up'), bundle.proxy + bundle.proxyKey + bundle.user, { mode: 0o600 });
    await writeFile(join(work, 'proxy.pem'), bundle.proxy);
    await writeFile(join(work, 'usercert.pem'), bundle.user);
    await writeFile(join(work, 'userkey.pem'), bundle.userKey, { mode: 0o400 });
  });
  after(async () => {
    await server.stop().catch(() => {});
    await rm(server.dataDir, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  it('lading\'s proxy passes openssl verify -allow_proxy_certs against the CA', async () => {
    const { stdout } = await run('openssl', ['verify', '-allow_proxy_certs', '-CAfile', join(server.dataDir, 'ca', 'ca.pem'),
      '-untrusted', join(work, 'usercert.pem'), join(work, 'proxy.pem')]);
    assert.equal(stdout.trim(), `${join(work, 'proxy.pem')}: OK`);
    // Without proxy support OpenSSL must refuse it: proof that it is checked as a proxy.
    await assert.rejects(run('openssl', ['verify', '-CAfile', join(server.dataDir, 'ca', 'ca.pem'), '-untrusted', join(work, 'usercert.pem'), join(work, 'proxy.pem')]));
  });

  it('grid-proxy-info reads it as an RFC 3820 proxy with the configured time left', async () => {
    const file = join(work, 'x509up');
    const { stdout } = await run('grid-proxy-info', ['-file', file], { env: env({}) });
    assert.match(stdout, /^type\s*: RFC 3820 compliant impersonation proxy$/m);
    assert.match(stdout, /^identity\s*: \/O=lading\/OU=tz\/CN=alice$/m);
    const left = Number((await run('grid-proxy-info', ['-file', file, '-timeleft'], { env: env({}) })).stdout.trim());
    assert.ok(left > 43200 - 120 && left <= 43200, `timeleft ${left}`);
  });

  it('lading ca export writes the grid-security layout; the hash is openssl\'s subject hash', async () => {
    const certs = join(work, 'certificates');
    const { stdout } = await run(LADING, ['ca', 'export', certs, '--data', server.dataDir], { env: env({}) });
    const caPem = await readFile(join(server.dataDir, 'ca', 'ca.pem'), 'utf8');
    const hash = (await run('openssl', ['x509', '-noout', '-subject_hash', '-in', join(server.dataDir, 'ca', 'ca.pem')])).stdout.trim();
    assert.equal(subjectHash(certificateNames(Buffer.from(parseCertificate(caPem).rawData)).subject), hash);
    assert.deepEqual((await readdir(certs)).sort(), [`${hash}.0`, `${hash}.signing_policy`]);
    assert.equal(stdout, `wrote ${hash}.0\nwrote ${hash}.signing_policy\n`);
    assert.equal(await readFile(join(certs, `${hash}.0`), 'utf8'), caPem);
  });

  it('grid-proxy-init -verify makes a proxy from the lading user certificate that lading\'s backend accepts', async () => {
    const certs = join(work, 'certificates');
    await run(LADING, ['ca', 'export', certs, '--data', server.dataDir], { env: env({}) });
    const out = join(work, 'x509up_globus');
    const { stdout } = await run('grid-proxy-init', ['-verify', '-hours', '1'], {
      env: env({ X509_USER_CERT: join(work, 'usercert.pem'), X509_USER_KEY: join(work, 'userkey.pem'), X509_CERT_DIR: certs, X509_USER_PROXY: out }),
    });
    assert.match(stdout, /Proxy Verify OK/);
    const chain = certificatesInPem(await readFile(out, 'utf8')).map((c) => c.toString('pem'));
    assert.equal(chain.length, 2);
    assert.equal(subjectDn(parseCertificate(chain[1]!)), '/O=lading/OU=tz/CN=alice');
    assert.equal(await server.deps.x509.authority.resolve({ kind: 'x509-proxy', chain }, new Date()), 'alice');
    // And Globus refuses the chain against a trust directory without lading's CA.
    const empty = join(work, 'empty-certificates');
    await run('mkdir', ['-p', empty]);
    await assert.rejects(run('grid-proxy-init', ['-verify', '-hours', '1'], {
      env: env({ X509_USER_CERT: join(work, 'usercert.pem'), X509_USER_KEY: join(work, 'userkey.pem'), X509_CERT_DIR: empty, X509_USER_PROXY: out + '2' }),
    }));
  });

  it('lading proxy show prints the subject, issuer and time left the backend sees', async () => {
    const { stdout } = await run(LADING, ['proxy', 'show', 'alice', '--data', server.dataDir], { env: env({}) });
    assert.match(stdout, new RegExp(`^subject  : ${subjectDn(parseCertificate(bundle.proxy)).replace(/\//g, '\\/')}$`, 'm'));
    assert.match(stdout, /^issuer   : \/O=lading\/OU=tz\/CN=alice$/m);
    assert.match(stdout, /^timeleft : 11:5\d:\d\d$/m);
    await server.addUser('bob');
    await assert.rejects(run(LADING, ['proxy', 'show', 'bob', '--data', server.dataDir], { env: env({}) }), /no live session/);
    await assert.rejects(run(LADING, ['proxy', 'show', 'nobody', '--data', server.dataDir], { env: env({}) }), /no user 'nobody'/);
  });
});
