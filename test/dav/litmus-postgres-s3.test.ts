/**
 * The litmus WebDAV suite (see `litmus-suite.ts`) on a PostgreSQL catalog and
 * an S3 object store. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips
 * without them, except under CI, where that fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { litmusSuite } from './litmus-suite.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;
const s3 = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
  key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY,
  region: process.env.LADING_TEST_S3_REGION,
};

if (!pgUrl || !s3.endpoint || !s3.bucket || !s3.key || !s3.secret || !s3.region) {
  const message = 'litmus on PostgreSQL and S3 need LADING_TEST_PG_URL and LADING_TEST_S3_*: run `source .ci/services/postgres.sh; source .ci/services/swift.sh` first.';
  if (process.env.CI) test('litmus on PostgreSQL and S3', () => assert.fail(message));
  else test('litmus on PostgreSQL and S3', { skip: message }, () => {});
} else {
  const schema = `lading_test_litmus_${randomBytes(4).toString('hex')}`;
  litmusSuite('PostgreSQL and S3', {
    'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema,
    'resource.driver': 's3', 'resource.s3.endpoint': s3.endpoint, 'resource.s3.bucket': s3.bucket,
    'resource.s3.region': s3.region, 'resource.s3.prefix': `${schema}/`,
    'resource.s3.access_key_id': s3.key, 'resource.s3.secret_access_key': s3.secret,
  }, async () => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    pool.on('error', () => {});
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
}
