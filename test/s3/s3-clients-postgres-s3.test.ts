/**
 * The S3 clients from Debian (see `s3-clients-suite.ts`) against two lading nodes sharing a
 * PostgreSQL catalog and an S3 object store (and one data directory, for the master key that
 * seals S3 secrets): each client writes through one node and reads through the other, and a
 * key revoked on one is refused by both. Needs `.ci/services/postgres.sh` and
 * `.ci/services/swift.sh`; skips without them, except under CI, where that fails.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { s3ClientsSuite } from './s3-clients-suite.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;
const s3 = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
  key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY,
  region: process.env.LADING_TEST_S3_REGION,
};

if (!pgUrl || !s3.endpoint || !s3.bucket || !s3.key || !s3.secret || !s3.region) {
  const message = 'the S3 clients on PostgreSQL and S3 need LADING_TEST_PG_URL and LADING_TEST_S3_*: run `source .ci/services/postgres.sh; source .ci/services/swift.sh` first.';
  if (process.env.CI) test('S3 clients on PostgreSQL and S3, two nodes', () => assert.fail(message));
  else test('S3 clients on PostgreSQL and S3, two nodes', { skip: message }, () => {});
} else {
  const schema = `lading_test_s3front_${randomBytes(4).toString('hex')}`;
  let dir: string;
  const nodes: TestServer[] = [];
  let bearer: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-s3-nodes-'));
    const flags = {
      's3.listen': '127.0.0.1:0', zone: 'lading', 'pid.rules': join(import.meta.dirname, '..', '..', 'examples', 'rules.txt'),
      'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema,
      'resource.driver': 's3', 'resource.s3.endpoint': s3.endpoint, 'resource.s3.bucket': s3.bucket,
      'resource.s3.region': s3.region, 'resource.s3.prefix': `${schema}/`,
      'resource.s3.access_key_id': s3.key, 'resource.s3.secret_access_key': s3.secret,
    };
    nodes.push(await startTestServer(flags, { dataDir: dir, keepData: true }));
    nodes.push(await startTestServer(flags, { dataDir: dir, keepData: true }));
    bearer = await nodes[0]!.bearer('alice');
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    pool.on('error', () => {});
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  s3ClientsSuite('PostgreSQL and S3, two nodes', () => ({ s3Urls: nodes.map((n) => n.s3Url!), apiUrl: nodes[1]!.url, bearer, pids: true }));
}
