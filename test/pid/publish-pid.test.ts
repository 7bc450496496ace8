/**
 * PIDs and publishing on a whole node with PID rules: a record's URL is the public URL while
 * its object (or a collection above it) is published and the registered URL again after, also
 * for objects registered inside a published collection; and `/api/pids` content negotiation —
 * the landing page for clients that prefer HTML, the envelope for everyone else.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { preferredType } from '../../src/http/negotiation.ts';
import { humanSize } from '../../src/http/pid-page.ts';

const RULES = `
object.created      /tz/home/**   pid.register
object.overwritten  /tz/home/**   pid.update
object.renamed      /tz/home/**   pid.update
collection.renamed  /tz/home/**   pid.update
entity.published    /tz/home/**   pid.update
entity.unpublished  /tz/home/**   pid.update
`;

/** Waits until no job is pending or running (fan-out jobs included). */
async function settle(s: TestServer): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = (await s.deps.catalog.listJobs(null, 100_000)).filter((j) => j.state === 'pending' || j.state === 'running');
    if (open.length === 0) return;
    await s.deps.jobs.waitFor(open.map((j) => j.id), 10_000);
  }
  throw new Error('jobs did not settle');
}

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('PID records follow publishing', () => {
  let dir: string;
  let s: TestServer;
  let auth: string;
  const put = (rest: string, body: string) => fetch(`${s.home('alice', rest)}?pid_await=true`, {
    method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body,
  });
  const publish = (rest: string, method: 'PUT' | 'DELETE') => fetch(`${s.url}/api/publish/tz/home/alice/${rest}`, { method, headers: { authorization: auth } });
  const urlOf = async (pid: string) => (await json(await fetch(`${s.url}/api/pids/${pid}`))).Response.data.URL as string;
  const registered = (rest: string) => s.home('alice', rest);
  const published = (rest: string) => `${s.url}/api/public/tz/home/alice/${rest}`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-publish-'));
    await writeFile(join(dir, 'rules.txt'), RULES);
    s = await startTestServer({ 'pid.rules': join(dir, 'rules.txt'), 'pid.prefix': '21.T33333', 'resource.fsync': false });
    auth = await s.bearer('alice');
    await fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/tz/home/alice/survey/deep', force: true }),
    });
  });
  after(async () => {
    await s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a published collection\'s objects point at the public URL, new ones too, and back after unpublishing', async () => {
    const top = (await json(await put('survey/top.csv', 'a,b\n'))).Response.data.PID as string;
    const deep = (await json(await put('survey/deep/inner.csv', 'c,d\n'))).Response.data.PID as string;
    assert.match(top, /^21\.T33333\//);
    assert.equal(await urlOf(deep), registered('survey/deep/inner.csv'));

    assert.equal((await publish('survey', 'PUT')).status, 200);
    await settle(s);
    assert.equal(await urlOf(top), published('survey/top.csv'));
    assert.equal(await urlOf(deep), published('survey/deep/inner.csv'));
    const after = (await json(await put('survey/deep/later.csv', 'e,f\n'))).Response.data.PID as string;
    assert.ok(after, 'registered while published');
    assert.equal(await urlOf(after), published('survey/deep/later.csv'), 'registered inside a published collection');
    // The public URL works without a token, as the record promises.
    assert.equal(await (await fetch(`${await urlOf(deep)}?download=true`)).text(), 'c,d\n');
    // A PID download with a token follows a public URL too.
    assert.equal(await (await fetch(`${s.url}/api/pids/${deep}?download=true`, { headers: { authorization: auth } })).text(), 'c,d\n');

    assert.equal((await publish('survey', 'DELETE')).status, 200);
    await settle(s);
    for (const [pid, rest] of [[top, 'survey/top.csv'], [deep, 'survey/deep/inner.csv'], [after, 'survey/deep/later.csv']] as const) {
      assert.equal(await urlOf(pid), registered(rest));
    }
  });

  it('publishing one object switches its own record; a rename while published keeps the public URL', async () => {
    const pid = (await json(await put('single.txt', 'one'))).Response.data.PID as string;
    await publish('single.txt', 'PUT');
    await settle(s);
    assert.equal(await urlOf(pid), published('single.txt'));
    await fetch(s.home('alice', 'single.txt'), { method: 'PATCH', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'renamed.txt' }) });
    await settle(s);
    assert.equal(await urlOf(pid), published('renamed.txt'));
    await publish('renamed.txt', 'DELETE');
    await settle(s);
    assert.equal(await urlOf(pid), registered('renamed.txt'));
  });

  describe('/api/pids by Accept', () => {
    let pid: string;
    before(async () => {
      pid = (await json(await put('page <b>&amp; "quotes".csv', 'x,y\n1,2\n'))).Response.data.PID as string;
    });

    it('keeps the JSON envelope for curl (*/*), API clients and no Accept at all', async () => {
      for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.9', 'text/html;q=0.5, */*']) {
        const res = await fetch(`${s.url}/api/pids/${pid}`, { headers: accept ? { accept } : {} });
        assert.equal(res.status, 200, String(accept));
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, String(accept));
        assert.equal((await json(res)).Response.data['EUDAT/ROR'], pid);
        assert.match(res.headers.get('vary') ?? '', /Accept/i);
      }
      const unknown = await fetch(`${s.url}/api/pids/21.T33333/unknown`, { headers: { accept: '*/*' } });
      assert.equal(unknown.status, 404);
      assert.equal((await json(unknown)).Meta.status, 404);
    });

    it('gives a browser the landing page: fields, escaped, under a strict CSP; a 404 page for an unknown PID', async () => {
      const res = await fetch(`${s.url}/api/pids/${pid}`, { headers: { accept: BROWSER } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/]+=*'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      const html = await res.text();
      assert.ok(html.includes('page &#60;b&#62;&#38;amp; &#34;quotes&#34;.csv'), 'the name is escaped');
      assert.ok(!html.includes('<b>&amp;'), 'nothing unescaped');
      assert.ok(html.includes(pid));
      assert.match(html, /8 bytes/);
      assert.match(html, /sha2:/);
      assert.match(html, />alice</);
      assert.match(html, /not public/, 'no download without publication');
      assert.doesNotMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, 'no external resource or link');
      const head = await fetch(`${s.url}/api/pids/${pid}`, { method: 'HEAD', headers: { accept: BROWSER } });
      assert.match(head.headers.get('content-type') ?? '', /^text\/html/);

      const missing = await fetch(`${s.url}/api/pids/21.T33333/unknown`, { headers: { accept: BROWSER } });
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await missing.text(), /PID not found/);
    });

    it('offers the public download once published', async () => {
      await publish('page <b>&amp; "quotes".csv', 'PUT');
      const html = await (await fetch(`${s.url}/api/pids/${pid}`, { headers: { accept: BROWSER } })).text();
      const href = /<a class="button primary" href="([^"]+)"/.exec(html)?.[1];
      assert.ok(href, 'a download button');
      assert.equal(href.replaceAll('&#38;', '&'), `${published(encodeURIComponent('page <b>&amp; "quotes".csv'))}?download=true`);
      assert.equal(await (await fetch(href.replaceAll('&#38;', '&'))).text(), 'x,y\n1,2\n');
    });

    it('says where a PID that points elsewhere goes, as a link only for http(s)', async () => {
      await s.deps.pids.put('21.T33333/elsewhere', { URL: 'https://repository.example.org/record/42' });
      const html = await (await fetch(`${s.url}/api/pids/21.T33333/elsewhere`, { headers: { accept: BROWSER } })).text();
      assert.match(html, /points elsewhere/);
      assert.match(html, /<a href="https:\/\/repository\.example\.org\/record\/42">/);
      await s.deps.pids.put('21.T33333/script', { URL: 'javascript:alert(1)' });
      const hostile = await (await fetch(`${s.url}/api/pids/21.T33333/script`, { headers: { accept: BROWSER } })).text();
      assert.doesNotMatch(hostile, /href="javascript/);
      assert.match(hostile, /<code>javascript:alert\(1\)<\/code>/);
    });
  });
});

describe('Accept negotiation', () => {
  it('prefers HTML only when the client ranks it above JSON', () => {
    const offered = ['application/json', 'text/html'] as const;
    assert.equal(preferredType(undefined, offered), 'application/json');
    assert.equal(preferredType('', offered), 'application/json');
    assert.equal(preferredType('*/*', offered), 'application/json');
    assert.equal(preferredType(BROWSER, offered), 'text/html');
    assert.equal(preferredType('text/*', offered), 'text/html');
    assert.equal(preferredType('text/html;q=0.4, application/json;q=0.5', offered), 'application/json');
    assert.equal(preferredType('text/html, application/json', offered), 'application/json', 'a tie keeps the default');
    assert.equal(preferredType('text/html;q=0, */*', offered), 'application/json');
    assert.equal(preferredType('image/png', offered), 'application/json', 'nothing acceptable: the default');
    assert.equal(preferredType('TEXT/HTML', offered), 'text/html');
  });
});

describe('sizes on the landing page', () => {
  it('reads as people read them', () => {
    assert.equal(humanSize(0), '0 bytes');
    assert.equal(humanSize(1), '1 byte');
    assert.equal(humanSize(1023), '1023 bytes');
    assert.equal(humanSize(1024), '1.0 KiB');
    assert.equal(humanSize(1_234_567), '1.2 MiB');
    assert.equal(humanSize(250 * 1024 ** 3), '250 GiB');
  });
});
