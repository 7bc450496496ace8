/**
 * An absolute-form request target (`PUT http://host/api/registered/…`, RFC 9112 §3.2.2) acts on
 * the path the router matched, exactly as the origin form would; written byte for byte on a
 * socket, since fetch never sends that form.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { rawExchange } from './raw-socket.ts';

describe('absolute-form request targets', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
  });
  after(() => s.stop());

  it('uploads to, reads and renames the routed path, not a path cut at a fixed length', async () => {
    const host = new URL(s.url).host;
    const path = `/api/registered/${s.zone}/home/alice/abs.txt`;
    const up = await rawExchange(s.url,
      `PUT http://abcdefg${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\nConnection: close\r\n\r\n` + 'hello');
    assert.equal(up.status, 200, up.body);
    assert.equal(JSON.parse(up.body).Response.data.path, `/${s.zone}/home/alice`);

    const stored = await fetch(s.home('alice', 'abs.txt') + '?download=true', { headers: { authorization: alice } });
    assert.equal(stored.status, 200);
    assert.equal(await stored.text(), 'hello');

    const meta = await rawExchange(s.url, `GET HTTP://${host}${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nConnection: close\r\n\r\n`);
    assert.equal(meta.status, 200, meta.body);
    assert.ok(JSON.parse(meta.body).Response.data[0]['abs.txt']);

    const body = JSON.stringify({ newname: 'abs2.txt' });
    const renamed = await rawExchange(s.url,
      `PATCH https://elsewhere.example:8443${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` + body);
    assert.equal(renamed.status, 200, renamed.body);
    assert.equal((await fetch(s.home('alice', 'abs2.txt'), { headers: { authorization: alice } })).status, 200);
  });

  it('keeps refusing traversal and encoded separators in the absolute form', async () => {
    const host = new URL(s.url).host;
    for (const evil of ['..', '%2e%2e', 'a%2Fb']) {
      const res = await rawExchange(s.url, `GET http://${host}/api/registered/${s.zone}/home/alice/${evil}/x HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 400, `${evil}: ${res.body}`);
    }
    assert.equal((await json(await fetch(s.home('alice') + '/', { headers: { authorization: alice } }))).Meta.status, 200);
  });
});
