/**
 * End to end over HTTP, the whole server with a proxy lifetime of two seconds and a test
 * clock: operations succeed, then fail with the spec's expired-proxy envelope (section 7),
 * `POST /auth/proxy` regenerates (4.9), operations succeed again, and a second POST finds the
 * proxy still valid. Also: regeneration under concurrent calls from two processes, the
 * operator's view (`lading proxy show`), and that no private key is stored in the clear.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProxyCredentials } from '../../src/identity/x509/proxy-credentials.ts';
import { createSealer } from '../../src/identity/secrets/sealing.ts';
import { SessionService, hashToken } from '../../src/identity/sessions/sessions.ts';
import { LoginService } from '../../src/identity/sessions/login.ts';
import { proxyShow } from '../../src/cli/credential-commands.ts';
import type { CredentialManager } from '../../src/core/ports.ts';
import type { Clock } from '../../src/core/ports.ts';
import { createLocalIssuer } from '../../src/identity/x509/issuer-local.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { testCa } from './pki.ts';

const silentLog = { info() {}, warn() {} };

function testClock(start = Date.now()): Clock & { advance(ms: number): void } {
  let t = start;
  return { now: () => new Date(t), advance: (ms) => { t += ms; } };
}

const REFRESH = "To refresh the proxy make 'POST' on URI '/auth/proxy'";

describe('proxy lifecycle over HTTP (spec 3, 4.9, 7)', () => {
  const clock = testClock();
  let server: TestServer;
  let auth: string;
  before(async () => {
    server = await startTestServer({ 'proxy.lifetime': 2 }, { overrides: { clock } });
    auth = await server.bearer('alice');
  });
  after(() => server.stop());

  const put = (name: string, body: string) => fetch(server.home('alice', name), {
    method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body,
  });
  const refresh = () => fetch(`${server.url}/auth/proxy`, { method: 'POST', headers: { authorization: auth } });

  it('walks: works → expires → 500 envelope → regenerated → works → still valid', async () => {
    assert.equal((await put('one.txt', 'first')).status, 200);

    clock.advance(3 * 60_000 + 2_500);
    const shown = await proxyShow(server.deps, 'alice', clock.now());
    const subject = /^subject  : (.*)$/m.exec(shown)![1]!;
    assert.match(subject, /^\/O=lading\/OU=tz\/CN=alice\/CN=\d+$/);
    assert.match(shown, /^timeleft : 0:00:00 \(expired 3 minutes ago\)$/m);

    for (const res of [await put('two.txt', 'second'), await fetch(server.home('alice', 'one.txt'), { headers: { authorization: auth } })]) {
      assert.equal(res.status, 500);
      assert.deepEqual(await json(res), {
        Meta: { data_type: "<class 'NoneType'>", elements: 0, errors: 1, status: 500 },
        Response: { data: null, errors: [{ 'Expired proxy credential': `'${subject}' became invalid 3 minutes ago.\n${REFRESH}` }] },
      });
    }
    assert.equal((await server.deps.catalog.getEntity(`/tz/home/alice/two.txt` as never)), null, 'nothing stored with an expired proxy');

    const first = await refresh();
    assert.equal(first.status, 200);
    assert.deepEqual((await json(first)).Response.data, { Completed: 'New proxy was generated.' });

    assert.equal((await put('two.txt', 'second')).status, 200);
    const back = await fetch(server.home('alice', 'two.txt') + '?download=true', { headers: { authorization: auth } });
    assert.equal(back.status, 200);
    assert.equal(await back.text(), 'second');

    const second = await refresh();
    assert.equal(second.status, 200);
    assert.deepEqual((await json(second)).Response.data, { Completed: 'Current proxy is still valid.' });

    const after = await proxyShow(server.deps, 'alice', clock.now());
    assert.notEqual(/^subject  : (.*)$/m.exec(after)![1], subject, 'a new proxy, with a new serial');
    assert.match(after, /^issuer   : \/O=lading\/OU=tz\/CN=alice$/m);
    assert.match(after, /^timeleft : 0:00:0[12]$/m);
  });

  it('answers POST /auth/proxy only with a valid bearer token', async () => {
    const res = await fetch(`${server.url}/auth/proxy`, { method: 'POST' });
    assert.equal(res.status, 401);
    const bad = await fetch(`${server.url}/auth/proxy`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    assert.equal(bad.status, 401);
  });

  it('answers every one of many concurrent calls with the regenerated proxy, which then works', async () => {
    clock.advance(10_000);
    const answers = await Promise.all(Array.from({ length: 6 }, async () => (await json(await refresh())).Response.data.Completed));
    assert.deepEqual(answers, Array(6).fill('New proxy was generated.'));
    assert.equal((await put('three.txt', 'third')).status, 200);
    assert.equal((await json(await refresh())).Response.data.Completed, 'Current proxy is still valid.');
  });

  it('keeps every private key sealed at rest', async () => {
    const files = [join(server.dataDir, 'catalog.sqlite'), join(server.dataDir, 'catalog.sqlite-wal')];
    for (const f of files) {
      const bytes = await readFile(f).catch(() => Buffer.alloc(0));
      assert.ok(!bytes.includes('PRIVATE KEY'), `${f} holds a key in the clear`);
    }
    // The CA is in the catalog, its key sealed; the data directory has only the published certificate.
    const [ca] = await server.deps.catalog.listCas();
    assert.ok(ca!.certPem.includes('BEGIN CERTIFICATE'));
    assert.ok(!ca!.sealedKey.includes('PRIVATE KEY'));
    assert.equal((await stat(join(server.dataDir, 'keys', 'master.key'))).mode & 0o777, 0o600);
    assert.deepEqual((await readdir(join(server.dataDir, 'ca'))).sort(), ['ca.pem']);
  });
});

describe('proxy regeneration across processes', () => {
  it('two processes refreshing one session store one proxy and lose none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-cas-'));
    try {
      const clock = testClock();
      const file = join(dir, 'catalog.sqlite');
      const catalogs = [createSqliteCatalog({ file }), createSqliteCatalog({ file })];
      const ca = await testCa('tz', new Date(clock.now().getTime() - 60_000));
      const issued: string[] = [];
      const services = catalogs.map((catalog) => {
        const real = createProxyCredentials({
          issuer: createLocalIssuer({ ca, clock, lifetimeSeconds: 3600 }), sealer: createSealer(Buffer.alloc(32, 7)), catalog, proxyLifetimeSeconds: 2,
        });
        const counting: CredentialManager = { ...real, issue: async (u, now) => { const s = await real.issue(u, now); issued.push(s); return s; } };
        const login = new LoginService({ catalog, clock, logger: silentLog, maxFailedLogins: 5 });
        return new SessionService({ catalog, clock, credentials: counting, tokenTtlSeconds: 3600, login });
      });
      await catalogs[0]!.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: clock.now() });
      const token = await services[0]!.open('alice');
      clock.advance(5_000);
      const outcomes = await Promise.all([0, 1, 0, 1, 0, 1].map((i) => services[i]!.refresh(token)));
      assert.deepEqual(outcomes, Array(6).fill('regenerated'));
      // One login plus at most one regeneration per process; exactly one of them is stored.
      assert.ok(issued.length <= 3, `issued ${issued.length}`);
      const stored = (await catalogs[1]!.getSession(hashToken(token), clock.now()))!.credential!;
      assert.ok(issued.slice(1).includes(stored));
      assert.equal(await services[1]!.refresh(token), 'valid');
      assert.equal(await services[0]!.refresh(token), 'valid');
      for (const c of catalogs) await c.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
