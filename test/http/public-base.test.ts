/**
 * Links never echo what a client puts in Host: a Host that is not host[:port] is refused, a
 * configured public URL is the only base of links, PID records name the configured URL or the
 * listen address (never a request's Host), and `serve` and `serve --check` say which applies.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { rawExchange } from './raw-socket.ts';
import { PublicBase } from '../../src/core/public-base.ts';
import { loadConfig } from '../../src/wiring/config.ts';
import { checkDeployment } from '../../src/wiring/check.ts';

describe('PublicBase', () => {
  it('answers the configured URL for every request and outside requests', () => {
    const base = new PublicBase('https://staging.example.org/');
    assert.equal(base.forRequest({ protocol: 'http', host: 'evil.example' }), 'https://staging.example.org');
    assert.equal(base.outside(), 'https://staging.example.org');
    base.check({ protocol: 'http', host: undefined });
  });

  it('without one, follows the checked Host in answers and the listen address outside them', () => {
    const base = new PublicBase(null);
    assert.throws(() => base.outside(), { code: 'UNAVAILABLE' });
    assert.equal(base.known, false);
    base.listening({ address: '0.0.0.0', family: 'IPv4', port: 8080 });
    base.listening({ address: '10.0.0.1', family: 'IPv4', port: 9 });
    assert.equal(base.outside(), 'http://127.0.0.1:8080', 'told once; an unspecified address is named 127.0.0.1');
    assert.equal(base.forRequest({ protocol: 'https', host: 'staging.example.org:8443' }), 'https://staging.example.org:8443');
    for (const host of ['example.org', 'example.org:80', '127.0.0.1:8080', '[::1]:8080', 'my_service:3000', 'a-b.example.']) base.check({ protocol: 'http', host });
    for (const host of ['evil.example"><script>', 'a b', 'a/b', 'user@host', 'host:port', 'host:123456', '[::1', '', 'é.example']) {
      assert.throws(() => base.check({ protocol: 'http', host }), { code: 'BAD_REQUEST' }, host);
    }
    assert.throws(() => base.check({ protocol: 'javascript', host: 'example.org' }), { code: 'BAD_REQUEST' });
  });
});

describe('links with no public URL configured', () => {
  let s: TestServer;
  let alice: string;
  const logged: string[] = [];
  before(async () => {
    const sink = new Writable({ write(chunk, _encoding, done) { logged.push(String(chunk)); done(); } });
    s = await startTestServer({}, { overrides: { logger: pino({ level: 'warn' }, sink) } });
    alice = await s.bearer('alice');
    await fetch(s.home('alice', 'f.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'x' });
  });
  after(() => s.stop());

  it('refuses a Host that is not host[:port] with the 400 envelope', async () => {
    for (const host of ['evil.example"><script>', 'evil.example/x', 'a b']) {
      const res = await rawExchange(s.url, `GET /api/registered/${s.zone}/home/alice/ HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${alice}\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 400, `${host}: ${res.body}`);
      assert.ok(!res.body.includes('evil.example'), 'the Host is not echoed');
      assert.equal(JSON.parse(res.body).Meta.status, 400);
    }
  });

  it('refuses HTTP/1.0 without Host, where links would be http:///…', async () => {
    const res = await rawExchange(s.url, `GET /api/registered/${s.zone}/home/alice/ HTTP/1.0\r\nAuthorization: ${alice}\r\n\r\n`);
    assert.equal(res.status, 400, res.body);
    assert.doesNotMatch(res.body, /http:\/\/\//);
  });

  it('makes links from a valid Host, and says so at start with a warning', async () => {
    const listing = await json(await fetch(s.home('alice') + '/', { headers: { authorization: alice } }));
    assert.ok(listing.Response.data[0]['f.txt'].link.startsWith(`${s.url}/api/registered/`));
    const warning = logged.map((line) => JSON.parse(line) as { level: number; msg: string }).find((l) => /public_url/.test(l.msg));
    assert.ok(warning, `log: ${logged.join('')}`);
    assert.equal(warning.level, 40, 'at warn');
    assert.match(warning.msg, /Host/);
  });

  it('names the server the document was asked of in /api/specs servers', async () => {
    const doc = await (await fetch(`${s.url}/api/specs`)).json() as { servers?: { url: string }[] };
    assert.deepEqual(doc.servers, [{ url: s.url }]);
  });
});

describe('links with a public URL configured', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer({ public_url: 'https://staging.example.org' });
    alice = await s.bearer('alice');
    await fetch(s.home('alice', 'f.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'x' });
  });
  after(() => s.stop());

  it('uses it and nothing else, whatever Host says, also for HTTP/1.0 without Host', async () => {
    const res = await rawExchange(s.url, `GET /api/registered/${s.zone}/home/alice/ HTTP/1.1\r\nHost: other.example:1234\r\nAuthorization: ${alice}\r\nConnection: close\r\n\r\n`);
    assert.equal(res.status, 200, res.body);
    assert.equal(JSON.parse(res.body).Response.data[0]['f.txt'].link, `https://staging.example.org/api/registered/${s.zone}/home/alice/f.txt`);
    const old = await rawExchange(s.url, `GET /api/registered/${s.zone}/home/alice/ HTTP/1.0\r\nAuthorization: ${alice}\r\n\r\n`);
    assert.equal(old.status, 200, old.body);
    assert.match(old.body, /https:\/\/staging\.example\.org\/api\/registered\//);
    const bad = await rawExchange(s.url, `GET /api/status HTTP/1.1\r\nHost: evil.example"><script>\r\nConnection: close\r\n\r\n`);
    assert.equal(bad.status, 400);
  });

  it('names it in /api/specs servers', async () => {
    const doc = await (await fetch(`${s.url}/api/specs`)).json() as { servers?: { url: string }[] };
    assert.deepEqual(doc.servers, [{ url: 'https://staging.example.org' }]);
  });
});

describe('links in PID records', () => {
  let dir: string;
  let s: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-links-'));
    await writeFile(join(dir, 'rules.txt'), 'object.created /tz/home/** pid.register\n');
    s = await startTestServer({ 'pid.rules': join(dir, 'rules.txt'), 'pid.prefix': '21.T11111' });
  });
  after(async () => {
    await s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('name the listen address when no public URL is configured, never the request\'s Host', async () => {
    const alice = await s.bearer('alice');
    const body = 'pid me';
    const res = await rawExchange(s.url,
      `PUT /api/registered/${s.zone}/home/alice/p.txt?pid_await=true HTTP/1.1\r\nHost: evil.example:1\r\nAuthorization: ${alice}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    assert.equal(res.status, 200, res.body);
    const data = JSON.parse(res.body).Response.data;
    assert.ok(data.link.startsWith('http://evil.example:1/'), 'the answer follows the Host (no public URL configured)');
    assert.ok(data.PID, 'registered');
    const record = await s.deps.pids.resolve(data.PID);
    assert.equal(record?.URL, `${s.url}/api/registered/${s.zone}/home/alice/p.txt`);
  });

  it('are described by serve --check', async () => {
    const data = await mkdtemp(join(tmpdir(), 'lading-check-'));
    try {
      const rules = join(dir, 'rules.txt');
      const without = await checkDeployment(loadConfig({ env: {}, flags: { data, listen: '0.0.0.0:8080', 'pid.rules': rules } }));
      assert.match(without, /PID records: public_url is not set, so links in PID records name the listen address http:\/\/127\.0\.0\.1:8080/);
      const withUrl = await checkDeployment(loadConfig({ env: {}, flags: { data, 'pid.rules': rules, public_url: 'https://staging.example.org' } }));
      assert.match(withUrl, /ok {2}PID records: links start with public_url https:\/\/staging\.example\.org/);
    } finally {
      await rm(data, { recursive: true, force: true });
    }
  });
});
