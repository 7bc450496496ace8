/**
 * What a request costs the PostgreSQL catalog, counted in statements (round trips), not timed:
 * a metadata GET with a bearer token and a download's lookup, with what they read remembered
 * by the node, are one barrier (a trivial statement on the node's LISTEN connection, sent after
 * the request arrived, before anything is answered from memory) and nothing else; with nothing
 * remembered, two reads (the session, then the account, its groups, the access level and the
 * entity in one); never a transaction. A small upload's commit, its quota checks and its audit
 * record each stay within their budgets. And what two nodes on one PostgreSQL catalog (and one
 * S3 store) decide stays current, memory or not: a token revoked, a grant revoked (on the object,
 * or on a collection above it), an account disabled, a group membership ended, an entity
 * renamed, trashed or overwritten on one node is seen by the other at its very next request,
 * also when the other has lost its LISTEN connection; and an upload on one node leaves what the
 * other remembers of access to other paths alone. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips without
 * them, except under CI, where that fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { watchStatements } from '../../src/drivers/catalog/postgres/connection.ts';
import pg from 'pg';
import type { Path } from '../../src/core/path.ts';
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

/** Statements of a metadata GET: the session, and the lookup of account, access and entity. */
const METADATA_GET_STATEMENTS = 2;
/** Statements of a metadata GET whose reads the node remembers: one barrier, sent after the request arrived, for all of them. */
const REMEMBERED_GET_STATEMENTS = 1;
/** A barrier: the trivial statement on the LISTEN connection (see `Listening.barrier`). */
const isBarrier = (text: string) => /^SELECT 1 AS "lading_cache_/.test(text);
/** Statements of a new small object's upload, its commit's transaction included (quotas and the audit trail apart). */
const SMALL_UPLOAD_STATEMENTS = 7;
/** Statements of the quotas on an upload: the early check of its announced size (its commit locks and reads them with the target). */
const QUOTA_STATEMENTS = 1;
/** Statements of an audit record: one, which moves the trail's head and inserts the record chained to it. */
const AUDIT_STATEMENTS = 1;

const services = postgresS3('requests on a PostgreSQL catalog', 'Counting the statements of requests on PostgreSQL and S3 needs', 'trips');

/**
 * The statements `request` sends to PostgreSQL (their texts), the fewest of `times` runs: a
 * node's own background work (heartbeats, the job queue) may add some to any one run, never
 * take any away.
 */
async function statementsOf(request: () => Promise<void>, times = 3): Promise<string[]> {
  let fewest: string[] | null = null;
  for (let i = 0; i < times; i++) {
    const seen: string[] = [];
    const stop = watchStatements((text) => seen.push(text.replace(/\s+/g, ' ').slice(0, 120)));
    try {
      await request();
    } finally {
      stop();
    }
    if (fewest === null || seen.length < fewest.length) fewest = seen;
  }
  return fewest!;
}

/** A node of a plan from `EXPLAIN (ANALYZE, FORMAT JSON)`. */
interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows of the access lists (`acls`) `plan` read, kept or filtered out, over all its loops. */
function aclRowsRead(plan: PlanNode): number {
  const own = plan['Relation Name'] === 'acls' ? (plan['Actual Rows'] + (plan['Rows Removed by Filter'] ?? 0)) * plan['Actual Loops'] : 0;
  return own + (plan.Plans ?? []).reduce((sum, p) => sum + aclRowsRead(p), 0);
}

if (services) {
  describe('requests on a PostgreSQL catalog', () => {
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    let alice: string;
    const channel = `lading_cache_${services?.schema.toLowerCase()}`.slice(0, 63);
    /** Runs `text` on the test's own connection to the catalog's database; its rows. */
    const sql = async (text: string, values: unknown[] = []) => {
      const client = new pg.Client({ connectionString: services!.pgUrl });
      await client.connect();
      try {
        return (await client.query(text, values)).rows;
      } finally {
        await client.end();
      }
    };
    before(async () => {
      // NOTE: the nodes share their keys and CA as a deployment shares them (one mount or copies).
      dataDir = await mkdtemp(join(tmpdir(), 'lading-trips-'));
      a = await startTestServer(services.flags, { dataDir, keepData: true });
      b = await startTestServer(services.flags, { dataDir, keepData: true });
      alice = await a.bearer('alice');
      const put = await fetch(a.home('alice', 'small.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'hello' });
      assert.equal(put.status, 200);
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await rm(dataDir, { recursive: true, force: true });
      await services.dropSchema();
    });

    it(`answers a metadata GET with ${REMEMBERED_GET_STATEMENTS} barrier and nothing else once remembered, with ${METADATA_GET_STATEMENTS} reads when not, and no transaction`, async () => {
      const get = async (token = alice) => {
        const res = await fetch(b.home('alice', 'small.txt'), { headers: { authorization: token } });
        assert.equal(res.status, 200);
        assert.equal((await json(res)).Response.data[0]['small.txt'].metadata.size, 5);
      };
      await get();
      const warm = await statementsOf(get);
      const all = `a metadata GET sent ${warm.length} statements:\n${warm.join('\n')}`;
      assert.ok(warm.length <= REMEMBERED_GET_STATEMENTS, all);
      assert.ok(warm.every(isBarrier), `a remembered metadata GET read the catalog: ${all}`);
      // NOTE: a new token, and a change to the accounts (forgetting all of them on every
      // node): the session and the lookup are read, with no barrier before them.
      let fewest: string[] | null = null;
      for (let i = 0; i < 3; i++) {
        const token = `Bearer ${await a.login('alice')}`;
        await a.deps.catalog.setDisabled('alice', false);
        await delay(300);
        const seen = await statementsOf(() => get(token), 1);
        if (fewest === null || seen.length < fewest.length) fewest = seen;
      }
      const cold = `a metadata GET with nothing remembered sent ${fewest!.length} statements:\n${fewest!.join('\n')}`;
      assert.ok(fewest!.length <= METADATA_GET_STATEMENTS, cold);
      assert.ok(fewest!.some((s) => /FROM \S+\.sessions/.test(s)) && fewest!.some((s) => s.startsWith('WITH who AS')), cold);
      assert.ok(!fewest!.some((s) => /^(BEGIN|COMMIT)/.test(s)), `a metadata GET opened a transaction: ${cold}`);
    });

    it(`downloads a small object with ${REMEMBERED_GET_STATEMENTS} statement once remembered`, async () => {
      const get = async () => {
        const res = await fetch(`${b.home('alice', 'small.txt')}?download=true`, { headers: { authorization: alice } });
        assert.equal(res.status, 200);
        assert.equal(await res.text(), 'hello');
      };
      await get();
      const statements = await statementsOf(get);
      assert.ok(statements.length <= REMEMBERED_GET_STATEMENTS && statements.every(isBarrier), `a download sent ${statements.length} statements:\n${statements.join('\n')}`);
    });

    it(`uploads a new small object with at most ${SMALL_UPLOAD_STATEMENTS} statements, besides the quotas' ${QUOTA_STATEMENTS} and the audit record's ${AUDIT_STATEMENTS}`, async () => {
      let n = 0;
      const put = async () => {
        const res = await fetch(a.home('alice', `new-${n++}.txt`), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'x' });
        assert.equal(res.status, 200);
      };
      await put();
      const statements = await statementsOf(put);
      const all = `a small upload sent ${statements.length} statements:\n${statements.join('\n')}`;
      // NOTE: the audit record is appended by one statement of its own, after the commit's transaction.
      const audit = statements.filter((s) => /\S+\.audit_(head|records)\b/.test(s) || s.includes('pg_advisory_xact_lock'));
      assert.ok(audit.length >= 1 && audit.length <= AUDIT_STATEMENTS, `the upload is recorded in the audit trail, in at most ${AUDIT_STATEMENTS} statements: ${all}`);
      const auditAt = statements.indexOf(audit[0]!);
      assert.ok(statements.slice(0, auditAt).some((s) => s.startsWith('COMMIT')), `the audit record follows the commit: ${all}`);
      const rest = statements.filter((s) => !audit.includes(s));
      const quotas = rest.filter((s) => /\S+\.quotas\b/.test(s));
      assert.ok(quotas.length <= QUOTA_STATEMENTS, `the quotas: ${all}`);
      assert.ok(rest.length - quotas.length <= SMALL_UPLOAD_STATEMENTS, `the upload and its commit: ${all}`);
    });

    it('reads a few access-list entries to find a level, however many entries the user holds elsewhere', async () => {
      const many = `/${a.zone}/home/alice/many` as Path;
      await a.deps.catalog.createCollection({ path: many, owner: 'alice', now: new Date() });
      for (let i = 0; i < 2_000; i++) await a.deps.catalog.createCollection({ path: `${many}/c-${i}` as Path, owner: 'alice', now: new Date() });
      // NOTE: as autovacuum would have by now: the planner knows how large the tables are.
      await sql(`ANALYZE "${services.schema}".acls; ANALYZE "${services.schema}".entities`);
      const sent: { text: string; values: readonly unknown[] }[] = [];
      const stop = watchStatements((text, values) => { if (values && /\.acls a\b/.test(text)) sent.push({ text, values }); });
      try {
        // NOTE: paths never read, so neither node answers from memory.
        await a.deps.catalog.lookup({ path: `${many}/c-7/unread` as Path, user: 'alice', also: [] });
        await a.deps.catalog.accessLevel(`${many}/c-8/unread` as Path, ['alice', 'readers']);
      } finally {
        stop();
      }
      assert.equal(sent.length, 2, 'the lookup and the level each read the access lists once');
      const client = new pg.Client({ connectionString: services.pgUrl });
      await client.connect();
      try {
        for (const { text, values } of sent) {
          const plan = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [...values])).rows[0]['QUERY PLAN'][0].Plan as PlanNode;
          const read = aclRowsRead(plan);
          assert.ok(read <= 20, `${text.slice(0, 60)}… read ${read} access-list entries (alice holds 2,000 more):\n${JSON.stringify(plan, null, 1)}`);
        }
      } finally {
        await client.end();
      }
    });

    it('refuses on one node a token revoked on the other, at the next request', async () => {
      const made = await fetch(`${a.url}/auth/tokens`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'script' }) });
      assert.equal(made.status, 201);
      const { id, token } = (await json(made)).Response.data as { id: string; token: string };
      const get = () => fetch(b.home('alice', 'small.txt'), { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 200);
      assert.equal((await fetch(`${a.url}/auth/tokens/${id}`, { method: 'DELETE', headers: { authorization: alice } })).status, 200);
      assert.equal((await get()).status, 401);
    });

    it('refuses on one node what a grant revoked on the other allowed, at the next request', async () => {
      const bob = await a.bearer('bob');
      const acl = `${a.url}/api/acl/${a.zone}/home/alice/small.txt`;
      const get = () => fetch(b.home('alice', 'small.txt'), { headers: { authorization: bob } });
      assert.equal((await get()).status, 403);
      const grant = await fetch(acl, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'bob', level: 'read' }) });
      assert.equal(grant.status, 200);
      assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 200);
      assert.equal((await fetch(`${acl}?principal=bob`, { method: 'DELETE', headers: { authorization: alice } })).status, 200);
      assert.equal((await get()).status, 403);
    });

    it('keeps on one node what it remembers of access elsewhere while the other uploads, and answers a metadata GET with the barrier alone', async () => {
      const get = async () => {
        const res = await fetch(b.home('alice', 'small.txt'), { headers: { authorization: alice } });
        assert.equal(res.status, 200);
      };
      await get();
      let n = 0;
      let fewest: string[] | null = null;
      for (let i = 0; i < 3; i++) {
        // NOTE: each upload gives its new object an owner entry on the other node; the GET
        // that follows reads a path that entry does not lie above.
        const put = await fetch(a.home('alice', `elsewhere-${n++}.txt`), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'x' });
        assert.equal(put.status, 200);
        const seen = await statementsOf(get, 1);
        if (fewest === null || seen.length < fewest.length) fewest = seen;
      }
      const all = `a metadata GET after an upload elsewhere sent ${fewest!.length} statements:\n${fewest!.join('\n')}`;
      assert.ok(fewest!.length <= REMEMBERED_GET_STATEMENTS && fewest!.every(isBarrier), all);
    });

    it('allows and refuses on one node below a collection what a grant on that collection on the other changed, at the next request', async () => {
      const frank = await a.bearer('frank');
      const mkdir = await fetch(`${a.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${a.zone}/home/alice/project` }) });
      assert.equal(mkdir.status, 200);
      const put = await fetch(a.home('alice', 'project/deep.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'deep' });
      assert.equal(put.status, 200);
      const get = () => fetch(b.home('alice', 'project/deep.txt'), { headers: { authorization: frank } });
      assert.equal((await get()).status, 403);
      assert.equal((await get()).status, 403);
      const acl = `${a.url}/api/acl/${a.zone}/home/alice/project`;
      const grant = await fetch(acl, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'frank', level: 'read' }) });
      assert.equal(grant.status, 200);
      assert.equal((await get()).status, 200, 'the grant on the collection reaches the object below it');
      assert.equal((await get()).status, 200);
      assert.equal((await fetch(`${acl}?principal=frank`, { method: 'DELETE', headers: { authorization: alice } })).status, 200);
      assert.equal((await get()).status, 403, 'and so does its revocation');
    });

    it('refuses on one node an account disabled on the other, its sessions still open, at the next request', async () => {
      const carol = await a.bearer('carol');
      const get = () => fetch(b.home('carol'), { headers: { authorization: carol } });
      assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 200);
      // NOTE: the catalog's own change, without the admin command's revocation of the sessions.
      await a.deps.catalog.setDisabled('carol', true);
      assert.equal((await get()).status, 401);
      await a.deps.catalog.setDisabled('carol', false);
      assert.equal((await get()).status, 200);
    });

    it('refuses on one node what a group membership ended on the other allowed, whoever ended it, at the next request', async () => {
      const dave = await a.bearer('dave');
      await a.deps.catalog.createUser({ name: 'readers', kind: 'group', passwordHash: null, createdAt: new Date(), disabled: false });
      await a.deps.catalog.addToGroup('readers', 'dave');
      const acl = `${a.url}/api/acl/${a.zone}/home/alice/small.txt`;
      const grant = await fetch(acl, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'readers', level: 'read' }) });
      assert.equal(grant.status, 200);
      const get = () => fetch(b.home('alice', 'small.txt'), { headers: { authorization: dave } });
      assert.equal((await get()).status, 200);
      assert.equal((await get()).status, 200);
      // NOTE: straight in the catalog, as an operator's SQL would: no driver method is told.
      await sql(`DELETE FROM "${services.schema}".group_members WHERE group_name = 'readers' AND user_name = 'dave'`);
      assert.equal((await get()).status, 403);
    });

    it('serves on one node an entity renamed, trashed or overwritten on the other as it now is, at the next request', async () => {
      const put = (name: string, body: string) => fetch(a.home('alice', name), {
        method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body,
      });
      const size = async (name: string) => {
        const res = await fetch(b.home('alice', name), { headers: { authorization: alice } });
        return res.status === 200 ? (await json(res)).Response.data[0][name].metadata.size as number : res.status;
      };
      const download = async (name: string) => (await fetch(`${b.home('alice', name)}?download=true`, { headers: { authorization: alice } })).text();
      assert.equal((await put('fresh.txt', 'one')).status, 200);
      assert.equal(await size('fresh.txt'), 3);
      assert.equal(await size('fresh.txt'), 3);
      assert.equal((await put('fresh.txt?force=true', 'three')).status, 200);
      assert.equal(await size('fresh.txt'), 5, 'overwritten');
      assert.equal(await download('fresh.txt'), 'three');
      const renamed = await fetch(a.home('alice', 'fresh.txt'), { method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'renamed.txt' }) });
      assert.equal(renamed.status, 200);
      assert.equal(await size('fresh.txt'), 404, 'gone from its old name');
      assert.equal(await size('renamed.txt'), 5, 'found at its new name');
      const trashed = await fetch(`${a.url}/api/trash`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${a.zone}/home/alice/renamed.txt` }) });
      assert.equal(trashed.status, 200);
      assert.equal(await size('renamed.txt'), 404, 'trashed');
    });

    it('answers from the catalog while a node has lost its LISTEN connection, and remembers again once it is back', async () => {
      const erin = await a.bearer('erin');
      const acl = `${a.url}/api/acl/${a.zone}/home/alice/small.txt`;
      const setAccess = async (level: string | null) => {
        const res = level === null
          ? await fetch(`${acl}?principal=erin`, { method: 'DELETE', headers: { authorization: alice } })
          : await fetch(acl, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'erin', level }) });
        assert.equal(res.status, 200);
      };
      const get = async () => (await fetch(b.home('alice', 'small.txt'), { headers: { authorization: erin } })).status;
      await setAccess('read');
      assert.equal(await get(), 200);
      assert.equal(await get(), 200);
      // NOTE: both nodes' cache listeners (this schema's channel names them): the grant's
      // revocation is then notified to nobody.
      const ended = await sql(`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
        WHERE query IN ($1, $2)`, [`LISTEN "${channel}"`, `SELECT 1 AS "${channel}"`]);
      assert.ok(ended.length >= 1, 'a LISTEN connection was ended');
      await setAccess(null);
      assert.equal(await get(), 403, 'refused while not listening');
      await setAccess('read');
      assert.equal(await get(), 200);
      // NOTE: listening again within the first retries (250 ms, doubling).
      const back = Date.now() + 15_000;
      let warm: string[] = [];
      while (Date.now() < back) {
        warm = await statementsOf(async () => void await get(), 1);
        if (warm.length > 0 && warm.every(isBarrier)) break;
        await delay(200);
      }
      assert.ok(warm.length > 0 && warm.every(isBarrier), `remembered again once listening: ${warm.join('\n')}`);
      await setAccess(null);
      assert.equal(await get(), 403, 'refused at the next request once listening again');
    });
  });
}
