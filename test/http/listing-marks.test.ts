/**
 * A listing's marks (`marks=true`): to the owner of the collection, each entry says whether it
 * is published, shared with other users or groups, and has a live share link; without the
 * parameter, and to a caller who does not own the collection, no entry carries them. On the
 * SQLite catalog and, with LADING_TEST_PG_URL, on PostgreSQL.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { onPostgres } from '../helpers/postgres-schema.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

function marksSuite(catalog: string, flags: Record<string, unknown>, cleanup: () => Promise<void>): void {
  describe(`listing marks (${catalog})`, () => {
    let s: TestServer;
    let alice: string;
    let bob: string;
    const home = '/tz/home/alice';
    const call = (method: string, url: string, body?: unknown, auth = alice) => fetch(`${s.url}${url}`, {
      method, headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const marksOf = async (query: string, auth = alice) => {
      const res = await call('GET', `/api/registered${home}/box/${query}`, undefined, auth);
      assert.equal(res.status, 200);
      const data = (await json(res)).Response.data as Record<string, { metadata: Record<string, unknown> }>[];
      return Object.fromEntries(data.map((r) => {
        const [name, record] = Object.entries(r)[0]!;
        const { published, shared, share_links: links } = record.metadata;
        return [name, published === undefined && shared === undefined && links === undefined ? null : { published, shared, links }];
      }));
    };

    before(async () => {
      s = await startTestServer(flags);
      alice = await s.bearer('alice');
      bob = await s.bearer('bob');
      assert.equal((await call('POST', '/api/registered', { path: `${home}/box` })).status, 200);
      for (const name of ['plain', 'public', 'team', 'linked']) {
        assert.equal((await fetch(s.home('alice', `box/${name}.txt`), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: name })).status, 200);
      }
      assert.equal((await call('PUT', `/api/publish${home}/box/public.txt`)).status, 200);
      assert.equal((await call('PUT', `/api/acl${home}/box/team.txt`, { principal: 'bob', level: 'read' })).status, 200);
      assert.equal((await call('POST', '/api/shares', { path: `${home}/box/linked.txt`, kind: 'read' })).status, 201);
    });
    after(async () => {
      await s?.stop();
      await cleanup();
    });

    it('marks=true: the owner sees which entries are published, shared and linked', async () => {
      const none = { published: false, shared: false, links: false };
      assert.deepEqual(await marksOf('?marks=true'), {
        'linked.txt': { ...none, links: true },
        'plain.txt': none,
        'public.txt': { ...none, published: true },
        'team.txt': { ...none, shared: true },
      });
      assert.deepEqual(await marksOf('?marks=true&max_keys=2'), { 'linked.txt': { ...none, links: true }, 'plain.txt': none }, 'paged too');
    });

    it('without marks=true, or to a caller without own on the collection, no entry carries them', async () => {
      assert.deepEqual(await marksOf(''), { 'linked.txt': null, 'plain.txt': null, 'public.txt': null, 'team.txt': null });
      assert.equal((await call('PUT', `/api/acl${home}/box`, { principal: 'bob', level: 'read' })).status, 200);
      assert.deepEqual(await marksOf('?marks=true', bob), { 'linked.txt': null, 'plain.txt': null, 'public.txt': null, 'team.txt': null });
      const bad = await call('GET', `/api/registered${home}/box/?marks=maybe`);
      assert.equal(bad.status, 400);
    });
  });
}

marksSuite('SQLite', {}, async () => {});

onPostgres('listing marks', 'marks', (flags, cleanup) => marksSuite('PostgreSQL', flags, cleanup));
