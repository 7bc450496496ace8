/**
 * Search over HTTP (`GET /api/search`) and recent uploads (`GET /api/recent`), against a whole
 * lading node: by name (a substring, ignoring case, or a glob), by metadata attribute and
 * value, below a collection, paged by an opaque token; only what the caller may read — their
 * home, what is shared with them or their group or every user — and never another user's
 * private data, not even below a collection they name; the caller's latest uploads first.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

interface Found { dataobject: string; path: string; metadata: { object_type: string; size: number | null; modified: string; owner: string } }

describe('GET /api/search and GET /api/recent', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let carol: string;
  const api = (method: string, path: string, auth: string, body?: unknown) => fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const put = async (user: string, auth: string, rest: string, body = 'data') => {
    const res = await fetch(s.home(user, rest), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body });
    assert.equal(res.status, 200, rest);
  };
  const mkdir = async (path: string, auth: string) => assert.equal((await api('POST', '/api/registered', auth, { path, force: true })).status, 200, path);
  const grant = async (path: string, principal: string, level: string) => assert.equal((await api('PUT', `/api/acl${path}`, alice, { principal, level })).status, 200);
  const meta = async (path: string, attribute: string, value: string, auth = alice) => assert.equal((await api('POST', `/api/metadata${path}`, auth, { attribute, value })).status, 200);
  const search = async (auth: string, query: Record<string, string>) => {
    const res = await fetch(`${s.url}/api/search?${new URLSearchParams(query)}`, { headers: { authorization: auth } });
    const body = await json(res);
    const records = res.status === 200 ? (body.Response.data as Record<string, Found>[]).map((r) => Object.values(r)[0]!) : [];
    return { status: res.status, body, records, paths: records.map((r) => `${r.path}/${r.dataobject}`) };
  };
  const paths = async (auth: string, query: Record<string, string>) => {
    const found = await search(auth, query);
    assert.equal(found.status, 200, JSON.stringify(found.body.Response.errors));
    return found.paths;
  };

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
    carol = await s.bearer('carol');
    await s.deps.admin.addGroup('team');
    await s.deps.admin.addToGroup('team', 'carol');
    for (const dir of ['private', 'shared', 'shared/sub', 'team', 'everyone']) await mkdir(`/tz/home/alice/${dir}`, alice);
    await put('alice', alice, 'private/Survey-2026.csv');
    await put('alice', alice, 'private/secret-survey.txt');
    await put('alice', alice, 'shared/survey-results.CSV', 'results');
    await put('alice', alice, 'shared/sub/raw_survey.json');
    await put('alice', alice, 'team/team-survey.md');
    await put('alice', alice, 'everyone/public-survey.pdf');
    await put('bob', bob, 'my-survey.txt');
    await grant('/tz/home/alice/shared', 'bob', 'read');
    await grant('/tz/home/alice/team', 'team', 'write');
    await grant('/tz/home/alice/everyone', 'public', 'read');
    await meta('/tz/home/alice/private/Survey-2026.csv', 'project', 'alpha');
    await meta('/tz/home/alice/shared/survey-results.CSV', 'project', 'alpha');
    await meta('/tz/home/alice/shared/sub', 'project', 'beta');
  });
  after(() => s.stop());

  it('finds by part of the name, ignoring case, in the caller\'s home, with a listing\'s records', async () => {
    const found = await search(alice, { name: 'SURVEY', under: '/tz/home/alice/private' });
    assert.equal(found.status, 200);
    assert.deepEqual(found.paths, ['/tz/home/alice/private/Survey-2026.csv', '/tz/home/alice/private/secret-survey.txt']);
    assert.equal(found.body.Meta.elements, 2);
    assert.equal(found.body.Meta.continuation_token, null);
    const first = found.records[0]!;
    assert.equal(first.path, '/tz/home/alice/private', 'path is the collection holding it, as in a listing');
    assert.equal(first.metadata.object_type, 'dataobject');
    assert.equal(first.metadata.size, 4);
    assert.equal(first.metadata.owner, 'alice');
    assert.deepEqual(await paths(alice, { name: '*.csv', under: '/tz/home/alice' }), ['/tz/home/alice/private/Survey-2026.csv', '/tz/home/alice/shared/survey-results.CSV'], 'a glob over the whole name');
    assert.deepEqual(await paths(alice, { name: 'sub', type: 'collection' }), ['/tz/home/alice/shared/sub']);
  });

  it('finds by metadata attribute, and attribute and value', async () => {
    assert.deepEqual(await paths(alice, { attribute: 'project' }), [
      '/tz/home/alice/private/Survey-2026.csv', '/tz/home/alice/shared/sub', '/tz/home/alice/shared/survey-results.CSV',
    ]);
    assert.deepEqual(await paths(alice, { attribute: 'project', value: 'alpha', under: '/tz/home/alice/shared' }), ['/tz/home/alice/shared/survey-results.CSV']);
    assert.deepEqual(await paths(alice, { attribute: 'project', value: 'alpha', name: 'survey', type: 'dataobject' }), [
      '/tz/home/alice/private/Survey-2026.csv', '/tz/home/alice/shared/survey-results.CSV',
    ]);
    const bad = await search(alice, { value: 'alpha' });
    assert.equal(bad.status, 400, 'a value needs an attribute');
  });

  it('never finds another user\'s private data; finds what is shared with the caller, their group or every user', async () => {
    assert.deepEqual(await paths(bob, { name: 'survey' }), [
      '/tz/home/alice/everyone/public-survey.pdf', '/tz/home/alice/shared/sub/raw_survey.json', '/tz/home/alice/shared/survey-results.CSV', '/tz/home/bob/my-survey.txt',
    ]);
    assert.deepEqual(await paths(carol, { name: 'survey' }), ['/tz/home/alice/everyone/public-survey.pdf', '/tz/home/alice/team/team-survey.md']);
    assert.deepEqual(await paths(bob, { attribute: 'project', value: 'alpha' }), ['/tz/home/alice/shared/survey-results.CSV'], 'metadata of private data is not searched either');
    assert.deepEqual(await paths(bob, { name: 'secret', under: '/tz/home/alice/private' }), [], 'naming a private collection finds nothing, and says nothing of it');
    assert.deepEqual(await paths(bob, { name: 'secret', under: '/tz/home/alice/no-such' }), [], 'a missing one answers the same');
    assert.deepEqual(await paths(bob, { under: '/tz/home/alice' }), [
      '/tz/home/alice/everyone', '/tz/home/alice/everyone/public-survey.pdf', '/tz/home/alice/shared', '/tz/home/alice/shared/sub',
      '/tz/home/alice/shared/sub/raw_survey.json', '/tz/home/alice/shared/survey-results.CSV',
    ], 'no criterion: everything the caller reads below the collection');
    await s.deps.admin.addUser('an-admin', { admin: true, password: 'pw-an-admin' });
    assert.ok((await paths(`Bearer ${await s.login('an-admin')}`, { name: 'secret' })).includes('/tz/home/alice/private/secret-survey.txt'), 'an admin reads everything');
  });

  it('answers 404 or 400 for a collection the caller reads that is missing or a data object, 401 without a token', async () => {
    assert.equal((await search(alice, { under: '/tz/home/alice/missing' })).status, 404);
    assert.equal((await search(alice, { under: '/tz/home/alice/private/Survey-2026.csv' })).status, 400);
    assert.equal((await search(alice, { under: 'relative/path' })).status, 400);
    assert.equal((await search(alice, { limit: '0' })).status, 400);
    assert.equal((await search(alice, { after: 'not-a-token' })).status, 400);
    assert.equal((await search(alice, { colour: 'red' })).status, 400, 'an unknown parameter');
    const res = await fetch(`${s.url}/api/search?name=survey`);
    assert.equal(res.status, 401);
  });

  it('pages by an opaque continuation token that joins up', async () => {
    const all = await paths(bob, { name: 'survey' });
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page = await search(bob, { name: 'survey', limit: '1', ...(after ? { after } : {}) });
      assert.equal(page.status, 200);
      seen.push(...page.paths);
      after = page.body.Meta.continuation_token as string | null;
      if (after === null) break;
      assert.equal(page.paths.length, 1);
    }
    assert.deepEqual(seen, all);
  });

  it('lists the caller\'s latest uploads first, only theirs, paged', async () => {
    await put('alice', alice, 'shared/newest.txt');
    const res = await fetch(`${s.url}/api/recent?limit=2`, { headers: { authorization: alice } });
    assert.equal(res.status, 200);
    const body = await json(res);
    const names = (body.Response.data as Record<string, Found>[]).map((r) => Object.keys(r)[0]);
    assert.equal(names[0], 'newest.txt');
    assert.equal(names.length, 2);
    const token = body.Meta.continuation_token as string;
    assert.ok(token);
    const next = await json(await fetch(`${s.url}/api/recent?limit=100&after=${encodeURIComponent(token)}`, { headers: { authorization: alice } }));
    const rest = (next.Response.data as Record<string, Found>[]).map((r) => Object.keys(r)[0]);
    assert.equal(names.length + rest.length, 7, 'alice uploaded seven objects');
    assert.equal(next.Meta.continuation_token, null);
    const bobs = await json(await fetch(`${s.url}/api/recent`, { headers: { authorization: bob } }));
    assert.deepEqual((bobs.Response.data as Record<string, Found>[]).map((r) => Object.keys(r)[0]), ['my-survey.txt']);
  });
});
