/**
 * Quotas under racing writers: two lading nodes sharing a PostgreSQL catalog (a fresh schema,
 * `LADING_TEST_PG_URL`) and one data directory (a shared POSIX mount), and on every write path
 * — a raw PUT, a form, a resumable upload, a copy, a move, a drop-box deposit, a WebDAV PUT and
 * an S3 PutObject — 16 writers at once, half on each node, whose objects together are over the
 * quota: as many succeed as fit, the others get 507, the usage is at most the quota and is the
 * sum of what is there (a recount agrees), and nothing refused is left. Skips without
 * PostgreSQL, except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { makeKey } from '../s3/s3-clients-suite.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;
const WRITERS = 16;
const SIZE = 10;
/** Room for this many of the writers' objects. */
const FITS = 7;

if (!pgUrl) {
  const message = 'quotas under racing writers on two nodes need LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('quotas under racing writers on two PostgreSQL nodes', () => assert.fail(message));
  else test('quotas under racing writers on two PostgreSQL nodes', { skip: message }, () => {});
} else {
  describe('quotas under racing writers on two PostgreSQL nodes', () => {
    const schema = `lading_test_quota_race_${randomBytes(4).toString('hex')}`;
    const flags = { 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema, 'resource.fsync': false, 's3.listen': '127.0.0.1:0' };
    const home = '/tz/home/alice';
    let dataDir: string;
    let nodes: TestServer[];
    let s3: S3Client[];
    let alice: string;
    let n = 0;

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'lading-quota-race-'));
      nodes = [await startTestServer(flags, { dataDir, keepData: true }), await startTestServer(flags, { dataDir, keepData: true })];
      alice = await nodes[0]!.bearer('alice');
      const key = await makeKey(nodes[0]!.url, alice);
      s3 = nodes.map((node) => new S3Client({
        endpoint: node.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: key.id, secretAccessKey: key.secret },
      }));
    });
    after(async () => {
      for (const c of s3 ?? []) c.destroy();
      for (const node of nodes ?? []) await node.stop();
      await rm(dataDir, { recursive: true, force: true });
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    });

    const node = (i: number) => nodes[i % 2]!;
    const body = (i: number) => String(i % 10).repeat(SIZE);
    const call = (i: number, method: string, path: string, payload: unknown) => fetch(`${node(i).url}${path}`, {
      method, headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify(payload),
    });
    const mkdir = async (rest: string) => assert.equal((await call(0, 'POST', '/api/registered', { path: `${home}/${rest}` })).status, 200);
    const put = (i: number, rest: string) => fetch(node(i).home('alice', rest), {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: body(i),
    });

    /**
     * Runs `WRITERS` writers at once (writer `i` on node `i % 2`) into a fresh collection with
     * room for `FITS` objects; each resolves to its status (200–201 for stored, 507 for refused).
     */
    async function race(write: (i: number, q: string) => Promise<number>, prepare: (q: string) => Promise<void> = async () => {}): Promise<void> {
      const q = `race${++n}`;
      await mkdir(q);
      await prepare(q);
      await nodes[1]!.deps.quotas.set(`${home}/${q}`, { maxBytes: FITS * SIZE });
      const statuses = await Promise.all(Array.from({ length: WRITERS }, (_, i) => write(i, q)));
      const stored = statuses.filter((s) => s === 200 || s === 201).length;
      assert.deepEqual(statuses.filter((s) => s !== 200 && s !== 201 && s !== 507), [], `only stored or 507: ${statuses.join(' ')}`);
      assert.equal(stored, FITS, `as many as fit were stored: ${statuses.join(' ')}`);
      const counted = await nodes[0]!.deps.quotas.get(`${home}/${q}`);
      assert.deepEqual({ bytes: counted!.bytes, objects: counted!.objects }, { bytes: FITS * SIZE, objects: FITS });
      const listed = (await nodes[0]!.deps.catalog.listChildren(`${home}/${q}` as never)).filter((e) => e.kind === 'dataobject');
      assert.equal(listed.length, FITS, 'nothing refused was left');
      const recounted = await nodes[0]!.deps.quotas.set(`${home}/${q}`, { maxBytes: FITS * SIZE });
      assert.deepEqual({ bytes: recounted.bytes, objects: recounted.objects }, { bytes: FITS * SIZE, objects: FITS }, 'a recount agrees');
    }

    it('holds for raw PUTs', async () => {
      await race(async (i, q) => (await put(i, `${q}/f${i}`)).status);
    });

    it('holds for form uploads', async () => {
      await race(async (i, q) => {
        const form = new FormData();
        form.append('file', new Blob([body(i)]), `f${i}`);
        return (await fetch(`${node(i).home('alice', q)}/`, { method: 'PUT', headers: { authorization: alice }, body: form })).status;
      });
    });

    it('holds for resumable uploads', async () => {
      await race(async (i, q) => (await fetch(`${node(i).url}/api/uploads`, {
        method: 'POST', body: body(i),
        headers: {
          authorization: alice, 'tus-resumable': '1.0.0', 'upload-length': String(SIZE), 'content-type': 'application/offset+octet-stream',
          'upload-metadata': `path ${Buffer.from(`${home}/${q}/f${i}`).toString('base64')}`,
        },
      })).status);
    });

    it('holds for copies', async () => {
      await race(async (i, q) => (await call(i, 'POST', `/api/registered${home}/${q}-src/f${i}`, { copy_to: `${home}/${q}` })).status, async (q) => {
        await mkdir(`${q}-src`);
        for (let i = 0; i < WRITERS; i++) assert.equal((await put(i, `${q}-src/f${i}`)).status, 200);
      });
    });

    it('holds for moves', async () => {
      await race(async (i, q) => (await call(i, 'PATCH', `/api/registered${home}/${q}-src/f${i}`, { destination: `${home}/${q}` })).status, async (q) => {
        await mkdir(`${q}-src`);
        for (let i = 0; i < WRITERS; i++) assert.equal((await put(i, `${q}-src/f${i}`)).status, 200);
      });
    });

    it('holds for drop-box deposits', async () => {
      let token = '';
      await race(async (i) => (await fetch(`${node(i).url}/api/shared/${token}/f${i}`, {
        method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: body(i),
      })).status, async (q) => {
        const made = await call(0, 'POST', '/api/shares', { path: `${home}/${q}`, kind: 'upload' });
        const data = (await json(made)).Response.data as { url: string };
        assert.equal(made.status, 201);
        token = new URL(data.url).pathname.split('/').pop()!;
      });
    });

    it('holds for WebDAV PUTs', async () => {
      await race(async (i, q) => (await fetch(`${node(i).url}/dav${home}/${q}/f${i}`, { method: 'PUT', headers: { authorization: alice }, body: body(i) })).status);
    });

    it('holds for S3 PutObject', async () => {
      await race(async (i, q) => {
        try {
          await s3[i % 2]!.send(new PutObjectCommand({ Bucket: 'alice', Key: `${q}/f${i}`, Body: body(i) }));
          return 200;
        } catch (err) {
          return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
        }
      });
    });
  });
}
