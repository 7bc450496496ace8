/**
 * The trash over HTTP (see `trash-suite.ts`) on a PostgreSQL catalog (`LADING_TEST_PG_URL`,
 * exported by `.ci/services/postgres.sh`), in a schema of its own dropped at the end. Skips
 * without it, except under CI, where that fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { trashSuite } from './trash-suite.ts';

const pgUrl = process.env.LADING_TEST_PG_URL;

if (!pgUrl) {
  const message = 'the trash on PostgreSQL needs LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('the trash on PostgreSQL', () => assert.fail(message));
  else test('the trash on PostgreSQL', { skip: message }, () => {});
} else {
  const schema = `lading_test_trash_${randomBytes(4).toString('hex')}`;
  trashSuite('PostgreSQL', { 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema }, async () => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    pool.on('error', () => {});
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
}
