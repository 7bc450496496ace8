/**
 * Uploads with exactly one meaning: the two upload modes and nothing else, a form with exactly
 * one `file` part whose other fields may come in any order, and a stalled body that gives up
 * its connection and its temporary file.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { rawExchange } from './raw-socket.ts';

const BOUNDARY = 'lading-test-boundary';

type Part = { name: string; value: string; filename?: string };

/** A multipart/form-data body with the parts in the order given. */
function form(parts: Part[]): string {
  return parts.map((p) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n`
    + (p.filename ? 'Content-Type: application/octet-stream\r\n' : '') + `\r\n${p.value}\r\n`).join('') + `--${BOUNDARY}--\r\n`;
}

function message(body: { Response: { errors: Record<string, string>[] | null } }): string {
  return Object.values(body.Response.errors![0]!)[0]!;
}

describe('upload edges', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer({ 'limits.body_idle_timeout': 1 });
    alice = await s.bearer('alice');
  });
  after(() => s.stop());

  const put = (name: string, init: { headers?: Record<string, string>; body?: string | Buffer }, query = '') => fetch(s.home('alice', name) + query, {
    method: 'PUT', headers: { authorization: alice, ...init.headers }, body: init.body,
  });
  const putForm = (name: string, parts: Part[], query = '') => put(name, {
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: form(parts),
  }, query);
  const read = async (name: string) => (await fetch(s.home('alice', name) + '?download=true', { headers: { authorization: alice } })).text();

  describe('the two upload modes', () => {
    it('no body and no Content-Type: 415, nothing created', async () => {
      const res = await put('nothing.bin', {});
      assert.equal(res.status, 415);
      assert.equal((await json(res)).Meta.status, 415);
      assert.equal((await fetch(s.home('alice', 'nothing.bin'), { headers: { authorization: alice } })).status, 404);
    });

    it('an empty octet-stream body with Content-Length: 0 is an empty object', async () => {
      const res = await put('empty.bin', { headers: { 'content-type': 'application/octet-stream' }, body: '' });
      assert.equal(res.status, 200);
      assert.equal(await read('empty.bin'), '');
    });

    it('an empty chunked octet-stream body is an empty object', async () => {
      const path = new URL(s.home('alice', 'empty-chunked.bin')).pathname;
      const answer = await rawExchange(s.url, `PUT ${path} HTTP/1.1\r\nHost: ${new URL(s.url).host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(await read('empty-chunked.bin'), '');
    });
  });

  describe('multipart forms', () => {
    it('force as a form field before the file overwrites', async () => {
      assert.equal((await putForm('f1.txt', [{ name: 'file', value: 'one', filename: 'f1.txt' }])).status, 200);
      const res = await putForm('f1.txt', [{ name: 'force', value: 'True' }, { name: 'file', value: 'two', filename: 'f1.txt' }]);
      assert.equal(res.status, 200);
      assert.equal(await read('f1.txt'), 'two');
    });

    it('force as a form field after the file overwrites too', async () => {
      assert.equal((await putForm('f2.txt', [{ name: 'file', value: 'one', filename: 'f2.txt' }])).status, 200);
      const res = await putForm('f2.txt', [{ name: 'file', value: 'two', filename: 'f2.txt' }, { name: 'force', value: 'tRuE' }]);
      assert.equal(res.status, 200);
      assert.equal(await read('f2.txt'), 'two');
    });

    it('force=false in the form still refuses to overwrite (409), and the old content stays', async () => {
      assert.equal((await putForm('f3.txt', [{ name: 'file', value: 'one', filename: 'f3.txt' }])).status, 200);
      const res = await putForm('f3.txt', [{ name: 'file', value: 'two', filename: 'f3.txt' }, { name: 'force', value: 'false' }]);
      assert.equal(res.status, 409);
      assert.equal(await read('f3.txt'), 'one');
    });

    it('a force field that is not a flag: 400', async () => {
      const res = await putForm('f4.txt', [{ name: 'force', value: 'maybe' }, { name: 'file', value: 'x', filename: 'f4.txt' }]);
      assert.equal(res.status, 400);
      assert.match(message(await json(res)), /force/);
    });

    it('two file parts: 400, nothing stored', async () => {
      const res = await putForm('two.txt', [{ name: 'file', value: 'a', filename: 'two.txt' }, { name: 'file', value: 'b', filename: 'two.txt' }]);
      assert.equal(res.status, 400);
      assert.match(message(await json(res)), /one file/);
      assert.equal((await fetch(s.home('alice', 'two.txt'), { headers: { authorization: alice } })).status, 404);
    });

    it('another file part before or after `file`: 400 that names it, whatever the order', async () => {
      for (const parts of [
        [{ name: 'other', value: 'o', filename: 'o.txt' }, { name: 'file', value: 'a', filename: 'mixed.txt' }],
        [{ name: 'file', value: 'a', filename: 'mixed.txt' }, { name: 'other', value: 'o', filename: 'o.txt' }],
      ]) {
        const res = await putForm('mixed.txt', parts);
        assert.equal(res.status, 400);
        assert.match(message(await json(res)), /'other'/);
      }
      assert.equal((await fetch(s.home('alice', 'mixed.txt'), { headers: { authorization: alice } })).status, 404);
    });

    it('fields other than force, in any order, are ignored', async () => {
      const res = await putForm('fields.txt', [{ name: 'note', value: 'n' }, { name: 'file', value: 'abc', filename: 'fields.txt' }, { name: 'tag', value: 't' }]);
      assert.equal(res.status, 200);
      assert.equal(await read('fields.txt'), 'abc');
    });

    it('a form file name with a directory part, uploaded into a collection: 400 naming the rule, nothing stored', async () => {
      for (const filename of ['sub/dir/f8.txt', '../f8.txt', '/f8.txt']) {
        const res = await putForm('', [{ name: 'file', value: 'x', filename }], '/');
        assert.equal(res.status, 400, filename);
        assert.match(message(await json(res)), /name/i, filename);
      }
      assert.equal((await fetch(s.home('alice', 'f8.txt'), { headers: { authorization: alice } })).status, 404, 'not stored under its last segment');
      const plain = await putForm('', [{ name: 'file', value: 'y', filename: 'C:\\Users\\x\\f9.txt' }], '/');
      assert.equal(plain.status, 200, 'a backslash is an ordinary character of a name: stored as sent');
      assert.equal((await json(plain)).Response.data.filename, 'C:\\Users\\x\\f9.txt');
    });

    it('multipart/form-data without a boundary: 400', async () => {
      for (const type of ['multipart/form-data', 'multipart/form-data;boundary', 'multipart/form-data; boundary=']) {
        const res = await put('noboundary.txt', { headers: { 'content-type': type }, body: 'x' });
        assert.equal(res.status, 400, type);
        assert.match(message(await json(res)), /boundary/);
      }
    });
  });

  describe('a stalled body', () => {
    it('is dropped after limits.body_idle_timeout, with its temporary file', async () => {
      const url = new URL(s.home('alice', 'stalled.bin'));
      const started = Date.now();
      const answer = await rawExchange(s.url, `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 100\r\n\r\nhalf`, { timeoutMs: 10_000 });
      const waited = Date.now() - started;
      assert.ok(waited >= 900 && waited < 5000, `closed after ${waited} ms`);
      assert.equal(answer.status, 408, answer.raw);
      let left: string[] = ['?'];
      for (let i = 0; i < 40 && left.length > 0; i++) {
        left = await readdir(join(s.dataDir, 'resource', 'tmp'));
        if (left.length > 0) await sleep(50);
      }
      assert.deepEqual(left, []);
      assert.equal((await fetch(s.home('alice', 'stalled.bin'), { headers: { authorization: alice } })).status, 404);
    });

    it('a slow body that keeps moving is not dropped', async () => {
      const url = new URL(s.home('alice', 'slow.bin'));
      const answer = await rawExchange(s.url, `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 4\r\n\r\nab`, { later: 'cd', pauseMs: 600, timeoutMs: 10_000 });
      assert.equal(answer.status, 200, answer.raw);
    });
  });
});
