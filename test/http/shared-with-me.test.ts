/**
 * "Shared with me" over HTTP (`GET /api/access/shared-with-me`): what other users share with a
 * caller — directly or through a group — listed once at its top-most entity, with the caller's
 * access, in the shape of a listing's entries; what is granted to `public`, published, or lies in
 * the caller's own home is not listed; more than 1,000 shared entities answer the first 1,000
 * by path and say so. Against a whole lading node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parsePath } from '../../src/core/path.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

interface Shared { dataobject: string; link: string; location: string; path: string; access: string; metadata: Record<string, unknown> }

describe('GET /api/access/shared-with-me', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let carol: string;
  const url = () => `${s.url}/api/access/shared-with-me`;
  const api = (method: string, path: string, auth: string, body?: unknown) => fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const mkdir = (path: string, auth = alice) => api('POST', '/api/registered', auth, { path, force: true });
  const grant = (path: string, principal: string, level: string) => api('PUT', `/api/acl${path}`, alice, { principal, level });
  const sharedWith = async (auth: string) => {
    const res = await fetch(url(), { headers: { authorization: auth } });
    assert.equal(res.status, 200);
    const body = await json(res);
    const records = (body.Response.data as Record<string, Shared>[]).map((r) => Object.values(r)[0]!);
    return { body, records, paths: records.map((r) => `${r.path}/${r.dataobject}`) };
  };

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
    carol = await s.bearer('carol');
    await s.deps.admin.addGroup('team');
    await s.deps.admin.addToGroup('team', 'carol');
    await s.deps.admin.addToGroup('team', 'bob');
    for (const dir of ['proj/sub', 'proj q', 'team-only', 'everyone', 'published', 'private']) {
      assert.equal((await mkdir(`/tz/home/alice/${dir}`)).status, 200);
    }
    const put = await fetch(s.home('alice', 'proj/sub/data.csv'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: '0123456789' });
    assert.equal(put.status, 200);
    assert.equal((await grant('/tz/home/alice/proj', 'bob', 'read')).status, 200);
    assert.equal((await grant('/tz/home/alice/proj/sub', 'bob', 'write')).status, 200);
    assert.equal((await grant('/tz/home/alice/proj/sub/data.csv', 'carol', 'read')).status, 200);
    assert.equal((await grant('/tz/home/alice/proj q', 'bob', 'own')).status, 200);
    assert.equal((await grant('/tz/home/alice/team-only', 'team', 'write')).status, 200);
    assert.equal((await grant('/tz/home/alice/everyone', 'public', 'write')).status, 200);
    assert.equal((await api('PUT', '/api/publish/tz/home/alice/published', alice)).status, 200);
    // bob works inside what alice shared with him: his entries there are below what is listed.
    assert.equal((await mkdir('/tz/home/alice/proj/sub/bobs', bob)).status, 200);
  });
  after(() => s.stop());

  it('lists the top-most entities shared with the caller or their groups, sorted by path, with their access', async () => {
    const { body, paths, records } = await sharedWith(bob);
    assert.deepEqual(paths, ['/tz/home/alice/proj', '/tz/home/alice/proj q', '/tz/home/alice/team-only'], 'byte order: "proj" < "proj q"; proj/sub and bobs lie below proj; public and published ones are not shared with bob');
    assert.deepEqual(records.map((r) => r.access), ['read', 'own', 'write']);
    assert.equal(body.Meta.elements, 3);
    assert.equal(body.Meta.data_type, "<class 'list'>");
    assert.equal((body.Meta as { truncated?: boolean }).truncated, false);

    const carolSees = await sharedWith(carol);
    assert.deepEqual(carolSees.paths, ['/tz/home/alice/proj/sub/data.csv', '/tz/home/alice/team-only'], 'a data object shared on its own, and through the group');
    assert.deepEqual(carolSees.records.map((r) => r.access), ['read', 'write']);
  });

  it('answers each entity exactly as a listing of its collection does, plus the access', async () => {
    const listing = await json(await fetch(s.home('alice', ''), { headers: { authorization: alice } }));
    const listed = (listing.Response.data as Record<string, unknown>[]).find((r) => 'proj' in r) as Record<string, Record<string, unknown>>;
    const { body } = await sharedWith(bob);
    const first = (body.Response.data as Record<string, Record<string, unknown>>[])[0]!;
    assert.deepEqual(Object.keys(first), ['proj']);
    const { access, ...record } = first.proj!;
    assert.equal(access, 'read');
    assert.deepEqual(record, listed.proj);

    const carolSees = (await json(await fetch(url(), { headers: { authorization: carol } }))).Response.data as Record<string, Record<string, unknown>>[];
    const object = carolSees[0]!['data.csv']!;
    assert.equal((object.metadata as { object_type: string }).object_type, 'dataobject');
    assert.equal((object.metadata as { size: number }).size, 10);
    assert.equal(object.path, '/tz/home/alice/proj/sub');
  });

  it('counts what public holds above a shared entity in the access, and leaves out the caller\'s home', async () => {
    assert.equal((await grant('/tz/home/alice', 'public', 'write')).status, 200);
    try {
      const { records } = await sharedWith(bob);
      assert.deepEqual(records.map((r) => r.access), ['write', 'own', 'write'], 'proj: read by bob\'s entry, write through public above');
    } finally {
      assert.equal((await api('DELETE', '/api/acl/tz/home/alice?principal=public', alice)).status, 200);
    }
    const { paths } = await sharedWith(alice);
    assert.deepEqual(paths, [], 'alice\'s entries are all in her home');
    assert.equal((await mkdir('/tz/home/bob/for-alice', bob)).status, 200);
    assert.equal((await api('PUT', '/api/acl/tz/home/bob/for-alice', bob, { principal: 'alice', level: 'read' })).status, 200);
    assert.deepEqual((await sharedWith(alice)).paths, ['/tz/home/bob/for-alice']);
    assert.deepEqual((await sharedWith(bob)).paths.filter((p) => p.startsWith('/tz/home/bob')), [], 'bob\'s own home is not shared with him');
  });

  it('answers 401 without a token and refuses parameters', async () => {
    const res = await fetch(url());
    assert.equal(res.status, 401);
    assert.equal((await json(res)).Response.data, null);
    assert.equal((await fetch(`${url()}?max=5`, { headers: { authorization: bob } })).status, 400);
  });

  it('answers at most 1,000 entities, the first by path, and says more were left out', { timeout: 120_000 }, async () => {
    // NOTE: made through the catalog: 1,500 collections over HTTP would only slow the test.
    const c = s.deps.catalog;
    const now = new Date();
    await s.deps.backend.addUser('dora', { passwordHash: null });
    await c.createCollection({ path: parsePath('/tz/home/alice/many'), owner: 'alice', now });
    const name = (i: number) => `c${String(i).padStart(4, '0')}`;
    for (let i = 0; i < 1100; i++) {
      const path = parsePath(`/tz/home/alice/many/${name(i)}`);
      await c.createCollection({ path, owner: 'alice', now });
      await c.setAccess(path, 'dora', 'read');
    }
    // Below the first shared collection, more entries of dora's than one catalog page holds:
    // they are skipped, not listed.
    for (let i = 0; i < 400; i++) {
      const path = parsePath(`/tz/home/alice/many/${name(0)}/${name(i)}`);
      await c.createCollection({ path, owner: 'alice', now });
      await c.setAccess(path, 'dora', 'write');
    }
    const token = await s.deps.sessions.open('dora');
    const { body, paths, records } = await sharedWith(`Bearer ${token}`);
    assert.equal(paths.length, 1000);
    assert.equal((body.Meta as { truncated?: boolean }).truncated, true);
    assert.deepEqual(paths.slice(0, 2), ['/tz/home/alice/many/c0000', '/tz/home/alice/many/c0001']);
    assert.equal(paths.at(-1), '/tz/home/alice/many/c0999');
    assert.ok(records.every((r) => r.access === 'read'));
  });
});
