/**
 * Requests at the edges of HTTP, written byte by byte: every refusal — the parser's, the
 * router's, Fastify's or lading's — is the envelope where HTTP allows a body.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { errorCodes } from 'fastify';
import { errorEnvelopeOf, toLadingError } from '../../src/http/errors.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { type RawAnswer, rawExchange } from './raw-socket.ts';

/** Asserts `answer` is lading's error envelope with `status`; returns its one message. */
function assertEnvelope(answer: RawAnswer, status: number): string {
  assert.equal(answer.status, status, answer.raw.slice(0, 300));
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as { Meta: { status: number; errors: number }; Response: { data: null; errors: Record<string, string>[] } };
  assert.equal(body.Meta.status, status);
  assert.equal(body.Meta.errors, 1);
  assert.equal(body.Response.data, null);
  assert.equal(body.Response.errors.length, 1);
  return Object.values(body.Response.errors[0]!)[0]!;
}

describe('raw HTTP edges', () => {
  let s: TestServer;
  let alice: string;
  let host: string;
  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
    host = new URL(s.url).host;
  });
  after(() => s.stop());

  const send = (bytes: string | Buffer, options?: Parameters<typeof rawExchange>[2]) => rawExchange(s.url, bytes, options);

  describe('parser and framework refusals are the envelope', () => {
    it('a 70 KB URL: 431', async () => {
      assertEnvelope(await send(`GET /api/registered/${'a'.repeat(70_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`), 431);
    });

    it('headers over the limit: 431', async () => {
      assertEnvelope(await send(`GET /api/status HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`), 431);
    });

    const malformed: [string, string][] = [
      ['Content-Length with Transfer-Encoding', `PUT /api/status HTTP/1.1\r\nHost: H\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
      ['two Content-Length headers', `PUT /api/status HTTP/1.1\r\nHost: H\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd`],
      ['a bad chunk size', `PUT /api/status HTTP/1.1\r\nHost: H\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`],
      ['a bare LF', `GET /api/status HTTP/1.1\nHost: H\n\n`],
      ['a folded header', `GET /api/status HTTP/1.1\r\nHost: H\r\nX-A: one\r\n two\r\n\r\n`],
      ['an unknown method', `FROB /api/status HTTP/1.1\r\nHost: H\r\n\r\n`],
      ['a raw NUL in the target', `GET /api/\0status HTTP/1.1\r\nHost: H\r\n\r\n`],
      ['a space in the target', `GET /api/sta tus HTTP/1.1\r\nHost: H\r\n\r\n`],
    ];
    for (const [name, bytes] of malformed) {
      it(`${name}: 400`, async () => {
        assertEnvelope(await send(bytes.replaceAll('Host: H', `Host: ${host}`)), 400);
      });
    }

    it('HTTP/1.1 without Host: 400', async () => {
      assert.match(assertEnvelope(await send('GET /api/status HTTP/1.1\r\n\r\n'), 400), /Host/);
    });

    it('HTTP/1.0 without Host, where links need one (no public_url): the envelope too', async () => {
      assertEnvelope(await send('GET /api/status HTTP/1.0\r\n\r\n'), 400);
    });

    it('an HTTP version other than 1.x: 505', async () => {
      assertEnvelope(await send(`GET /api/status HTTP/2.0\r\nHost: ${host}\r\n\r\n`), 505);
    });

    it('CONNECT: 501, not a closed socket', async () => {
      assertEnvelope(await send(`CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n`), 501);
    });

    it('a parameter over the router\'s length limit: 414', () => {
      // NOTE: no route of lading has a parameter the router would reach with a long value (the
      // wildcard routes take any length), so the mapping is checked on the error itself.
      const { status, body } = errorEnvelopeOf(toLadingError(new errorCodes.FST_ERR_MAX_PARAM_LENGTH('/x')));
      assert.equal(status, 414);
      assert.equal(body.Meta.status, 414);
    });

    it('a JSON body over the limit: 413', async () => {
      const body = JSON.stringify({ path: 'x'.repeat(2 << 20) });
      assertEnvelope(await send(`POST /api/registered HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`), 413);
    });
  });

  describe('transfer codings', () => {
    it('a transfer coding lading does not decode (gzip, chunked): 501, nothing stored', async () => {
      const path = new URL(s.home('alice', 'gz.bin')).pathname;
      const answer = await send(`PUT ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`);
      assertEnvelope(answer, 501);
      assert.equal((await fetch(s.home('alice', 'gz.bin'), { headers: { authorization: alice } })).status, 404);
    });

    it('plain chunked is still accepted', async () => {
      const path = new URL(s.home('alice', 'chunked.bin')).pathname;
      const answer = await send(`PUT ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`);
      assert.equal(answer.status, 200, answer.raw);
    });
  });

  describe('a client that half-closes after its body', () => {
    it('gets its answer, and the object is there', async () => {
      const path = new URL(s.home('alice', 'half.bin')).pathname;
      const answer = await send(
        `PUT ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\n\r\nhello`,
        { halfClose: true },
      );
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(JSON.parse(answer.body).Response.data.filename, 'half.bin');
    });

    it('with Connection: close too', async () => {
      const path = new URL(s.home('alice', 'half-close.bin')).pathname;
      const answer = await send(
        `PUT ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`,
        { halfClose: true },
      );
      assert.equal(answer.status, 200, answer.raw);
    });
  });

  describe('methods', () => {
    for (const method of ['TRACE', 'PROPFIND', 'MKCOL', 'PROPPATCH', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'PURGE']) {
      it(`${method} on an existing path: 405 with Allow`, async () => {
        const answer = await send(`${method} /api/registered/tz/home/alice HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nContent-Length: 0\r\n\r\n`);
        assertEnvelope(answer, 405);
        assert.equal(answer.headers.allow, 'GET, HEAD, PUT, POST, PATCH, OPTIONS');
      });
    }

    it('OPTIONS: 204 with Allow', async () => {
      const answer = await send(`OPTIONS /api/registered/tz/home/alice HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      assert.equal(answer.status, 204, answer.raw);
      assert.equal(answer.headers.allow, 'GET, HEAD, PUT, POST, PATCH, OPTIONS');
      assert.equal(answer.body, '');
    });

    it('OPTIONS and TRACE on /api/status name its methods', async () => {
      assert.equal((await send(`OPTIONS /api/status HTTP/1.1\r\nHost: ${host}\r\n\r\n`)).headers.allow, 'GET, HEAD, OPTIONS');
      assert.equal((await send(`TRACE /api/status HTTP/1.1\r\nHost: ${host}\r\n\r\n`)).headers.allow, 'GET, HEAD, OPTIONS');
    });

    it('a method on a path no route has is still 404', async () => {
      assertEnvelope(await send(`PROPFIND /nowhere HTTP/1.1\r\nHost: ${host}\r\n\r\n`), 404);
    });

    it('POST /api/registered with text/plain: 415', async () => {
      const res = await fetch(`${s.url}/api/registered`, {
        method: 'POST', headers: { authorization: alice, 'content-type': 'text/plain' }, body: '{"path": "/tz/home/alice/t"}',
      });
      assert.equal(res.status, 415);
      assert.equal((await json(res)).Meta.status, 415);
    });
  });

  describe('request headers', () => {
    it('two Authorization headers: 400', async () => {
      const answer = await send(`GET /api/registered/tz/home/alice HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nAuthorization: Bearer other\r\n\r\n`);
      assert.match(assertEnvelope(answer, 400), /Authorization/);
    });
  });

  describe('JSON bodies', () => {
    it('invalid UTF-8 in a JSON body: 400, nothing created', async () => {
      const body = Buffer.concat([Buffer.from('{"path": "/tz/home/alice/'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
      const res = await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body });
      assert.equal(res.status, 400);
      assert.match(Object.values((await json(res)).Response.errors![0]!)[0]!, /UTF-8/);
      const list = await json(await fetch(s.home('alice') + '/', { headers: { authorization: alice } }));
      assert.ok(!JSON.stringify(list).includes('\ufffd'));
    });

    it('a __proto__ key: 400 that says so', async () => {
      const res = await fetch(`${s.url}/api/registered`, {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: '{"path": "/tz/home/alice/p", "__proto__": {"x": 1}}',
      });
      assert.equal(res.status, 400);
      assert.match(Object.values((await json(res)).Response.errors![0]!)[0]!, /__proto__/);
    });
  });
});
