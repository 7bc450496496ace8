/**
 * `lading serve --check`, run as a user runs it (`bin/lading`): a non-zero exit and a message
 * naming the unreachable part for PostgreSQL and S3, no secret in the output, and a zero exit
 * with a report when PostgreSQL and the S3 server of the tests (`.ci/services/*.sh`) answer.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { runLading } from './run-lading.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-check-'));
after(() => rm(dir, { recursive: true, force: true }));

const lading = (args: string[], env: Record<string, string>) => runLading(args, { env });

describe('lading serve --check', () => {
  it('exits non-zero naming PostgreSQL when the catalog is unreachable, without printing the password', async () => {
    const res = await lading(['serve', '--check', '--data', join(dir, 'pg')], {
      LADING_CATALOG_DRIVER: 'postgres',
      LADING_CATALOG_URL: 'postgresql://lading:pw-not-to-print@127.0.0.1:1/lading',
    });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /PostgreSQL/);
    assert.doesNotMatch(res.stdout, /configuration ok/);
    assert.ok(!(res.stdout + res.stderr).includes('pw-not-to-print'), 'the password is not printed');
  });

  it('exits non-zero naming S3 when the object store is unreachable, without printing the secret key', async () => {
    const res = await lading(['serve', '--check', '--data', join(dir, 's3')], {
      LADING_RESOURCE_DRIVER: 's3',
      LADING_RESOURCE_S3_ENDPOINT: 'http://127.0.0.1:1',
      LADING_RESOURCE_S3_BUCKET: 'b',
      LADING_RESOURCE_S3_ACCESS_KEY_ID: 'id',
      LADING_RESOURCE_S3_SECRET_ACCESS_KEY: 'secret-not-to-print',
    });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /S3/);
    assert.ok(!(res.stdout + res.stderr).includes('secret-not-to-print'));
  });

  it('names the missing settings of an incomplete S3 configuration', async () => {
    const res = await lading(['serve', '--check', '--data', join(dir, 'cfg')], { LADING_RESOURCE_DRIVER: 's3' });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /resource\.s3\.endpoint/);
    assert.match(res.stderr, /resource\.s3\.bucket/);
  });

  const pgUrl = process.env.LADING_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
  const s3 = {
    endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
    key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY,
  };
  const s3Missing = !s3.endpoint || !s3.bucket || !s3.key || !s3.secret;
  const skip = s3Missing && !process.env.CI
    ? 'no S3 server for the tests (LADING_TEST_S3_* not set); run `source .ci/services/swift.sh` first.'
    : false;
  it('reports success on a reachable PostgreSQL catalog and S3 store', { skip }, async () => {
    assert.ok(!s3Missing, 'LADING_TEST_S3_* are set (run `source .ci/services/swift.sh`)');
    const schema = `lading_test_check_${randomBytes(4).toString('hex')}`;
    try {
      const res = await lading(['serve', '--check', '--data', join(dir, 'ok')], {
        LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: pgUrl, LADING_CATALOG_SCHEMA: schema,
        LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: s3.endpoint!, LADING_RESOURCE_S3_BUCKET: s3.bucket!,
        LADING_RESOURCE_S3_ACCESS_KEY_ID: s3.key!, LADING_RESOURCE_S3_SECRET_ACCESS_KEY: s3.secret!,
        LADING_RESOURCE_S3_PREFIX: `${schema}/`,
      });
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /PostgreSQL catalog/);
      assert.match(res.stdout, /S3 resource/);
      assert.match(res.stdout, /configuration ok/);
    } finally {
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    }
  });
});
