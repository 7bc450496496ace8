/**
 * Compressed answers as clients see them on the wire (node:http, which decompresses nothing):
 * a listing with gzip (the cheaper) when Accept-Encoding allows it, Brotli when only that, streamed, the same JSON once
 * decompressed; a data object whose bytes are JSON goes as stored, whatever the client
 * accepts, ranges included; small answers go as they are; the app's script goes compressed
 * with a weak ETag that still earns a 304; and with `compress` off nothing is compressed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { parsePath } from '../../src/core/path.ts';
import { Readable } from 'node:stream';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** One request, the answer's bytes as they came. */
function raw(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject).end();
  });
}

const decoded = (r: Raw) => {
  const coding = r.headers['content-encoding'];
  return coding === 'br' ? brotliDecompressSync(r.body) : coding === 'gzip' ? gunzipSync(r.body) : r.body;
};

describe('compressed answers', () => {
  let s: TestServer;
  let off: TestServer;
  let alice: string;
  const json = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ station: `s-${i}`, depth: i * 2.5, temperature: 12 + (i % 7) })));

  before(async () => {
    s = await startTestServer();
    off = await startTestServer({ compress: false });
    alice = await s.bearer('alice');
    const actor = await s.deps.backend.actorFor('alice');
    assert.equal((await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/tz/home/alice/many' }) })).status, 200);
    for (let i = 0; i < 300; i++) {
      await s.deps.backend.uploadAs(actor, parsePath(`/tz/home/alice/many/file-${String(i).padStart(3, '0')}.csv`), Readable.from([Buffer.from(`${i}\n`)]), { overwrite: false });
    }
    await s.deps.backend.uploadAs(actor, parsePath('/tz/home/alice/data.json'), Readable.from([Buffer.from(json)]), { overwrite: false });
  });
  after(async () => {
    await s?.stop();
    await off?.stop();
  });

  it('a listing: gzip when accepted (the cheaper to make), Brotli when only that is, else none; streamed; the same JSON decompressed', async () => {
    const url = `${s.home('alice', 'many')}/`;
    const plain = await raw(url, { authorization: alice });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    assert.equal((await raw(url, { authorization: alice, 'accept-encoding': 'gzip, deflate, br' })).headers['content-encoding'], 'gzip');
    const br = await raw(url, { authorization: alice, 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers['content-length'], undefined, 'streamed: no length known in advance');
    assert.equal(br.headers['transfer-encoding'], 'chunked');
    assert.match(String(br.headers.vary), /Accept-Encoding/);
    assert.ok(br.body.length * 4 < plain.body.length, `compressed to ${br.body.length} of ${plain.body.length} bytes`);
    assert.equal((await raw(url, { authorization: alice, 'accept-encoding': 'gzip;q=0, br' })).headers['content-encoding'], 'br');
    const gz = await raw(url, { authorization: alice, 'accept-encoding': 'gzip;q=1, br;q=0' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gz.body.length * 4 < plain.body.length, `gzip: ${gz.body.length} of ${plain.body.length} bytes`);
    const strip = (b: Buffer) => { const v = JSON.parse(b.toString()); delete v.Meta; return v; };
    assert.deepEqual(strip(decoded(br)), strip(plain.body));
    assert.deepEqual(strip(decoded(gz)), strip(plain.body));
    assert.equal((await raw(url, { authorization: alice, 'accept-encoding': 'identity' })).headers['content-encoding'], undefined);
  });

  it('a data object\'s bytes go as stored, even when they are JSON and the client accepts Brotli and gzip', async () => {
    for (const accept of ['br', 'gzip', 'gzip, deflate, br', '*']) {
      const got = await raw(`${s.home('alice', 'data.json')}?download=true`, { authorization: alice, 'accept-encoding': accept });
      assert.equal(got.status, 200);
      assert.equal(got.headers['content-encoding'], undefined, accept);
      assert.equal(got.headers['content-length'], String(json.length));
      assert.equal(got.body.toString(), json);
    }
    const part = await raw(`${s.home('alice', 'data.json')}?download=true`, { authorization: alice, 'accept-encoding': 'br', range: 'bytes=10-99' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-encoding'], undefined);
    assert.equal(part.body.toString(), json.slice(10, 100));
  });

  it('small answers go as they are', async () => {
    const meta = await raw(s.home('alice', 'data.json'), { authorization: alice, 'accept-encoding': 'br, gzip' });
    assert.equal(meta.status, 200);
    assert.ok(meta.body.length < 1024, `a metadata answer of ${meta.body.length} bytes`);
    assert.equal(meta.headers['content-encoding'], undefined);
  });

  it('the app\'s script: compressed, with a weak ETag that a revalidation matches', async () => {
    const page = await raw(`${s.url}/`, { accept: 'text/html', 'accept-encoding': 'br' });
    const html = decoded(page).toString();
    assert.equal(page.headers['content-encoding'], html.length >= 1024 ? 'br' : undefined);
    const script = /src="(\/app\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'the page names its script');
    const plain = await raw(`${s.url}${script}`);
    const br = await raw(`${s.url}${script}`, { 'accept-encoding': 'br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.ok(br.body.length * 2.5 < plain.body.length, `${br.body.length} of ${plain.body.length} bytes`);
    assert.deepEqual(decoded(br), plain.body);
    assert.equal(br.headers.etag, `W/${plain.headers.etag}`);
    assert.equal((await raw(`${s.url}${script}`, { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) })).status, 304);
    assert.equal((await raw(`${s.url}${script}`, { 'if-none-match': String(plain.headers.etag) })).status, 304);
  });

  it('with compress off, nothing is compressed', async () => {
    const bob = await off.bearer('bob');
    const page = await raw(`${off.url}/`, { accept: 'text/html', 'accept-encoding': 'br, gzip' });
    const script = /src="(\/app\/[^"]+\.js)"/.exec(page.body.toString())?.[1];
    assert.equal((await raw(`${off.url}${script}`, { 'accept-encoding': 'br, gzip' })).headers['content-encoding'], undefined);
    assert.equal((await raw(`${off.home('bob')}/`, { authorization: bob, 'accept-encoding': 'br, gzip' })).headers['content-encoding'], undefined);
  });
});
