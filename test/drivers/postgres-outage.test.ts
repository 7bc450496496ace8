/**
 * The PostgreSQL catalog when PostgreSQL goes away under it, driven through a TCP relay to the
 * shared test server (`LADING_TEST_PG_URL`) that the test cuts and refuses (`tcp-link.ts`), so
 * the server itself is never stopped: a connection lost in the middle of a transaction ends
 * no process and commits nothing; every call meanwhile rejects with `UNAVAILABLE`, and works
 * again once PostgreSQL can be reached; a COMMIT whose answer is lost says it may have been
 * carried out; and job events come back by themselves after the channel was lost. Each
 * catalog lives in a fresh schema, dropped at the end. Skips when PostgreSQL is unreachable,
 * except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isLadingError } from '../../src/core/errors.ts';
import { parsePath } from '../../src/core/path.ts';
import type { JobEvent } from '../../src/core/catalog.ts';
import { createPostgresCatalog } from '../../src/drivers/catalog/postgres.ts';
import { openPostgres } from '../../src/drivers/catalog/postgres/connection.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';
import { type TcpLink, startTcpLink } from '../helpers/tcp-link.ts';

const url = process.env.LADING_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const runId = randomBytes(4).toString('hex');
const schemas: string[] = [];
const freshSchema = (): string => {
  const s = `lading_test_outage_${runId}_${schemas.length}`;
  schemas.push(s);
  return s;
};

async function direct<T extends Record<string, unknown>>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Polls `probe` every 50 ms for at most `ms`; false when it never held. */
async function eventually(ms: number, probe: () => boolean): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (probe()) return true;
  return probe();
}

const problem = await direct('SELECT 1').then(() => null, (err: unknown) => (err as Error).message || String(err));
if (problem !== null) {
  const message = `PostgreSQL is not reachable at LADING_TEST_PG_URL (${problem}); run \`source .ci/services/postgres.sh\` or start PostgreSQL on 127.0.0.1:5432 with a database 'test'.`;
  if (process.env.CI) test('PostgreSQL catalog when PostgreSQL goes away', () => assert.fail(message));
  else test('PostgreSQL catalog when PostgreSQL goes away', { skip: message }, () => {});
} else {
  describe('PostgreSQL catalog when PostgreSQL goes away', { timeout: 120_000 }, () => {
    let link: TcpLink;
    let relayed: string;
    before(async () => {
      const target = new URL(url);
      link = await startTcpLink({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(link.port);
      relayed = through.toString();
    });
    after(async () => {
      await link.close();
      for (const s of schemas) await direct(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    });

    it('a connection lost between two statements of a transaction ends no process, commits nothing, and rejects with UNAVAILABLE', async () => {
      const db = await openPostgres({ schema: freshSchema(), maxConnections: 2, connectionString: relayed });
      try {
        await db.pool.query(`CREATE TABLE ${db.S}probe (v INTEGER)`);
        const failure = await db.tx(async (c) => {
          await c.query(`INSERT INTO ${db.S}probe VALUES (1)`);
          // PostgreSQL goes away while the transaction holds its connection, idle between statements.
          link.refuse(true);
          link.cut();
          await sleep(300);
          await c.query(`INSERT INTO ${db.S}probe VALUES (2)`);
        }).then(() => null, (err: unknown) => err);
        assert.ok(isLadingError(failure, 'UNAVAILABLE'), `rejects with UNAVAILABLE, not ${String(failure)}`);
        link.refuse(false);
        assert.deepEqual(await direct(`SELECT v FROM ${db.S}probe`), [], 'nothing was committed');
        await db.tx((c) => c.query(`INSERT INTO ${db.S}probe VALUES (3)`));
        assert.deepEqual(await direct(`SELECT v FROM ${db.S}probe`), [{ v: 3 }], 'the next transaction works');
      } finally {
        link.refuse(false);
        await db.close();
      }
    });

    it('rejects every call with UNAVAILABLE while PostgreSQL cannot be reached, and serves again by itself once it can', async () => {
      const catalog = await createPostgresCatalog({ connectionString: relayed, schema: freshSchema() });
      const now = new Date();
      try {
        await catalog.createCollection({ path: parsePath('/z'), owner: 'root', now });
        link.refuse(true);
        link.cut();
        await rejectsWith(catalog.getEntity(parsePath('/z')), 'UNAVAILABLE');
        await rejectsWith(catalog.createCollection({ path: parsePath('/z/a'), owner: 'root', now }), 'UNAVAILABLE');
        await rejectsWith(catalog.enqueueJobs([{ kind: 'rule', payload: '{}' }], now), 'UNAVAILABLE');
        await rejectsWith(catalog.heartbeat('node-a', now), 'UNAVAILABLE');
        link.refuse(false);
        assert.equal((await catalog.getEntity(parsePath('/z')))?.kind, 'collection');
        assert.equal((await catalog.createCollection({ path: parsePath('/z/a'), owner: 'root', now })).path, '/z/a');
      } finally {
        link.refuse(false);
        await catalog.close();
      }
    });

    it('says that a COMMIT whose answer was lost may have been carried out', async () => {
      const db = await openPostgres({ schema: freshSchema(), maxConnections: 2, connectionString: relayed });
      try {
        await db.pool.query(`CREATE TABLE ${db.S}probe (v INTEGER)`);
        const cut = link.cutAfter(Buffer.from('COMMIT\0'));
        const failure = await db.tx((c) => c.query(`INSERT INTO ${db.S}probe VALUES (7)`)).then(() => null, (err: unknown) => err);
        await cut;
        assert.ok(isLadingError(failure, 'UNAVAILABLE'), `rejects with UNAVAILABLE, not ${String(failure)}`);
        assert.equal(failure.details.maybeCommitted, true);
        assert.deepEqual(await direct(`SELECT v FROM ${db.S}probe`), [{ v: 7 }], 'here it was');
      } finally {
        await db.close();
      }
    });

    it('gets job events back by itself after the channel was lost for a while, saying when it was lost and when it is back', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: relayed, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      const events: JobEvent[] = [];
      const unwatch = await a.watchJobs!((e) => { events.push(e); });
      const seen = (kind: string) => events.some((e) => kind in e);
      try {
        link.refuse(true);
        link.cut();
        assert.ok(await eventually(10_000, () => seen('interrupted')), 'the loss is told');
        // NOTE: long enough for several attempts to reopen the channel to fail.
        await sleep(2000);
        assert.ok(!seen('resumed'));
        link.refuse(false);
        assert.ok(await eventually(30_000, () => seen('resumed')), `the channel comes back (events: ${JSON.stringify(events)})`);
        assert.equal(events.filter((e) => 'interrupted' in e).length, 1, 'one loss is told once');
        await b.enqueueJobs([{ kind: 'rule', payload: '{}' }], new Date());
        assert.ok(await eventually(10_000, () => seen('enqueued')), `a job enqueued on another node is heard again (events: ${JSON.stringify(events)})`);
      } finally {
        link.refuse(false);
        await unwatch();
        await a.close();
        await b.close();
      }
    });
  });
}
