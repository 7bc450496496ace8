/**
 * Two nodes sharing a PostgreSQL catalog (a fresh schema) and their stored bytes: a PATCH to
 * one node for an upload whose lease a request on the other holds is refused with 409 and
 * Retry-After, the seconds left on that lease, so a client waits as long as it must and no
 * longer. Needs LADING_TEST_PG_URL (`source .ci/services/postgres.sh`); skips without it,
 * except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type TestServer, heldUpload, json, startTestServer } from '../helpers/server.ts';

const OFFSET_TYPE = 'application/offset+octet-stream';
const LEASE = 30;

const pgUrl = process.env.LADING_TEST_PG_URL;
if (!pgUrl) {
  const message = 'upload leases on two nodes need LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('upload leases on nodes sharing PostgreSQL', () => assert.fail(message));
  else test('upload leases on nodes sharing PostgreSQL', { skip: message }, () => {});
} else {
  describe('upload leases on nodes sharing PostgreSQL', () => {
    const schema = `lading_test_leases_${randomBytes(4).toString('hex')}`;
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      // NOTE: the nodes share their keys, CA and stored bytes as a deployment shares them.
      dataDir = await mkdtemp(join(tmpdir(), 'lading-lease-nodes-'));
      const flags = { 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema, 'uploads.lease': LEASE, 'uploads.checkpoint_bytes': 1024 };
      a = await startTestServer(flags, { dataDir, keepData: true });
      b = await startTestServer(flags, { dataDir, keepData: true });
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

    it('refuses a PATCH on one node while a request on the other holds the upload, with Retry-After the seconds left on its lease', async () => {
      const auth = await a.bearer('nell');
      const tus = { 'tus-resumable': '1.0.0', authorization: auth };
      const create = await fetch(`${a.url}/api/uploads`, {
        method: 'POST', headers: { ...tus, 'upload-length': '100000', 'upload-metadata': `filename ${Buffer.from('held.bin').toString('base64')}` },
      });
      assert.equal(create.status, 201);
      const path = new URL(create.headers.get('location')!).pathname;
      const held = heldUpload(`${a.url}${path}`, auth, {
        method: 'PATCH', contentLength: 100_000, headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': OFFSET_TYPE },
      });
      held.answer.catch(() => {});
      try {
        await held.write(Buffer.alloc(10_000, 1));
        const offset = async () => Number((await fetch(`${b.url}${path}`, { method: 'HEAD', headers: tus })).headers.get('upload-offset'));
        for (let i = 0; i < 100 && (await offset()) < 10_000; i++) await sleep(50);
        assert.equal(await offset(), 10_000, 'node b sees the bytes node a recorded');
        const refused = await fetch(`${b.url}${path}`, { method: 'PATCH', headers: { ...tus, 'upload-offset': '10000', 'content-type': OFFSET_TYPE }, body: Buffer.alloc(10, 2) });
        assert.equal(refused.status, 409);
        const body = await json(refused);
        assert.equal(body.Meta.status, 409);
        assert.match(Object.values(body.Response.errors![0]!)[0]!, /already running/);
        const retryAfter = refused.headers.get('retry-after');
        assert.match(retryAfter ?? '', /^\d+$/, `Retry-After is a number of seconds: ${retryAfter}`);
        assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= LEASE, `Retry-After ${retryAfter} is what is left of a ${LEASE} s lease`);
      } finally {
        held.end(Buffer.alloc(90_000, 1));
        await held.answer.catch(() => {});
      }
    });
  });
}
