/**
 * A suite of HTTP tests run once more on a PostgreSQL catalog (`LADING_TEST_PG_URL`, exported by
 * `.ci/services/postgres.sh`), in a schema of its own that is dropped at the end. Without the
 * variable the suite is skipped with a message, except under CI, where that fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Calls `suite` with the server flags of a fresh schema and its cleanup, or registers the skip (`what`: the suite's name). */
export function onPostgres(what: string, tag: string, suite: (flags: Record<string, unknown>, cleanup: () => Promise<void>) => void): void {
  const pgUrl = process.env.LADING_TEST_PG_URL;
  if (!pgUrl) {
    const message = `${what} on PostgreSQL needs LADING_TEST_PG_URL: run \`source .ci/services/postgres.sh\` first.`;
    if (process.env.CI) test(`${what} on PostgreSQL`, () => assert.fail(message));
    else test(`${what} on PostgreSQL`, { skip: message }, () => {});
    return;
  }
  const schema = `lading_test_${tag}_${randomBytes(4).toString('hex')}`;
  suite({ 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema }, async () => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    pool.on('error', () => {});
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
}
