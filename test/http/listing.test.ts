/**
 * Listings of any size: a collection's listing is streamed as the catalog is read (its Meta
 * after its data, counting what was sent), in byte order of the names; `max_keys` and
 * `continuation_token` page through it, as S3's ListObjectsV2 does, for clients that want pages.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LISTING_PAGE } from '../../src/core/backend.ts';
import { type TestServer, json, startTestServer } from '../helpers/server.ts';

describe('listing a collection', () => {
  let s: TestServer;
  let auth: string;
  let names: string[];
  const COUNT = LISTING_PAGE * 2 + 37;

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    auth = await s.bearer('alice');
    const mk = await fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/alice/many` }),
    });
    assert.equal(mk.status, 200);
    // NOTE: names whose byte order differs from a locale's: upper case first, 'é' last.
    names = Array.from({ length: COUNT }, (_, i) => (i % 3 === 0 ? `F${i}` : i % 3 === 1 ? `f${i}` : `é${i}`));
    for (let i = 0; i < names.length; i += 16) {
      await Promise.all(names.slice(i, i + 16).map(async (name) => {
        const res = await fetch(s.home('alice', `many/${encodeURIComponent(name)}`), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: name });
        assert.equal(res.status, 200);
      }));
    }
    names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  });
  after(() => s.stop());

  const list = async (query = '') => {
    const res = await fetch(`${s.home('alice', 'many/')}${query}`, { headers: { authorization: auth } });
    return { res, body: await json(res) };
  };
  const namesOf = (data: Record<string, unknown>[]) => data.map((record) => Object.keys(record)[0]!);

  it('answers every child, across several catalog pages, in byte order, with the envelope of the spec', async () => {
    const { res, body } = await list();
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    assert.equal(res.headers.get('content-length'), null, 'streamed, not buffered');
    assert.deepEqual(namesOf(body.Response.data), names);
    assert.deepEqual(body.Meta, { data_type: "<class 'list'>", elements: COUNT, errors: 0, status: 200 });
    assert.equal(body.Response.errors, null);
    const record = body.Response.data[0][names[0]!];
    assert.equal(record.path, `/${s.zone}/home/alice/many`);
    assert.equal(record.dataobject, names[0]);
  });

  it('pages with max_keys and continuation_token, each child once, the last page saying null', async () => {
    const seen: string[] = [];
    let token: string | null | undefined;
    let pages = 0;
    do {
      const { res, body } = await list(`?max_keys=700${token ? `&continuation_token=${encodeURIComponent(token)}` : ''}`);
      assert.equal(res.status, 200);
      assert.ok(body.Response.data.length <= 700);
      assert.equal(body.Meta.elements, body.Response.data.length);
      seen.push(...namesOf(body.Response.data));
      token = body.Meta.continuation_token;
      assert.notEqual(token, undefined, 'a paged listing always says where the next page starts');
      pages++;
    } while (token !== null);
    assert.deepEqual(seen, names);
    assert.equal(pages, Math.ceil(COUNT / 700));
    const exact = await list(`?max_keys=${COUNT}`);
    assert.equal(exact.body.Meta.continuation_token, null, 'a page that holds the rest is the last');
  });

  it('refuses a continuation_token it did not give and a max_keys out of range with 400', async () => {
    for (const query of ['?continuation_token=***', '?continuation_token=A', '?max_keys=0', '?max_keys=10001', '?max_keys=ten']) {
      const { res, body } = await list(query);
      assert.equal(res.status, 400, query);
      assert.equal(body.Meta.status, 400);
      assert.equal(body.Response.data, null);
    }
  });

  it('pages the home listing too, and refuses a stranger before anything is sent', async () => {
    const home = await fetch(`${s.url}/api/registered?max_keys=1`, { headers: { authorization: auth } });
    const body = await json(home);
    assert.deepEqual(namesOf(body.Response.data), ['many']);
    assert.equal(body.Meta.continuation_token, null);
    const bob = await s.bearer('bob');
    const refused = await fetch(s.home('alice', 'many/'), { headers: { authorization: bob } });
    assert.equal(refused.status, 403);
    assert.equal((await json(refused)).Meta.status, 403);
  });
});
