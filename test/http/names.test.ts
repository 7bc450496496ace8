/**
 * Names over HTTP: the name rule refuses, with a 400 naming the character, what a listing could
 * not show or would show as another name; names stored before the rule stay listable, readable
 * and renamable; and a response that does not match its schema is an error, never a silently
 * shortened answer.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { parsePath } from '../../src/core/path.ts';
import { registerResponseCheck } from '../../src/http/response-check.ts';
import { registerErrorHandlers } from '../../src/http/errors.ts';

describe('names a listing must show as they are', () => {
  let s: TestServer;
  let alice: string;
  const put = (name: string, body = 'x') => fetch(s.home('alice', encodeURIComponent(name)), {
    method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body,
  });

  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
  });
  after(() => s.stop());

  it('refuses a new name with U+2028, U+2029, a C1 control, a bidirectional control or U+FEFF with a 400 naming it', async () => {
    const cases: [string, RegExp][] = [
      ['a\u202Etxt.exe', /U\+202E RIGHT-TO-LEFT OVERRIDE is not allowed in a name/],
      ['line\u2028sep', /U\+2028 LINE SEPARATOR/],
      ['para\u2029sep', /U\+2029 PARAGRAPH SEPARATOR/],
      ['c1\u009Bx', /U\+009B/],
      ['iso\u2066late', /U\+2066 LEFT-TO-RIGHT ISOLATE/],
      ['\uFEFFbom', /U\+FEFF/],
    ];
    for (const [name, message] of cases) {
      const res = await put(name);
      assert.equal(res.status, 400, JSON.stringify(name));
      const body = await json(res);
      assert.match(Object.values(body.Response.errors![0]!)[0]!, message);
      const mkdir = await fetch(`${s.url}/api/registered`, {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `/${s.zone}/home/alice/${name}` }),
      });
      assert.equal(mkdir.status, 400, `POST ${JSON.stringify(name)}`);
      const form = new FormData();
      form.append('file', new Blob(['x']), name);
      const formUpload = await fetch(s.home('alice') + '/', { method: 'PUT', headers: { authorization: alice }, body: form });
      assert.equal(formUpload.status, 400, `form ${JSON.stringify(name)}`);
    }
    const listing = await json(await fetch(s.home('alice') + '/', { headers: { authorization: alice } }));
    assert.deepEqual(listing.Response.data, [], 'nothing was stored');
  });

  it('refuses a rename to such a name', async () => {
    assert.equal((await put('plain.txt')).status, 200);
    const res = await fetch(s.home('alice', 'plain.txt'), {
      method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'x\u202Etxt' }),
    });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(await json(res)), /U\+202E RIGHT-TO-LEFT OVERRIDE/);
  });

  it('lists, reads and renames a name stored before the rule, showing every record', async () => {
    const { credential } = await s.deps.sessions.authenticate(alice.slice('Bearer '.length));
    const legacy = `/${s.zone}/home/alice/old\u2028name.txt`;
    await s.deps.backend.upload(credential, parsePath(legacy), Readable.from([Buffer.from('old')]), { overwrite: false });
    await s.deps.backend.createCollection(credential, parsePath(`/${s.zone}/home/alice/dir\u202Eold`), { parents: false });

    const listing = await json(await fetch(s.home('alice') + '/', { headers: { authorization: alice } }));
    assert.equal(listing.Meta.elements, listing.Response.data.length);
    const names = listing.Response.data.map((record: Record<string, unknown>) => Object.keys(record)[0]);
    assert.ok(names.includes('old\u2028name.txt'), `names: ${JSON.stringify(names)}`);
    assert.ok(names.includes('dir\u202Eold'));
    for (const record of listing.Response.data) assert.equal(Object.keys(record).length, 1, 'no record is empty');

    const meta = await json(await fetch(s.home('alice', encodeURIComponent('old\u2028name.txt')), { headers: { authorization: alice } }));
    assert.equal(meta.Meta.elements, 1);
    assert.equal(meta.Response.data[0]['old\u2028name.txt'].metadata.name, 'old\u2028name.txt');
    const bytes = await fetch(`${s.home('alice', encodeURIComponent('old\u2028name.txt'))}?download=true`, { headers: { authorization: alice } });
    assert.equal(await bytes.text(), 'old');

    const renamed = await fetch(s.home('alice', encodeURIComponent('old\u2028name.txt')), {
      method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'new-name.txt' }),
    });
    assert.equal(renamed.status, 200);
    assert.equal((await json(renamed)).Response.data.filename, 'new-name.txt');
    const dir = await fetch(s.home('alice', encodeURIComponent('dir\u202Eold')), {
      method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'dir-new' }),
    });
    assert.equal(dir.status, 200);
  });
});

describe('responses that do not match their schema', () => {
  it('are a 500, never an answer with a field silently left out', async () => {
    const app = Fastify({ logger: false });
    registerErrorHandlers(app);
    registerResponseCheck(app);
    const Out = Type.Object({ kept: Type.String() });
    const Keyed = Type.Object({ items: Type.Record(Type.String({ pattern: '^[a-z]+$' }), Type.Integer()) });
    const ErrorOut = Type.Object({ Meta: Type.Any(), Response: Type.Any() });
    app.get('/extra', { schema: { response: { 200: Out, '5xx': ErrorOut } } }, async () => ({ kept: 'a', dropped: 'b' }));
    app.get('/key', { schema: { response: { 200: Keyed, '5xx': ErrorOut } } }, async () => ({ items: { ok: 1, 'NOT-ok': 2 } }));
    app.get('/coerced', { schema: { response: { 200: Out, '5xx': ErrorOut } } }, async () => ({ kept: 12 }));
    app.get('/fine', { schema: { response: { 200: Keyed } } }, async () => ({ items: { ok: 1 } }));
    try {
      for (const url of ['/extra', '/key', '/coerced']) {
        const res = await app.inject({ url });
        assert.equal(res.statusCode, 500, `${url}: ${res.body}`);
        assert.equal(res.json().Meta.status, 500);
      }
      const fine = await app.inject({ url: '/fine' });
      assert.equal(fine.statusCode, 200);
      assert.deepEqual(fine.json(), { items: { ok: 1 } });
    } finally {
      await app.close();
    }
  });
});
