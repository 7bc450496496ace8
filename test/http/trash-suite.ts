/**
 * The trash over HTTP on a whole node with PID rules, for any catalog (`trashSuite`): a trashed entity leaves its path (404,
 * gone from listings, /api/public, shared-with-me and share links) and its path is free, its
 * PID resolves to a tombstone (HTML and JSON) and back to the data on restore (never over what
 * took its place); what stays in the trash past `trash.retention` (on the test clock) loses its
 * bytes to the sweep, its tombstone staying; and an admin's takedown removes bytes at once.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import type { Clock } from '../../src/core/ports.ts';

const RULES = `
object.created      /tz/home/**   pid.register
object.renamed      /tz/home/**   pid.update
collection.renamed  /tz/home/**   pid.update
entity.published    /tz/home/**   pid.update
entity.unpublished  /tz/home/**   pid.update
entity.trashed      /tz/home/**   pid.update
entity.restored     /tz/home/**   pid.update
entity.purged       /tz/home/**   pid.update
entity.taken_down   /tz/home/**   pid.update
`;

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const RETENTION = 3600;

/** A clock running with real time, which a test can move forward. */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

/** Waits until no job is pending or running (fan-out jobs included). */
async function settle(s: TestServer): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = (await s.deps.catalog.listJobs(null, 100_000)).filter((j) => j.state === 'pending' || j.state === 'running');
    if (open.length === 0) return;
    await s.deps.jobs.waitFor(open.map((j) => j.id), 10_000);
  }
  throw new Error('jobs did not settle');
}

/** Runs the suite on a node started with `flags` (its catalog and resource); `cleanup` runs after. */
export function trashSuite(name: string, flags: Record<string, unknown> = {}, cleanup: () => Promise<void> = async () => {}): void {
  describe(`the trash over HTTP (${name})`, () => {
    let dir: string;
    let s: TestServer;
    let alice: string;
    let bob: string;
    const clock = new OffsetClock();
    const api = async (method: string, path: string, auth: string | null, body?: unknown) => {
      const headers: Record<string, string> = {};
      if (auth) headers.authorization = auth;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${s.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: await json(res) };
    };
    const put = async (rest: string, body: string) => {
      const res = await fetch(`${s.home('alice', rest)}?pid_await=true`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
      assert.equal(res.status, 200, await res.clone().text());
      return (await json(res)).Response.data.PID as string;
    };
    const at = (rest: string) => `/tz/home/alice/${rest}`;
    const record = async (pid: string) => (await json(await fetch(`${s.url}/api/pids/${pid}`))).Response.data as Record<string, string>;
    const landing = async (pid: string) => {
      const res = await fetch(`${s.url}/api/pids/${pid}`, { headers: { accept: BROWSER } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      return res.text();
    };
    const names = async (rest: string) => {
      const res = await fetch(s.home('alice', rest), { headers: { authorization: alice } });
      assert.equal(res.status, 200);
      return ((await json(res)).Response.data as Record<string, unknown>[]).map((r) => Object.keys(r)[0]);
    };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-trash-'));
      await writeFile(join(dir, 'rules.txt'), RULES);
      s = await startTestServer({ ...flags, 'pid.rules': join(dir, 'rules.txt'), 'pid.prefix': '21.T44444', 'resource.fsync': false, 'trash.retention': RETENTION }, { overrides: { clock } });
      alice = await s.bearer('alice');
      bob = await s.bearer('bob');
      assert.equal((await api('POST', '/api/registered', alice, { path: at('proj/deep'), force: true })).status, 200);
    });
    after(async () => {
      await s?.stop();
      await rm(dir, { recursive: true, force: true });
      await cleanup();
    });

    it('trash takes an object out of every read path, its PID resolves to a tombstone, restore brings both back', async () => {
      const pid = await put('report.csv', 'a,b\n1,2\n');
      assert.match(pid, /^21\.T44444\//);
      assert.equal((await api('PUT', `/api/acl${at('report.csv')}`, alice, { principal: 'bob', level: 'read' })).status, 200);
      assert.equal((await api('PUT', `/api/publish${at('report.csv')}`, alice)).status, 200);
      const link = (await api('POST', '/api/shares', alice, { path: at('report.csv'), kind: 'read' })).body.Response.data as { url: string };
      assert.equal((await fetch(link.url)).status, 200);
      await settle(s);
      const publicUrl = `${s.url}/api/public${at('report.csv')}`;
      assert.equal((await record(pid)).URL, publicUrl);

      // Only own may trash: bob (read) is refused and nothing changes.
      assert.equal((await api('POST', '/api/trash', bob, { path: at('report.csv') })).status, 403);
      const trashed = await api('POST', '/api/trash', alice, { path: at('report.csv'), reason: 'superseded by v2' });
      assert.equal(trashed.status, 200, JSON.stringify(trashed.body));
      const entry = trashed.body.Response.data;
      assert.equal(entry.state, 'trashed');
      assert.equal(entry.path, at('report.csv'));
      assert.equal(entry.trashed_by, 'alice');
      assert.equal(entry.reason, 'superseded by v2');
      assert.equal(entry.PID, pid);
      assert.equal(entry.size, 8, 'its size, for the trash page');
      assert.equal(entry.tombstone, `${s.url}/api/pids/${pid}`);

      // Gone at once from every read path.
      assert.equal((await fetch(s.home('alice', 'report.csv'), { headers: { authorization: alice } })).status, 404);
      assert.ok(!(await names('')).includes('report.csv'), 'left the listing');
      assert.equal((await fetch(publicUrl)).status, 404);
      const shared = (await api('GET', '/api/access/shared-with-me', bob)).body.Response.data as Record<string, unknown>[];
      assert.ok(!shared.some((r) => 'report.csv' in r), 'left shared-with-me');
      assert.equal((await fetch(link.url)).status, 404, 'its share link stopped working');
      assert.equal((await fetch(`${s.url}/api/pids/${pid}?download=true`, { headers: { authorization: alice } })).status, 410);
      const listed = (await api('GET', '/api/trash', alice)).body.Response.data as { id: string }[];
      assert.deepEqual(listed.map((e) => e.id), [entry.id]);
      assert.deepEqual((await api('GET', '/api/trash', bob)).body.Response.data, [], 'not in the trash of someone else');

      // The PID resolves to its tombstone.
      await settle(s);
      const tomb = await record(pid);
      assert.equal(tomb.URL, `${s.url}/api/pids/${pid}`);
      assert.equal(tomb['WITHDRAWN/STATE'], 'trashed');
      assert.equal(tomb['WITHDRAWN/BY'], 'alice');
      assert.equal(tomb['WITHDRAWN/REASON'], 'superseded by v2');
      assert.equal(tomb['WITHDRAWN/AT'], entry.trashed_at);
      const page = await landing(pid);
      assert.match(page, /Withdrawn data object/);
      assert.match(page, /withdrawn by its owner/);
      assert.match(page, /superseded by v2/);
      assert.match(page, /<dt>By<\/dt><dd>alice<\/dd>/);
      assert.doesNotMatch(page, /Download/);

      // The path is free; restoring onto what took it is refused, under a new name it works.
      await put('report.csv', 'new\n');
      const refused = await api('POST', `/api/trash/${entry.id}/restore`, alice, {});
      assert.equal(refused.status, 409);
      assert.match(JSON.stringify(refused.body.Response.errors), /newname/);
      assert.equal(await (await fetch(`${s.home('alice', 'report.csv')}?download=true`, { headers: { authorization: alice } })).text(), 'new\n', 'never overwritten');
      assert.equal((await api('POST', `/api/trash/${entry.id}/restore`, bob, { newname: 'x.csv' })).status, 404, 'not bob\'s to restore');
      const restored = await api('POST', `/api/trash/${entry.id}/restore`, alice, { newname: 'report-v1.csv' });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(restored.body.Response.data.path, at('report-v1.csv'));
      assert.equal(await (await fetch(`${s.home('alice', 'report-v1.csv')}?download=true`, { headers: { authorization: bob } })).text(), 'a,b\n1,2\n', 'bytes and ACL kept');
      assert.deepEqual((await api('GET', '/api/trash', alice)).body.Response.data, []);

      // The PID points at the data again (still published: its access list came back with it).
      await settle(s);
      const back = await record(pid);
      assert.equal(back.URL, `${s.url}/api/public${at('report-v1.csv')}`);
      assert.equal(back['WITHDRAWN/STATE'], undefined);
      assert.match(await landing(pid), /Download report-v1\.csv/);
    });

    it('a trashed collection takes its contents along; past trash.retention the sweep purges the bytes and the tombstone stays', async () => {
      const inner = await put('proj/deep/data.bin', 'x'.repeat(5000));
      await put('proj/notes.txt', 'y'.repeat(120));
      const trashed = await api('POST', '/api/trash', alice, { path: at('proj') });
      assert.equal(trashed.status, 200);
      assert.equal(trashed.body.Response.data.size, 5120, 'a collection\'s size is its data objects\' together');
      const id = trashed.body.Response.data.id as string;
      assert.ok(!(await names('')).includes('proj'));
      assert.equal((await fetch(s.home('alice', 'proj/deep/data.bin'), { headers: { authorization: alice } })).status, 404);
      const late = await fetch(s.home('alice', 'proj/deep/late.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'late' });
      assert.equal(late.status, 404, 'no upload below a trashed collection');
      await settle(s);
      assert.equal((await record(inner))['WITHDRAWN/STATE'], 'trashed', 'a PID below follows its collection');
      const { entity } = (await s.deps.catalog.withdrawnEntity(inner.slice(inner.indexOf('/') + 1)))!;
      assert.equal(entity.kind, 'dataobject');
      const blob = entity.kind === 'dataobject' ? entity.blob : '';
      assert.equal(await s.deps.resource.size(blob), 5000, 'the bytes are kept while trashed');

      // Not yet: the retention has not passed.
      assert.equal(await s.deps.trash.purgeExpired(), 0);
      clock.offsetMs += (RETENTION + 1) * 1000;
      try {
        assert.equal(await s.deps.trash.purgeExpired(), 1);
        assert.equal(await s.deps.trash.purgeExpired(), 0, 'purged once');
        assert.equal(await s.deps.resource.size(blob), null, 'the bytes are gone');
        const entry = (await api('GET', `/api/trash/${id}`, alice)).body.Response.data;
        assert.equal(entry.state, 'purged');
        assert.equal(entry.removed_by, 'lading');
        assert.deepEqual((await api('GET', '/api/trash', alice)).body.Response.data, [], 'no longer in the trash');
        assert.equal((await api('POST', `/api/trash/${id}/restore`, alice, {})).status, 409, 'nothing to restore');
        await settle(s);
        const tomb = await record(inner);
        assert.equal(tomb['WITHDRAWN/STATE'], 'purged');
        assert.equal(tomb.URL, `${s.url}/api/pids/${inner}`);
        assert.match(await landing(inner), /its data were removed/);
      } finally {
        clock.offsetMs = 0;
      }
    });

    it('an admin\'s takedown removes the bytes at once and says who and why on the tombstone', async () => {
      const pid = await put('leak.txt', 'private');
      const { id } = (await s.deps.trash.takedownByOperator(at('leak.txt'), 'privacy request #12', 'carol'));
      assert.equal((await fetch(s.home('alice', 'leak.txt'), { headers: { authorization: alice } })).status, 404);
      const entry = (await api('GET', `/api/trash/${id}`, alice)).body.Response.data;
      assert.equal(entry.state, 'taken_down');
      assert.equal(entry.removed_by, 'carol');
      assert.equal(entry.removal_reason, 'privacy request #12');
      assert.equal((await api('POST', `/api/trash/${id}/restore`, alice, {})).status, 409);
      await settle(s);
      const tomb = await record(pid);
      assert.equal(tomb['WITHDRAWN/STATE'], 'taken_down');
      assert.equal(tomb['WITHDRAWN/REMOVED_BY'], 'carol');
      assert.equal(tomb['WITHDRAWN/REMOVAL_REASON'], 'privacy request #12');
      const page = await landing(pid);
      assert.match(page, /taken down by an administrator/);
      assert.match(page, /privacy request #12/);
    });

    it('empties the trash, refuses the top collections and a home, and its paths answer 404 or 401', async () => {
      await put('a.txt', 'a');
      await put('b.txt', 'b');
      for (const name of ['a.txt', 'b.txt']) assert.equal((await api('POST', '/api/trash', alice, { path: at(name) })).status, 200);
      const first = (await api('GET', '/api/trash?limit=1', alice)).body;
      assert.equal(first.Response.data.length, 1);
      const next = (await api('GET', `/api/trash?limit=1&after=${first.Meta.continuation_token}`, alice)).body;
      assert.equal((await api('GET', '/api/trash?after=nonsense', alice)).status, 400);
      assert.deepEqual([...first.Response.data, ...next.Response.data].map((e: { path: string }) => e.path).sort(), [at('a.txt'), at('b.txt')], 'two pages of one');
      const emptied = await api('DELETE', '/api/trash', alice);
      assert.equal(emptied.status, 200);
      assert.equal(emptied.body.Response.data.purged, 2);
      assert.deepEqual((await api('GET', '/api/trash', alice)).body.Response.data, []);
      assert.equal((await api('POST', '/api/trash', alice, { path: '/tz/home/alice' })).status, 400);
      assert.equal((await api('POST', '/api/trash', alice, { path: at('nothing-here') })).status, 404);
      assert.equal((await api('POST', '/api/trash', null, { path: at('a.txt') })).status, 401);
    });
  });
}
