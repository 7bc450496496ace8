/**
 * One CA for many nodes: two nodes on one PostgreSQL catalog, each started at once on an empty
 * data directory with only the shared master key, find one CA in the catalog; proxies issued
 * on either pass `openssl verify -allow_proxy_certs` against the trust anchors both serve, and
 * a token from one works on the other; the online CA endpoint's credential, derived from the
 * master key, is the same on both. After `lading ca rotate` both sign new certificates
 * with the new CA, and proxies issued before still verify against the served anchors. Needs
 * PostgreSQL (LADING_TEST_PG_URL) and openssl: skipped without them, failed under CI.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { hashToken } from '../../src/identity/sessions/sessions.ts';
import { issuerDn } from '../../src/identity/x509/ca.ts';
import { parseCertificate } from '../../src/identity/x509/x509.ts';
import type { ProxyBundle } from '../../src/identity/x509/proxy-credentials.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { runLading } from '../cli/run-lading.ts';
import { needTools } from './pki.ts';

const run = promisify(execFile);
const pgUrl = process.env.LADING_TEST_PG_URL;
const skipTools = needTools(['openssl'], 'openssl');

if (!pgUrl) {
  const message = 'one CA for nodes on PostgreSQL needs LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('one CA for nodes sharing PostgreSQL', () => assert.fail(message));
  else test('one CA for nodes sharing PostgreSQL', { skip: message }, () => {});
} else {
  describe('one CA for nodes sharing PostgreSQL', { skip: skipTools }, () => {
    const schema = `lading_test_ca_${randomBytes(4).toString('hex')}`;
    let work: string;
    let flags: Record<string, string | number>;
    let a: TestServer;
    let b: TestServer;
    /** The proxy bundle of `user`'s session of `token` on `node`. */
    const bundleOf = async (node: TestServer, token: string): Promise<ProxyBundle> => {
      const session = await node.deps.catalog.getSession(hashToken(token), new Date());
      return node.deps.x509.credentials.unseal(session!.credential!);
    };
    /** Whether openssl verifies the proxy of `bundle` against the PEM file `anchors`. */
    const verifies = async (bundle: ProxyBundle, anchors: string): Promise<boolean> => {
      const dir = await mkdtemp(join(work, 'verify-'));
      await writeFile(join(dir, 'proxy.pem'), bundle.proxy);
      await writeFile(join(dir, 'user.pem'), bundle.user);
      try {
        const { stdout } = await run('openssl', ['verify', '-allow_proxy_certs', '-CAfile', anchors, '-untrusted', join(dir, 'user.pem'), join(dir, 'proxy.pem')]);
        return stdout.trim() === `${join(dir, 'proxy.pem')}: OK`;
      } catch {
        return false;
      }
    };
    const served = async (node: TestServer, name: string): Promise<string> => {
      const res = await fetch(`${node.url}/ca/cacert.pem`);
      assert.equal(res.status, 200);
      const file = join(work, name);
      await writeFile(file, await res.text());
      return file;
    };
    const upload = async (node: TestServer, token: string, name: string): Promise<number> => {
      const res = await fetch(`${node.home('alice', name)}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: name });
      await res.arrayBuffer();
      return res.status;
    };

    before(async () => {
      work = await mkdtemp(join(tmpdir(), 'lading-ca-nodes-'));
      // The master key is all the nodes share besides the catalog (and the bytes).
      await mkdir(join(work, 'keys'), { mode: 0o700 });
      await writeFile(join(work, 'keys', 'master.key'), randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
      await mkdir(join(work, 'a'));
      await mkdir(join(work, 'b'));
      flags = {
        'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema,
        'resource.path': join(work, 'bytes'), 'credentials.key_file': join(work, 'keys', 'master.key'), 'ca.refresh': 1, zone: 'lading',
      };
      [a, b] = await Promise.all([
        startTestServer(flags, { dataDir: join(work, 'a'), keepData: true }),
        startTestServer(flags, { dataDir: join(work, 'b'), keepData: true }),
      ]);
      await a.addUser('alice');
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await rm(work, { recursive: true, force: true });
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    });

    let before1: { a: ProxyBundle; b: ProxyBundle; tokenA: string; anchors: string };

    it('starts two nodes with no CA files on one CA from the catalog; proxies of both verify against the served anchors', async () => {
      assert.equal((await a.deps.catalog.listCas()).length, 1);
      for (const dir of [a.dataDir, b.dataDir]) {
        assert.deepEqual(await readdir(join(dir, 'ca')), ['ca.pem'], 'no CA key material on disk, only the published certificate');
      }
      // The online CA endpoint's credential comes from the master key too: the same on both.
      const issuerSecret = (dir: string) => readFile(join(dir, 'keys', 'ca-issuer.secret'), 'utf8');
      assert.equal(await issuerSecret(a.dataDir), await issuerSecret(b.dataDir));
      const tokenA = await a.login('alice');
      const tokenB = await b.login('alice');
      const anchorsA = await served(a, 'anchors-a.pem');
      const anchorsB = await served(b, 'anchors-b.pem');
      assert.equal(String(await (await fetch(`${a.url}/ca/cacert.pem`)).text()), String(await (await fetch(`${b.url}/ca/cacert.pem`)).text()));
      const bundles = { a: await bundleOf(a, tokenA), b: await bundleOf(b, tokenB) };
      for (const bundle of [bundles.a, bundles.b]) {
        assert.equal(await verifies(bundle, anchorsA), true);
        assert.equal(await verifies(bundle, anchorsB), true);
      }
      // Each node's backend verifies the other's proxies.
      assert.equal(await upload(b, tokenA, 'from-a-on-b.txt'), 200);
      assert.equal(await upload(a, tokenB, 'from-b-on-a.txt'), 200);
      before1 = { ...bundles, tokenA, anchors: anchorsA };
    });

    it('lading ca rotate: both nodes sign with the new CA; proxies from before still verify against the served anchors', async () => {
      const admin = join(work, 'admin');
      await mkdir(admin);
      const rotated = await runLading(['ca', 'rotate', '--data', admin], {
        env: {
          LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: pgUrl!, LADING_CATALOG_SCHEMA: schema,
          LADING_CREDENTIALS_KEY_FILE: join(work, 'keys', 'master.key'), LADING_ZONE: 'lading', LADING_RESOURCE_PATH: join(work, 'bytes'),
        },
      });
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.match(rotated.stdout, /^the CA of generation 2 \(.*\) signs from now on; nodes take it up within ca.refresh seconds/);
      // Nodes read the catalog's CAs every ca.refresh (1 s here).
      for (let i = 0; i < 100 && (a.deps.x509.caRing!.generation() !== 2 || b.deps.x509.caRing!.generation() !== 2); i++) await sleep(100);
      const [newest, previous] = await a.deps.catalog.listCas();
      const newIssuer = issuerDn(parseCertificate(newest!.certPem));
      const oldIssuer = issuerDn(parseCertificate(previous!.certPem));
      assert.notEqual(newIssuer, oldIssuer);

      const tokenA = await a.login('alice');
      const tokenB = await b.login('alice');
      const fresh = { a: await bundleOf(a, tokenA), b: await bundleOf(b, tokenB) };
      for (const bundle of [fresh.a, fresh.b]) assert.equal(issuerDn(parseCertificate(bundle.user)), newIssuer, 'signed by the new CA');
      assert.equal(issuerDn(parseCertificate(before1.a.user)), oldIssuer);

      const anchorsA = await served(a, 'anchors-a2.pem');
      const anchorsB = await served(b, 'anchors-b2.pem');
      for (const anchors of [anchorsA, anchorsB]) {
        for (const bundle of [fresh.a, fresh.b, before1.a, before1.b]) assert.equal(await verifies(bundle, anchors), true);
      }
      // The proxies from before need the previous CA: the old anchors alone refuse the new ones.
      assert.equal(await verifies(fresh.a, before1.anchors), false);
      // The backends accept both: a token from before, and new tokens across nodes.
      assert.equal(await upload(b, before1.tokenA, 'old-token-on-b.txt'), 200);
      assert.equal(await upload(b, tokenA, 'new-a-on-b.txt'), 200);
      assert.equal(await upload(a, tokenB, 'new-b-on-a.txt'), 200);
    });
  });
}
