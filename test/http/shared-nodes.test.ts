/**
 * Two lading nodes in one process sharing a PostgreSQL catalog (a fresh schema) and an S3
 * store (a fresh key prefix), as behind a load balancer: a token issued by one works on the
 * other, what one node uploads, renames or overwrites the other serves at once, byte ranges
 * included, a share link revoked or used up on one node is refused on the other at once, what one node publishes or unpublishes is open or closed on the other at once, and a WebDAV lock taken on one node holds on the other. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips without them,
 * except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { heldUpload, startTestServer, type TestServer } from '../helpers/server.ts';
import { parsePath } from '../../src/core/path.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;
const s3 = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
  key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY,
  region: process.env.LADING_TEST_S3_REGION,
};

if (!pgUrl || !s3.endpoint || !s3.bucket || !s3.key || !s3.secret || !s3.region) {
  const message = 'two nodes on PostgreSQL and S3 need LADING_TEST_PG_URL and LADING_TEST_S3_*: run `source .ci/services/postgres.sh; source .ci/services/swift.sh` first.';
  if (process.env.CI) test('nodes sharing PostgreSQL and S3', () => assert.fail(message));
  else test('nodes sharing PostgreSQL and S3', { skip: message }, () => {});
} else {
  describe('nodes sharing PostgreSQL and S3', () => {
    const schema = `lading_test_nodes_${randomBytes(4).toString('hex')}`;
    const flags = {
      'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema,
      'resource.driver': 's3', 'resource.s3.endpoint': s3.endpoint, 'resource.s3.bucket': s3.bucket,
      'resource.s3.region': s3.region, 'resource.s3.prefix': `${schema}/`,
      'resource.s3.access_key_id': s3.key, 'resource.s3.secret_access_key': s3.secret,
    };
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    let alice: string;
    before(async () => {
      // NOTE: the nodes share their keys and CA as a deployment shares them (one mount or copies).
      dataDir = await mkdtemp(join(tmpdir(), 'lading-nodes-'));
      a = await startTestServer(flags, { dataDir, keepData: true });
      b = await startTestServer(flags, { dataDir, keepData: true });
      alice = await a.bearer('alice');
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await rm(dataDir, { recursive: true, force: true });
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    });
    const put = (url: string, body: string | Buffer) =>
      fetch(url, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
    const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers: { authorization: alice, ...headers } });

    it('serves on one node what was uploaded through the other, with ranges', async () => {
      const data = randomBytes(3 * 1024 * 1024 + 5);
      assert.equal((await put(a.home('alice', 'shared.bin'), data)).status, 200);
      const whole = await get(`${b.home('alice', 'shared.bin')}?download=true`);
      assert.equal(whole.status, 200);
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), data);
      const part = await get(`${b.home('alice', 'shared.bin')}?download=true`, { range: 'bytes=1000-1999' });
      assert.equal(part.status, 206);
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), data.subarray(1000, 2000));
    });

    it('honours on one node a WebDAV lock taken on the other, until it is released there', async () => {
      const davOf = (node: TestServer) => `${node.url}/dav/${node.zone}/home/alice/locked.txt`;
      const dav = (url: string, method: string, headers: Record<string, string> = {}, body?: string) =>
        fetch(url, { method, headers: { authorization: alice, ...headers }, body });
      assert.equal((await dav(davOf(a), 'PUT', {}, 'v1')).status, 201);
      const lock = await dav(davOf(a), 'LOCK', { timeout: 'Second-600' },
        '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>');
      assert.equal(lock.status, 200);
      const token = lock.headers.get('lock-token')!;
      assert.equal((await dav(davOf(b), 'PUT', {}, 'v2')).status, 423, 'the other node refuses a write without the token');
      assert.equal((await dav(davOf(b), 'PUT', { if: `(${token})` }, 'v2')).status, 204, 'and takes it with the token');
      assert.equal((await dav(davOf(b), 'UNLOCK', { 'lock-token': token })).status, 204);
      assert.equal((await dav(davOf(a), 'PUT', {}, 'v3')).status, 204, 'released on one node, free on the other');
    });

    it('shows a rename made on one node on the other', async () => {
      assert.equal((await put(a.home('alice', 'old.txt'), 'moved')).status, 200);
      const res = await fetch(b.home('alice', 'old.txt'), {
        method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'new.txt' }),
      });
      assert.equal(res.status, 200);
      assert.equal((await get(`${a.home('alice', 'old.txt')}?download=true`)).status, 404);
      assert.equal(await (await get(`${a.home('alice', 'new.txt')}?download=true`)).text(), 'moved');
    });

    it('publishing on one node opens the data on the other at once, and unpublishing closes it at once', async () => {
      assert.equal((await fetch(`${a.url}/api/registered`, {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/tz/home/alice/open/inner', force: true }),
      })).status, 200);
      assert.equal((await put(a.home('alice', 'open/inner/data.txt'), 'published bytes')).status, 200);
      const publicUrl = `${b.url}/api/public/tz/home/alice/open/inner/data.txt?download=true`;
      assert.equal((await fetch(publicUrl)).status, 404);
      const publish = (node: TestServer, method: string) => fetch(`${node.url}/api/publish/tz/home/alice/open`, { method, headers: { authorization: alice } });
      // Two nodes publishing at once: one records the change, the other finds it done.
      assert.deepEqual((await Promise.all([publish(a, 'PUT'), publish(b, 'PUT')])).map((r) => r.status), [200, 200]);
      const open = (await a.deps.catalog.getEntity(parsePath('/tz/home/alice/open')))!;
      assert.equal((await a.deps.catalog.publicationEvents(open.id, 10)).length, 1);
      const part = await fetch(publicUrl, { headers: { range: 'bytes=10-14' } });
      assert.equal(part.status, 206);
      assert.equal(await part.text(), 'bytes');
      assert.equal((await publish(a, 'DELETE')).status, 200);
      assert.equal((await fetch(publicUrl)).status, 404);
    });

    it('lets exactly one of concurrent uploads to one new path through two nodes win', async () => {
      const results = await Promise.all([a, b, a, b].map((node, i) => put(node.home('alice', 'race.txt'), `writer ${i}`)));
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 409, 409, 409]);
      const winner = results.findIndex((r) => r.status === 200);
      assert.equal(await (await get(`${b.home('alice', 'race.txt')}?download=true`)).text(), `writer ${winner}`);
    });

    it('refuses on one node a share link revoked or used up on the other, at once', async () => {
      assert.equal((await put(a.home('alice', 'shared-link.txt'), 'for collaborators')).status, 200);
      const create = async (body: Record<string, unknown>) => {
        const res = await fetch(`${a.url}/api/shares`, {
          method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' },
          body: JSON.stringify({ path: '/tz/home/alice/shared-link.txt', kind: 'read', ...body }),
        });
        assert.equal(res.status, 201);
        return (await res.json() as { Response: { data: { id: string; token: string } } }).Response.data;
      };
      const link = await create({});
      assert.equal(await (await fetch(`${b.url}/api/shared/${link.token}`)).text(), 'for collaborators');
      assert.equal((await fetch(`${a.url}/api/shares/${link.id}`, { method: 'DELETE', headers: { authorization: alice } })).status, 200);
      assert.equal((await fetch(`${b.url}/api/shared/${link.token}`)).status, 404, 'revoked on a, refused on b');
      assert.equal((await fetch(`${a.url}/api/shared/${link.token}`)).status, 404);

      const once = await create({ max_uses: 1 });
      const first = await fetch(`${a.url}/api/shared/${once.token}`);
      assert.equal(first.status, 200);
      await first.arrayBuffer();
      assert.equal((await fetch(`${b.url}/api/shared/${once.token}`)).status, 410, 'used up on a, gone on b');
    });

    it('a node starting up never removes an upload a live node is writing, however old, and removes what a dead node left', async () => {
      // A dead node's leftover: a stored blob it tracked, and a heartbeat long past.
      const past = new Date(Date.now() - 3_600_000);
      await a.deps.catalog.heartbeat('dead-node', past);
      await a.deps.catalog.trackBlob('leftover-of-dead-node', past, 'dead-node');
      await a.deps.resource.write('leftover-of-dead-node', Readable.from([Buffer.from('left behind')]));
      // A slow upload to node a: more than one S3 part sent, then waiting.
      const head = randomBytes(9 * 1024 * 1024);
      const tail = randomBytes(1024 * 1024);
      const upload = heldUpload(a.home('alice', 'slow.bin'), alice);
      upload.write(head);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // A third node starts with a grace period of zero: age alone would make the upload stale.
      const c = await startTestServer({ ...flags, 'recovery.grace': 0 }, { dataDir, keepData: true });
      try {
        assert.equal(await c.deps.resource.size('leftover-of-dead-node'), null, 'the dead node\'s leftover is removed');
        const tracked = (await c.deps.catalog.trackedBlobs(new Date(Date.now() + 1000))).map((t) => t.blob);
        assert.ok(!tracked.includes('leftover-of-dead-node'));
        upload.end(tail);
        const res = await upload.answer;
        assert.equal(res.status, 200, res.body);
        const whole = Buffer.concat([head, tail]);
        const expected = `sha2:${createHash('sha256').update(whole).digest('base64')}`;
        assert.equal(JSON.parse(res.body).Response.data.checksum, expected);
        const back = await get(`${c.home('alice', 'slow.bin')}?download=true`);
        assert.deepEqual(Buffer.from(await back.arrayBuffer()), whole);
      } finally {
        await c.stop();
      }
    });
  });
}
