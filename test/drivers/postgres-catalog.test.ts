/**
 * The PostgreSQL catalog against a real PostgreSQL (`LADING_TEST_PG_URL`, by default the one
 * on 127.0.0.1:5432, database `test`, exported by `.ci/services/postgres.sh`): every catalog
 * contract suite, migrations run by several nodes at once, and races between two nodes (two
 * pools) on one schema. Every catalog lives in a fresh schema `lading_test_<random>_<n>`,
 * dropped at the end. Skips when PostgreSQL is unreachable, except under CI, where that fails.
 * The options the factory refuses are checked in any case: it refuses them before connecting.
 */
import { after, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type PostgresCatalogOptions, createPostgresCatalog } from '../../src/drivers/catalog/postgres.ts';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import { runAsRequest } from '../../src/core/request-scope.ts';
import { type AuditInput, auditHash, auditRecords, verifyAuditChain } from '../../src/core/audit.ts';
import { rejectsWith, runCatalogContracts } from '../contracts/catalog-contract.ts';

const url = process.env.LADING_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const runId = randomBytes(4).toString('hex');
const schemas: string[] = [];
let n = 0;
const freshSchema = (): string => {
  const s = `lading_test_${runId}_${n++}`;
  schemas.push(s);
  return s;
};

async function reachable(): Promise<string | null> {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 5000, max: 1 });
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
    return null;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await pool.end().catch(() => {});
  }
}

describe('postgres catalog options', () => {
  it('refuses an unusable option with a TypeError naming it, before connecting', async () => {
    const refused: [PostgresCatalogOptions, string][] = [
      [{ connectionString: '' }, 'connectionString'],
      [{} as PostgresCatalogOptions, 'connectionString'],
      [{ connectionString: url, schema: 'a-b' }, 'schema'],
      [{ connectionString: url, schema: '' }, 'schema'],
      [{ connectionString: url, maxConnections: 0 }, 'maxConnections'],
      [{ connectionString: url, maxConnections: 1.5 }, 'maxConnections'],
    ];
    for (const [options, option] of refused) {
      await assert.rejects(createPostgresCatalog(options), (err: Error & { option?: string }) =>
        err instanceof TypeError && err.option === option && err.message.includes(`\`${option}\``));
    }
  });
});

const problem = await reachable();
if (problem !== null) {
  const message = `PostgreSQL is not reachable at LADING_TEST_PG_URL (${problem}); run \`source .ci/services/postgres.sh\` or start PostgreSQL on 127.0.0.1:5432 with a database 'test'.`;
  if (process.env.CI) test('PostgreSQL catalog', () => assert.fail(message));
  else test('PostgreSQL catalog', { skip: message }, () => {});
} else {
  after(async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      for (const s of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    } finally {
      await pool.end();
    }
  });

  runCatalogContracts({ name: 'postgres', create: () => createPostgresCatalog({ connectionString: url, schema: freshSchema() }) });

  describe('postgres catalog across nodes', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    const p = parsePath;

    it('migrates once when several nodes start at the same moment', async () => {
      const schema = freshSchema();
      const nodes = await Promise.all([1, 2, 3, 4].map(() => createPostgresCatalog({ connectionString: url, schema })));
      try {
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        try {
          const { rows } = await pool.query(`SELECT version, count(*)::int AS n FROM "${schema}".schema_migrations GROUP BY version ORDER BY version`);
          assert.ok(rows.length >= 2);
          assert.ok(rows.every((r: { n: number }) => r.n === 1));
        } finally {
          await pool.end();
        }
        assert.equal((await nodes[3]!.getEntity(p('/')))?.kind, 'collection');
      } finally {
        await Promise.all(nodes.map((c) => c.close()));
      }
    });

    it('lets exactly one of two nodes commit the same new path', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      try {
        await a.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
        for (let round = 0; round < 10; round++) {
          const path = p(`/z/f${round}`);
          const commit = (c: Catalog, blob: string) =>
            c.commitObject({ path, owner: 'alice', size: 1, checksum: 'sha2:x', blob, now: t0, overwrite: false });
          const results = await Promise.allSettled([commit(a, `blob-a-${round}`), commit(b, `blob-b-${round}`)]);
          const won = results.filter((r) => r.status === 'fulfilled');
          const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          assert.equal(won.length, 1, `round ${round}: exactly one commit succeeds`);
          assert.equal((lost[0]?.reason as { code?: string }).code, 'CONFLICT');
          const winner = (won[0] as PromiseFulfilledResult<{ object: { blob: string } }>).value.object.blob;
          const stored = await b.getEntity(path);
          assert.equal(stored?.kind === 'dataobject' ? stored.blob : null, winner);
        }
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('serialises 20 concurrent overwrites: one winner, every replaced blob tracked', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      try {
        await a.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
        await a.commitObject({ path: p('/z/f'), owner: 'alice', size: 1, checksum: 'sha2:0', blob: 'blob-initial', now: t0, overwrite: false });
        const blobs = Array.from({ length: 20 }, (_, i) => `blob-${String(i).padStart(2, '0')}`);
        for (const blob of blobs) await a.trackBlob(blob, t0);
        const results = await Promise.all(blobs.map((blob, i) => (i % 2 ? a : b).commitObject({
          path: p('/z/f'), owner: 'alice', size: 2, checksum: `sha2:${blob}`, blob, now: t0, overwrite: true,
        })));
        const final = await a.getEntity(p('/z/f'));
        assert.equal(final?.kind, 'dataobject');
        const winner = final.kind === 'dataobject' ? final.blob : '';
        assert.ok(blobs.includes(winner));
        const replaced = results.map((r) => r.replacedBlob).sort();
        assert.deepEqual(replaced, ['blob-initial', ...blobs].filter((x) => x !== winner).sort(),
          'each commit replaced exactly one distinct predecessor');
        assert.deepEqual((await b.trackedBlobs(new Date(t0.getTime() + 1))).map((x) => x.blob).sort(), replaced,
          'every replaced blob, and none still referenced, is tracked for deletion');
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('keeps a collection renamed on one node consistent with creations on another', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      try {
        await a.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
        await a.createCollection({ path: p('/z/src'), owner: 'alice', now: t0 });
        const creations = Array.from({ length: 20 }, (_, i) => b.createCollection({ path: p(`/z/src/c${i}`), owner: 'alice', now: t0 }));
        const renaming = a.rename(p('/z/src'), p('/z/dst'), t0);
        const settled = await Promise.allSettled([...creations, renaming]);
        assert.equal(settled.at(-1)?.status, 'fulfilled', 'the rename succeeds');
        for (const r of settled.slice(0, -1)) {
          if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'NOT_FOUND');
        }
        const created = settled.slice(0, -1).filter((r) => r.status === 'fulfilled').length;
        assert.equal((await a.listChildren(p('/z/dst'))).length, created, 'every created child moved with its parent');
        assert.equal(await a.getEntity(p('/z/src')), null);
        assert.deepEqual(await a.listChildren(p('/z/src')), [], 'nothing is left at the old path');
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('forgets on every node what another node changed before any read after the change returns, for each kind of change', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const node = await createPostgresCatalog({ connectionString: url, schema });
      // NOTE: every other round, each read on b is a request of its own (one barrier may then
      // serve all reads of a request, never one that arrived after it was sent).
      let asRequests = false;
      const b = new Proxy(node, {
        get: (target, key) => {
          const value = (target as unknown as Record<string | symbol, unknown>)[key];
          return asRequests && typeof value === 'function' ? (...args: unknown[]) => runAsRequest(() => value(...args)) : value;
        },
      });
      const raw = new pg.Pool({ connectionString: url, max: 1 });
      const later = new Date(t0.getTime() + 3_600_000);
      const alice = { path: p('/z/a.txt'), user: 'alice', also: ['public'] } as const;
      try {
        await a.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: t0 });
        await a.createUser({ name: 'team', kind: 'group', passwordHash: null, createdAt: t0 });
        await a.createCollection({ path: p('/z'), owner: 'root', now: t0 });
        await a.commitObject({ path: p('/z/a.txt'), owner: 'root', size: 1, checksum: 'sha2:x', blob: 'blob-1', now: t0, overwrite: false });
        // NOTE: each round reads on b twice (remembered the second time), changes on a, and
        // reads on b again at once: b must not answer from what it remembered.
        for (let round = 0; round < 10; round++) {
          asRequests = round % 2 === 1;
          const hash = `token-${round}`;
          await a.putSession({ tokenHash: hash, user: 'alice', createdAt: t0, expiresAt: later, credential: 'c' });
          for (let i = 0; i < 2; i++) assert.equal((await b.getSession(hash, t0))?.user, 'alice');
          await a.deleteSession(hash);
          assert.equal(await b.getSession(hash, t0), null, 'a session deleted');

          for (let i = 0; i < 2; i++) assert.equal((await b.lookup(alice)).user?.disabled, false);
          await a.setDisabled('alice', true);
          assert.equal((await b.lookup(alice)).user?.disabled, true, 'an account disabled');
          assert.equal((await b.getUser('alice'))?.disabled, true);
          await a.setDisabled('alice', false);

          await a.addToGroup('team', 'alice');
          await a.setAccess(p('/z'), 'team', 'read');
          for (let i = 0; i < 2; i++) assert.equal((await b.lookup(alice)).level, 'read');
          await raw.query(`DELETE FROM "${schema}".group_members`);
          assert.equal((await b.lookup(alice)).level, null, 'a membership ended by hand');
          assert.deepEqual(await b.groupsOf('alice'), []);
          await a.addToGroup('team', 'alice');
          for (let i = 0; i < 2; i++) assert.equal(await b.accessLevel(p('/z/a.txt'), ['team']), 'read');
          await a.setAccess(p('/z'), 'team', null);
          assert.equal(await b.accessLevel(p('/z/a.txt'), ['team']), null, 'a grant revoked');
          assert.equal((await b.lookup(alice)).level, null);

          for (let i = 0; i < 2; i++) assert.equal((await b.getEntity(p('/z/a.txt')))?.pid, round === 0 ? null : `pid-${round - 1}`);
          await a.addMeta(p('/z/a.txt'), { attribute: 'PID', value: `pid-${round}`, unit: '' });
          if (round > 0) await a.removeMeta(p('/z/a.txt'), 'PID', `pid-${round - 1}`);
          assert.equal((await b.getEntity(p('/z/a.txt')))?.pid, `pid-${round}`, 'a PID added');

          for (let i = 0; i < 2; i++) assert.equal((await b.lookup(alice)).entity?.kind, 'dataobject');
          await a.rename(p('/z/a.txt'), p('/z/b.txt'), t0);
          assert.equal((await b.lookup(alice)).entity, null, 'an entity renamed away');
          assert.equal((await b.getEntity(p('/z/b.txt')))?.path, '/z/b.txt');
          await a.rename(p('/z/b.txt'), p('/z/a.txt'), t0);
          assert.equal((await b.getEntity(p('/z/a.txt')))?.path, '/z/a.txt', 'an entity renamed back');
        }
      } finally {
        await raw.end();
        await a.close();
        await node.close();
      }
    });

    it('keeps one audit chain across nodes appending at once, and chains on to a record another writer inserted the way the trail was appended before the head', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      const raw = new pg.Client({ connectionString: url });
      await raw.connect();
      const event = (i: number): AuditInput => ({ at: t0, actor: 'alice', address: null, door: 'api', action: 'upload', path: `/z/home/alice/${i}`, detail: { i }, outcome: 'ok' });
      try {
        await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).appendAudit(event(i))));
        // NOTE: as a node running the append of before migration 22 does it: lock, read the newest, insert.
        await raw.query('BEGIN');
        await raw.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`lading.audit.${schema}`]);
        const head = (await raw.query(`SELECT seq, hash FROM "${schema}".audit_records ORDER BY seq DESC LIMIT 1`)).rows[0];
        const unhashed = { ...event(99), seq: Number(head.seq) + 1, prevHash: head.hash as string };
        await raw.query(`INSERT INTO "${schema}".audit_records (seq, at, actor, address, door, action, path, detail, outcome, prev_hash, hash)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [unhashed.seq, t0.getTime(), 'alice', null, 'api', 'upload', unhashed.path,
          JSON.stringify(unhashed.detail), 'ok', unhashed.prevHash, auditHash(unhashed)]);
        await raw.query('COMMIT');
        const after = await a.appendAudit(event(100));
        assert.equal(after.seq, 32);
        const records = await a.listAudit({ limit: 100 });
        assert.deepEqual(records.map((r) => r.seq), Array.from({ length: 32 }, (_, i) => i + 1));
        assert.deepEqual(await verifyAuditChain(auditRecords(b)), { intact: true, count: 32 });
      } finally {
        await raw.end();
        await a.close();
        await b.close();
      }
    });

    it('refuses a duplicate user created on two nodes at once with CONFLICT', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      try {
        const results = await Promise.allSettled([a, b].map((c) => c.createUser({ name: 'carol', kind: 'user', passwordHash: null, createdAt: t0 })));
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        await rejectsWith(a.createUser({ name: 'carol', kind: 'user', passwordHash: null, createdAt: t0 }), 'CONFLICT');
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('tells every node when a job is enqueued or settles on another node (LISTEN/NOTIFY)', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      const events: string[] = [];
      let seen!: () => void;
      const settledSeen = new Promise<void>((resolve) => { seen = resolve; });
      const unwatch = await a.watchJobs!((e) => {
        events.push('settled' in e ? `settled:${e.settled}` : 'enqueued');
        if ('settled' in e) seen();
      });
      try {
        const [id] = await b.enqueueJobs([{ kind: 'rule', payload: '{}' }], new Date());
        const now = new Date();
        const [claimed] = await b.claimJobs('node-b', now, new Date(now.getTime() + 60_000), 1);
        assert.equal(claimed?.id, id);
        assert.equal(await b.completeJob(id!, 'node-b', new Date()), true);
        await Promise.race([settledSeen, new Promise((_, reject) => setTimeout(() => reject(new Error(`no notification; got ${events}`)), 5000))]);
        assert.deepEqual(events, ['enqueued', `settled:${id}`]);
      } finally {
        await unwatch();
        await a.close();
        await b.close();
      }
    });

    it('hands each job to exactly one of three nodes\' competing workers', async () => {
      const schema = freshSchema();
      const nodes = await Promise.all([1, 2, 3].map(() => createPostgresCatalog({ connectionString: url, schema })));
      try {
        const ids = await nodes[0]!.enqueueJobs(Array.from({ length: 60 }, (_, i) => ({ kind: 'pid', payload: `{"n":${i}}` })), t0);
        assert.equal(new Set(ids).size, 60);
        const lease = new Date(t0.getTime() + 60_000);
        const claimed = new Map<string, string>();
        await Promise.all(nodes.map(async (node, w) => {
          for (;;) {
            const batch = await node.claimJobs(`worker-${w}`, t0, lease, 4);
            if (batch.length === 0) return;
            for (const job of batch) {
              assert.ok(!claimed.has(job.id), `job ${job.id} claimed twice`);
              claimed.set(job.id, `worker-${w}`);
              assert.equal(await node.completeJob(job.id, `worker-${w}`, t0), true);
            }
          }
        }));
        assert.deepEqual([...claimed.keys()].sort(), [...ids].sort(), 'every job ran once');
        assert.ok(new Set(claimed.values()).size > 1, 'the work was shared');
        assert.equal((await nodes[1]!.listJobs('done', 100)).length, 60);
      } finally {
        await Promise.all(nodes.map((c) => c.close()));
      }
    });

    it('gives a dead worker\'s job to another node once its lease has expired, and only then', async () => {
      const schema = freshSchema();
      const a = await createPostgresCatalog({ connectionString: url, schema });
      const b = await createPostgresCatalog({ connectionString: url, schema });
      try {
        const [id] = await a.enqueueJobs([{ kind: 'pid', payload: '{}' }], t0);
        const t1 = new Date(t0.getTime() + 1000);
        assert.equal((await a.claimJobs('dead', t0, t1, 10)).length, 1);
        assert.deepEqual(await b.claimJobs('alive', t0, t1, 10), [], 'leased');
        const retaken = await b.claimJobs('alive', new Date(t1.getTime() + 1), new Date(t1.getTime() + 60_000), 10);
        assert.deepEqual(retaken.map((j) => [j.id, j.attempts, j.leaseOwner]), [[id, 2, 'alive']]);
        assert.equal(await a.completeJob(id!, 'dead', t1), false, 'the dead worker no longer holds it');
        assert.equal(await b.failJob(id!, 'alive', 'handle service down', t1, null), true);
        assert.equal((await a.getJob(id!))?.state, 'failed');
        assert.equal(await a.getJob('not-a-job'), null);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('rejects with UNAVAILABLE, naming PostgreSQL, when the server cannot be reached', async () => {
      await assert.rejects(createPostgresCatalog({ connectionString: 'postgresql://postgres@127.0.0.1:1/test', schema: 'x' }),
        (err: { code?: string; message?: string }) => err.code === 'UNAVAILABLE' && /PostgreSQL/.test(err.message ?? ''));
    });
  });
}
