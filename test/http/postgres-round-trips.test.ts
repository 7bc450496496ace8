/**
 * What a request costs the PostgreSQL catalog, counted in statements (round trips), not timed:
 * a warm metadata GET with a bearer token and a download's lookup are two statements (the
 * session, then the account, its groups, the access level and the entity in one), with no
 * transaction around them; a small upload's commit, its quota checks and its audit record each
 * stay within their budgets. And what two
 * nodes on one PostgreSQL catalog (and one S3 store) decide stays current: a token revoked, a
 * grant revoked, an account disabled on one node is refused by the other at its very next
 * request. Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips without them,
 * except under CI, where that fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchStatements } from '../../src/drivers/catalog/postgres/connection.ts';
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

/** Statements of a warm metadata GET: the session, and the lookup of account, access and entity. */
const METADATA_GET_STATEMENTS = 2;
/** Statements of a new small object's upload, its commit's transaction included (quotas and the audit trail apart). */
const SMALL_UPLOAD_STATEMENTS = 7;
/** Statements of the quotas on an upload: the early check of its announced size, and the lock of the quotas its commit charges. */
const QUOTA_STATEMENTS = 2;
/** Statements of an audit record: its own transaction, the trail's lock, the last record, the new one. */
const AUDIT_STATEMENTS = 5;

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

if (services) {
  describe('requests on a PostgreSQL catalog', () => {
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    let alice: string;
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

    it(`answers a metadata GET with ${METADATA_GET_STATEMENTS} statements and no transaction`, async () => {
      const get = async () => {
        const res = await fetch(b.home('alice', 'small.txt'), { headers: { authorization: alice } });
        assert.equal(res.status, 200);
        assert.equal((await json(res)).Response.data[0]['small.txt'].metadata.size, 5);
      };
      await get();
      const statements = await statementsOf(get);
      assert.ok(statements.length <= METADATA_GET_STATEMENTS, `a metadata GET sent ${statements.length} statements:\n${statements.join('\n')}`);
      assert.ok(!statements.some((s) => /^(BEGIN|COMMIT)/.test(s)), `a metadata GET opened a transaction:\n${statements.join('\n')}`);
    });

    it(`downloads a small object with ${METADATA_GET_STATEMENTS} statements`, async () => {
      const get = async () => {
        const res = await fetch(`${b.home('alice', 'small.txt')}?download=true`, { headers: { authorization: alice } });
        assert.equal(res.status, 200);
        assert.equal(await res.text(), 'hello');
      };
      await get();
      const statements = await statementsOf(get);
      assert.ok(statements.length <= METADATA_GET_STATEMENTS, `a download sent ${statements.length} statements:\n${statements.join('\n')}`);
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
      // NOTE: the audit record is appended in a transaction of its own, after the commit's.
      const lockAt = statements.findIndex((s) => s.includes('pg_advisory_xact_lock'));
      assert.ok(lockAt > 0 && statements[lockAt - 1]!.startsWith('BEGIN'), `the upload is recorded in the audit trail: ${all}`);
      const auditEnd = statements.findIndex((s, i) => i > lockAt && s.startsWith('COMMIT'));
      const audit = statements.slice(lockAt - 1, auditEnd + 1);
      assert.ok(audit.some((s) => /INSERT INTO \S+audit_records/.test(s)) && audit.length <= AUDIT_STATEMENTS, `the audit record: ${all}`);
      const rest = [...statements.slice(0, lockAt - 1), ...statements.slice(auditEnd + 1)];
      const quotas = rest.filter((s) => /\S+\.quotas\b/.test(s));
      assert.ok(quotas.length <= QUOTA_STATEMENTS, `the quotas: ${all}`);
      assert.ok(rest.length - quotas.length <= SMALL_UPLOAD_STATEMENTS, `the upload and its commit: ${all}`);
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
  });
}
