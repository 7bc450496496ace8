/**
 * A PostgreSQL catalog and an S3 store for a test, from the services `.ci/services/postgres.sh`
 * and `.ci/services/swift.sh` start: the configuration flags of a node on both, in a schema and
 * under a prefix of its own, and the dropping of that schema afterwards. Without the services it
 * registers one test that says what to start: skipped locally, failed under CI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface PostgresS3 {
  pgUrl: string;
  schema: string;
  s3: { endpoint: string; bucket: string; key: string; secret: string; region: string };
  /** A node's flags: the catalog in `schema`, the bytes under the prefix `<schema>/`. */
  flags: Record<string, string>;
  /** Drops `schema` and everything in it; never fails. */
  dropSchema(): Promise<void>;
}

/**
 * The services for the test named `title`, with a new schema named after `tag`; or null, once a
 * test saying what is missing (as `what`: "move and copy on PostgreSQL and S3 need …") is registered.
 */
export function postgresS3(title: string, what: string, tag: string): PostgresS3 | null {
  const env = process.env;
  const pgUrl = env.LADING_TEST_PG_URL;
  const endpoint = env.LADING_TEST_S3_ENDPOINT, bucket = env.LADING_TEST_S3_BUCKET, key = env.LADING_TEST_S3_ACCESS_KEY;
  const secret = env.LADING_TEST_S3_SECRET_KEY, region = env.LADING_TEST_S3_REGION;
  if (!pgUrl || !endpoint || !bucket || !key || !secret || !region) {
    const message = `${what} LADING_TEST_PG_URL and LADING_TEST_S3_*: run \`source .ci/services/postgres.sh; source .ci/services/swift.sh\` first.`;
    if (env.CI) test(title, () => assert.fail(message));
    else test(title, { skip: message }, () => {});
    return null;
  }
  const schema = `lading_test_${tag}_${randomBytes(4).toString('hex')}`;
  return {
    pgUrl, schema, s3: { endpoint, bucket, key, secret, region },
    flags: {
      'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema,
      'resource.driver': 's3', 'resource.s3.endpoint': endpoint, 'resource.s3.bucket': bucket,
      'resource.s3.region': region, 'resource.s3.prefix': `${schema}/`,
      'resource.s3.access_key_id': key, 'resource.s3.secret_access_key': secret,
    },
    async dropSchema() {
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    },
  };
}
