/**
 * `GET /auth/b2safeproxy` checks a bearer token as the original service did: 200 with the data
 * "validated", 401 for a missing or bad token; and the OpenAPI document says so.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

describe('GET /auth/b2safeproxy', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer(); });
  after(() => s.stop());

  it('answers "validated" for a valid token and 401 otherwise', async () => {
    const alice = await s.bearer('alice');
    const ok = await fetch(`${s.url}/auth/b2safeproxy`, { headers: { authorization: alice } });
    assert.equal(ok.status, 200);
    assert.deepEqual(await json(ok), {
      Meta: { data_type: "<class 'str'>", elements: 1, errors: 0, status: 200 },
      Response: { data: 'validated', errors: null },
    });
    for (const headers of [{ authorization: 'Bearer not-a-token' }, {} as Record<string, string>]) {
      const bad = await fetch(`${s.url}/auth/b2safeproxy`, { headers });
      assert.equal(bad.status, 401);
      assert.match(bad.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal((await json(bad)).Meta.status, 401);
    }
    await fetch(`${s.url}/auth/logout`, { method: 'POST', headers: { authorization: alice } });
    assert.equal((await fetch(`${s.url}/auth/b2safeproxy`, { headers: { authorization: alice } })).status, 401, 'a revoked token is not valid');
  });

  it('is documented', async () => {
    const doc = await (await fetch(`${s.url}/api/specs`)).json() as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const get = doc.paths['/auth/b2safeproxy']?.get;
    assert.ok(get, 'GET /auth/b2safeproxy is in the document');
    assert.ok(get.responses['200'] && get.responses['401']);
  });
});
