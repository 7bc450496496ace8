/**
 * `GET /auth/session?optional=true`, which the web app asks on every load: without a session it
 * answers 200 with `{signed_in: false}`, so a signed-out visit is no error in the browser's
 * console; with one it answers the session as before; and without `optional` every client
 * still gets 401 with `WWW-Authenticate: Bearer` in the error envelope.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

describe('asking for the session without one', () => {
  let s: TestServer;
  let alice: string;

  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
  });
  after(() => s?.stop());

  it('answers 200 signed_in false with optional=true, and the session with a token', async () => {
    const nobody = await fetch(`${s.url}/auth/session?optional=true`);
    assert.equal(nobody.status, 200);
    const body = await json(nobody);
    assert.deepEqual(body.Response, { data: { signed_in: false }, errors: null });
    assert.equal(body.Meta.status, 200);
    const stale = await fetch(`${s.url}/auth/session?optional=true`, { headers: { authorization: 'Bearer not-a-token' } });
    assert.deepEqual((await json(stale)).Response.data, { signed_in: false }, 'an unknown token is nobody too');
    const signed = await json(await fetch(`${s.url}/auth/session?optional=true`, { headers: { authorization: alice } }));
    assert.equal((signed.Response.data as { user: string }).user, 'alice');
  });

  it('keeps 401 in the error envelope without optional, or with optional=false', async () => {
    for (const query of ['', '?optional=false']) {
      const res = await fetch(`${s.url}/auth/session${query}`);
      assert.equal(res.status, 401, query);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      const body = await json(res);
      assert.equal(body.Response.data, null);
      assert.deepEqual(Object.keys(body.Response.errors?.[0] ?? {}), ['Unauthorized']);
    }
    assert.equal((await fetch(`${s.url}/auth/session?optional=maybe`)).status, 400, 'not a flag');
  });
});
