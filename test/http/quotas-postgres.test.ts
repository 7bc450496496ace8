/**
 * Quotas over every write path (see `quotas-suite.ts`) on a PostgreSQL catalog
 * (`LADING_TEST_PG_URL`), in a schema of its own dropped at the end. Skips without it, except
 * under CI, where that fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { quotasSuite } from './quotas-suite.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;

if (!pgUrl) {
  const message = 'quotas on PostgreSQL need LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('quotas on PostgreSQL', () => assert.fail(message));
  else test('quotas on PostgreSQL', { skip: message }, () => {});
} else {
  const schema = `lading_test_quotas_${randomBytes(4).toString('hex')}`;
  quotasSuite('PostgreSQL', { 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema }, async () => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    pool.on('error', () => {});
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
}
