/**
 * What answers tell caches and browsers: every answer made for whoever asks — read with a
 * bearer token or a session cookie, its errors too — says `Cache-Control: private, no-store`,
 * so no shared cache stores it and no browser keeps it; only answers that are the same for
 * everyone (published data, the web app's page and files) or read through a share link's URL
 * say otherwise. Every answer, errors and streamed downloads included, carries
 * `X-Content-Type-Options: nosniff`. The walk covers every operation of the OpenAPI document.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { rawExchange } from './raw-socket.ts';
import { Jar, loginToCallback } from '../oidc/flow.ts';

interface Operation { requestBody?: { content: Record<string, unknown> } }
interface Document { paths: Record<string, Record<string, Operation>> }

const PRIVATE = 'private, no-store';

/**
 * The operations whose answer may be cached otherwise, and what they say. Each is the same for
 * whoever asks, or read through a link whose token is in the URL.
 */
const NOT_PRIVATE: Record<string, (cacheControl: string | null, status: number) => boolean> = {
  // Published data: the same for everyone, asked again each time so unpublishing takes effect.
  'GET /api/public/{*}': (cc) => cc === 'no-cache',
  'HEAD /api/public/{*}': (cc) => cc === 'no-cache',
  // The web app's page (the same for everyone) and its files (named by their content).
  'GET /': (cc) => cc === 'no-cache',
  'GET /app/{file}': (cc, status) => (status === 200 ? cc === 'public, max-age=31536000, immutable' : cc === PRIVATE),
  // lading's icon, the same for everyone.
  'GET /favicon.svg': (cc) => cc === 'public, max-age=86400',
  // Read through a link: the holder's browser only, asked again each time.
  'GET /api/shared/{token}': (cc) => cc === 'private, no-cache',
  'HEAD /api/shared/{token}': (cc) => cc === 'private, no-cache',
  'GET /api/shared/{token}/{*}': (cc) => cc === 'private, no-cache',
  'HEAD /api/shared/{token}/{*}': (cc) => cc === 'private, no-cache',
};

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('caching and sniffing headers', () => {
  let s: TestServer;
  let doc: Document;
  let shareToken: string;
  let asset: string;
  const file = () => s.home('alice', 'f.txt');

  before(async () => {
    // NOTE: with the example rules, so objects get PIDs and their landing pages exist.
    s = await startTestServer({ zone: 'lading', 'pid.rules': fileURLToPath(new URL('../../examples/rules.txt', import.meta.url)) });
    const alice = await s.bearer('alice');
    const put = await fetch(`${file()}?pid_await=true`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'some bytes' });
    assert.equal(put.status, 200, await put.text());
    const share = await fetch(`${s.url}/api/shares`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' },
      body: JSON.stringify({ path: `/${s.zone}/home/alice/f.txt`, kind: 'read' }),
    });
    shareToken = (await json(share)).Response.data.token as string;
    doc = await (await fetch(`${s.url}/api/specs`)).json() as Document;
    asset = /src="\/app\/([^"]+\.js)"/.exec(await (await fetch(`${s.url}/`)).text())?.[1] ?? 'main.js';
  });
  after(() => s?.stop());

  /** The path of `template` with plausible values in its parameters. */
  const fill = (template: string) => template
    .replace('/api/shared/{token}', `/api/shared/${shareToken}`)
    .replace(/^(\/api\/(?:pids|handles))\/\{\*\}/, '$1/21.T12345/0000-unknown')
    .replace('/api/shared/' + shareToken + '/{*}', `/api/shared/${shareToken}/f.txt`)
    .replace('{*}', `${s.zone}/home/alice/f.txt`)
    .replace('{id}', '00000000-0000-4000-8000-000000000000')
    .replace('{file}', asset);

  /** A plausible body for an operation that reads one: its first media type, nearly empty. */
  const bodyOf = (name: string, op: Operation): { type: string; body: string } | null => {
    // NOTE: a login that succeeds, so the answer carrying a token is walked too.
    if (name === 'POST /auth/login' || name === 'POST /auth/b2safeproxy') return { type: 'application/json', body: JSON.stringify({ username: 'alice', password: 'pw-alice' }) };
    const type = Object.keys(op.requestBody?.content ?? {})[0];
    if (!type) return null;
    return { type, body: type === 'application/json' ? '{}' : type === 'application/x-www-form-urlencoded' ? 'a=b' : 'x' };
  };

  it('says private, no-store on every answer that depends on who asks, and nosniff on every answer, with a token and without', async () => {
    const walked: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${template}`;
        // NOTE: a token of its own for each operation, since some revoke the one they get.
        const token = await s.login('alice');
        const body = bodyOf(name, op);
        for (const authorization of [`Bearer ${token}`, null]) {
          const headers: Record<string, string> = { 'tus-resumable': '1.0.0' };
          if (authorization) headers.authorization = authorization;
          if (body) headers['content-type'] = body.type;
          const res = await fetch(`${s.url}${fill(template)}`, {
            method: method.toUpperCase(), headers, redirect: 'manual',
            ...(body && method !== 'get' && method !== 'head' ? { body: body.body } : {}),
          });
          await res.arrayBuffer();
          const what = `${name} ${authorization ? 'with a token' : 'without'} → ${res.status}`;
          assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
          const cc = res.headers.get('cache-control');
          const allowed = NOT_PRIVATE[name];
          if (allowed) assert.ok(allowed(cc, res.status), `${what}: Cache-Control ${cc}`);
          else assert.equal(cc, PRIVATE, what);
        }
        walked.push(name);
      }
    }
    for (const name of ['GET /api/registered/{*}', 'GET /api/acl/{*}', 'GET /api/metadata/{*}', 'GET /api/shares', 'GET /api/uploads', 'PUT /api/publish/{*}', 'POST /auth/b2safeproxy', 'GET /auth/session']) {
      assert.ok(walked.includes(name), `the document has ${name}`);
    }
  });

  it('answers what a browser session cookie reads privately too', async () => {
    await s.addUser('bob', 'pw-bob');
    const { jar, callback } = await loginToCallback(s.url, 'bob', 'pw-bob', new Jar(), `${s.url}/auth/signin`);
    const landed = await jar.fetch(callback, { redirect: 'manual' });
    assert.equal(landed.status, 303, await landed.text());
    assert.equal(landed.headers.get('cache-control'), PRIVATE);
    for (const url of [`${s.url}/auth/session`, s.home('bob'), `${s.url}/api/shares`]) {
      const res = await jar.fetch(url);
      assert.equal(res.status, 200, url);
      await res.arrayBuffer();
      assert.equal(res.headers.get('cache-control'), PRIVATE, url);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', url);
    }
  });

  it('gives the page of a share link, which shows what the link leads to, to its holder\'s browser only', async () => {
    const page = await fetch(`${s.url}/api/shared/${shareToken}`, { headers: { accept: BROWSER } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /lading-data/);
    assert.equal(page.headers.get('cache-control'), 'private, no-cache');
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  });

  it('keeps validators and nosniff on streamed downloads, and answers 304 with them', async () => {
    const authorization = `Bearer ${await s.login('alice')}`;
    const whole = await fetch(`${file()}?download=true`, { headers: { authorization } });
    assert.equal(whole.status, 200);
    assert.equal(await whole.text(), 'some bytes');
    assert.equal(whole.headers.get('cache-control'), PRIVATE);
    assert.equal(whole.headers.get('x-content-type-options'), 'nosniff');
    const etag = whole.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${file()}?download=true`, { headers: { authorization, 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(again.headers.get('cache-control'), PRIVATE);
    assert.equal(again.headers.get('x-content-type-options'), 'nosniff');
    const part = await fetch(`${file()}?download=true`, { headers: { authorization, range: 'bytes=0-3' } });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), 'some');
    assert.equal(part.headers.get('cache-control'), PRIVATE);
    assert.equal(part.headers.get('x-content-type-options'), 'nosniff');
  });

  it('gives the landing page of an object that is not public privately, and that of a published one to every cache', async () => {
    const authorization = `Bearer ${await s.login('alice')}`;
    const put = await fetch(`${s.home('alice', 'landing.txt')}?pid_await=true`, { method: 'PUT', headers: { authorization, 'content-type': 'application/octet-stream' }, body: 'x' });
    const pid = (await json(put)).Response.data.PID as string;
    assert.ok(pid, 'the object has a PID');
    const page = async () => {
      const res = await fetch(`${s.url}/api/pids/${pid}`, { headers: { accept: BROWSER } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      return res.headers.get('cache-control');
    };
    assert.equal(await page(), PRIVATE);
    const record = await fetch(`${s.url}/api/pids/${pid}`);
    assert.equal(record.status, 200);
    assert.equal(record.headers.get('cache-control'), PRIVATE);
    assert.equal((await fetch(`${s.url}/api/publish/${s.zone}/home/alice/landing.txt`, { method: 'PUT', headers: { authorization } })).status, 200);
    assert.equal(await page(), 'no-cache');
  });

  it('says nosniff and private, no-store on errors raised before any route', async () => {
    const unknown = await fetch(`${s.url}/no/such/route`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(unknown.headers.get('cache-control'), PRIVATE);
    const host = new URL(s.url).host;
    const badUrl = await rawExchange(s.url, `GET /api/registered/%zz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.headers['x-content-type-options'], 'nosniff');
    assert.equal(badUrl.headers['cache-control'], PRIVATE);
    const malformed = await rawExchange(s.url, 'GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.headers['x-content-type-options'], 'nosniff');
  });

  it('says nosniff on what the embedded identity provider answers', async () => {
    const discovery = await fetch(`${s.url}/oidc/.well-known/openid-configuration`);
    assert.equal(discovery.status, 200);
    await discovery.arrayBuffer();
    assert.equal(discovery.headers.get('x-content-type-options'), 'nosniff');
  });
});
