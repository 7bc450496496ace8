/**
 * Share links over HTTP, as their owners and their holders see them: the owner endpoints
 * (create, list, revoke) with their envelopes and refusals; downloads with HEAD, ranges and
 * conditional requests, and what counts as a use; listings that name paths relative to the
 * shared collection; drop-box uploads as a raw body or a form; passwords as HTTP Basic; expiry;
 * each abuse limit answering 429 with Retry-After; and logs that never show a token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import type { Clock } from '../../src/core/ports.ts';
import { loggerOptions } from '../../src/wiring/logger.ts';
import { json, rawRequest, startTestServer, type EnvelopeBody, type TestServer } from '../helpers/server.ts';

const sha2 = (data: string | Buffer) => 'sha2:' + createHash('sha256').update(data).digest('base64');
const basic = (password: string, user = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A clock running with real time, which a test can move forward. */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

interface CreatedLink { id: string; token: string; url: string; kind: string; path: string | null; uses: number; state: string; password: boolean; creator: string }

describe('share links over HTTP', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  const clock = new OffsetClock();
  const logLines: string[] = [];

  const put = (url: string, body: string | Buffer, headers: Record<string, string> = {}, auth = alice) =>
    fetch(url, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream', ...headers }, body });
  const share = async (body: Record<string, unknown>, auth = alice): Promise<{ res: Response; body: EnvelopeBody }> => {
    const res = await fetch(`${s.url}/api/shares`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { res, body: await json(res) };
  };
  const link = async (body: Record<string, unknown>, auth = alice): Promise<CreatedLink> => {
    const made = await share(body, auth);
    assert.equal(made.res.status, 201, JSON.stringify(made.body));
    return made.body.Response.data as CreatedLink;
  };
  const path = (rest: string) => `/tz/home/alice/${rest}`;
  const usesOf = async (id: string) => {
    const list = await json(await fetch(`${s.url}/api/shares`, { headers: { authorization: alice } }));
    return (list.Response.data as CreatedLink[]).find((l) => l.id === id)?.uses;
  };

  before(async () => {
    // NOTE: the options of the server's own logger, so the test sees what its log shows.
    const logger = pino(loggerOptions('info'), { write: (line: string) => { logLines.push(line); } });
    s = await startTestServer({}, { overrides: { clock, logger } });
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
    const mkdir = (p: string) => fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: p, force: true }),
    });
    await mkdir(path('study/run1'));
    await mkdir(path('inbox'));
    assert.equal((await put(s.home('alice', 'study/genome.fa'), '>chr1\nACGTACGTACGTACGT\n')).status, 200);
    assert.equal((await put(s.home('alice', 'study/run1/reads.txt'), 'read-1\nread-2\n')).status, 200);
  });
  after(() => s.stop());

  describe('owner endpoints', () => {
    it('creates a link: 201 with its id, token and absolute URL, the token 256 random bits', async () => {
      const { res, body } = await share({ path: path('study/genome.fa'), kind: 'read', expires_in: 3600, max_uses: 10 });
      assert.equal(res.status, 201);
      assert.deepEqual(body.Meta, { data_type: "<class 'dict'>", elements: 14, errors: 0, status: 201 });
      const data = body.Response.data as CreatedLink & Record<string, unknown>;
      assert.match(data.token, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(data.url, `${s.url}/api/shared/${data.token}`);
      assert.match(data.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual({ ...data, id: undefined, token: undefined, url: undefined, created_at: undefined, expires_at: undefined }, {
        id: undefined, token: undefined, url: undefined, created_at: undefined, expires_at: undefined,
        kind: 'read', path: path('study/genome.fa'), creator: 'alice', max_uses: 10, uses: 0, max_bytes: null, bytes_used: 0, password: false, state: 'active',
      });
      assert.ok(Math.abs(Date.parse(String(data.expires_at)) - (Date.parse(String(data.created_at)) + 3600_000)) < 1000);
    });

    it('refuses without a token (401 Bearer), on what the caller does not own (403), missing (404), and bad fields (400)', async () => {
      const anonymous = await fetch(`${s.url}/api/shares`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: path('study'), kind: 'read' }) });
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal((await share({ path: path('study'), kind: 'read' }, bob)).res.status, 403);
      assert.equal((await share({ path: path('nothing'), kind: 'read' })).res.status, 404);
      assert.equal((await share({ path: path('study/genome.fa'), kind: 'upload' })).res.status, 400, 'a drop box needs a collection');
      for (const bad of [
        { path: path('study'), kind: 'write' },
        { path: path('study'), kind: 'read', expires_at: 'tomorrow' },
        { path: path('study'), kind: 'read', expires_at: '2000-01-01T00:00:00Z' },
        { path: path('study'), kind: 'read', expires_at: '2999-01-01T00:00:00Z', expires_in: 60 },
        { path: path('study'), kind: 'read', max_uses: 0 },
        { path: path('study'), kind: 'read', password: '' },
        { path: path('study'), kind: 'read', owner: 'bob' },
        { path: 'relative/path', kind: 'read' },
      ]) {
        const { res, body } = await share(bad);
        assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(body)}`);
      }
    });

    it('lists the links of an entity (own needed) and the caller\'s links, without tokens; revokes with 200, then 404', async () => {
      const a = await link({ path: path('inbox'), kind: 'upload' });
      const b = await link({ path: path('inbox'), kind: 'read', password: 'pw' });
      const ofInbox = await json(await fetch(`${s.url}/api/shares?path=${encodeURIComponent(path('inbox'))}`, { headers: { authorization: alice } }));
      const listed = ofInbox.Response.data as Record<string, unknown>[];
      assert.deepEqual(listed.map((l) => l.id), [a.id, b.id]);
      assert.deepEqual(listed.map((l) => l.password), [false, true]);
      assert.ok(listed.every((l) => !('token' in l) && !('url' in l)));
      assert.equal((await fetch(`${s.url}/api/shares?path=${encodeURIComponent(path('inbox'))}`, { headers: { authorization: bob } })).status, 403);
      const mine = await json(await fetch(`${s.url}/api/shares`, { headers: { authorization: alice } }));
      assert.ok((mine.Response.data as CreatedLink[]).some((l) => l.id === b.id));
      assert.deepEqual((await json(await fetch(`${s.url}/api/shares`, { headers: { authorization: bob } }))).Response.data, []);

      assert.equal((await fetch(`${s.url}/api/shares/${a.id}`, { method: 'DELETE', headers: { authorization: bob } })).status, 404, 'not bob\'s to revoke');
      const revoked = await fetch(`${s.url}/api/shares/${a.id}`, { method: 'DELETE', headers: { authorization: alice } });
      assert.equal(revoked.status, 200);
      assert.equal(((await json(revoked)).Response.data as CreatedLink).id, a.id);
      assert.equal((await fetch(`${s.url}/api/shares/${a.id}`, { method: 'DELETE', headers: { authorization: alice } })).status, 404);
      assert.equal((await fetch(a.url)).status, 404);
    });
  });

  describe('a read link to a data object', () => {
    it('downloads without an account, with validators, HEAD, a range and 304; only answers with bytes are uses', async () => {
      const l = await link({ path: path('study/genome.fa'), kind: 'read' });
      const content = '>chr1\nACGTACGTACGTACGT\n';
      const whole = await fetch(l.url);
      assert.equal(whole.status, 200);
      assert.equal(await whole.text(), content);
      assert.equal(whole.headers.get('content-disposition'), 'attachment; filename="genome.fa"; filename*=UTF-8\'\'genome.fa');
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.equal(whole.headers.get('cache-control'), 'private, no-cache');
      assert.equal(whole.headers.get('repr-digest'), `sha-256=:${sha2(content).slice(5)}:`);
      const etag = whole.headers.get('etag')!;
      const head = await fetch(l.url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(content.length));
      assert.equal(await head.text(), '');
      const range = await fetch(l.url, { headers: { range: 'bytes=6-9' } });
      assert.equal(range.status, 206);
      assert.equal(range.headers.get('content-range'), `bytes 6-9/${content.length}`);
      assert.equal(await range.text(), 'ACGT');
      const notModified = await fetch(l.url, { headers: { 'if-none-match': etag } });
      assert.equal(notModified.status, 304);
      assert.equal((await fetch(l.url, { headers: { range: 'bytes=999-' } })).status, 416);
      assert.equal(await usesOf(l.id), 2, 'the 200 and the 206');
      assert.equal((await fetch(`${l.url}/genome.fa`)).status, 404, 'a data object has no members');
    });

    it('ignores a bearer token it does not need, and answers 410 once used up or expired', async () => {
      const once = await link({ path: path('study/genome.fa'), kind: 'read', max_uses: 1 });
      assert.equal((await fetch(once.url, { headers: { authorization: bob } })).status, 200);
      const used = await fetch(once.url);
      assert.equal(used.status, 410);
      assert.deepEqual(Object.keys((await json(used)).Response.errors![0]!), ['Gone']);
      const shortLived = await link({ path: path('study/genome.fa'), kind: 'read', expires_in: 30 });
      assert.equal((await fetch(shortLived.url)).status, 200);
      clock.offsetMs += 30_000;
      try {
        assert.equal((await fetch(shortLived.url)).status, 410);
        const list = await json(await fetch(`${s.url}/api/shares?path=${encodeURIComponent(path('study/genome.fa'))}`, { headers: { authorization: alice } }));
        assert.equal((list.Response.data as CreatedLink[]).find((l) => l.id === shortLived.id)?.state, 'expired');
      } finally {
        clock.offsetMs -= 30_000;
      }
    });
  });

  describe('a read link to a collection', () => {
    it('lists members with relative paths and links under the share URL, never the owner\'s path, and downloads at any depth', async () => {
      const l = await link({ path: path('study'), kind: 'read' });
      const res = await fetch(l.url);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok(!text.includes('/tz/home'), `no owner path in ${text}`);
      const body = JSON.parse(text) as EnvelopeBody;
      assert.equal(body.Meta.elements, 2);
      const [fa, run1] = body.Response.data as Record<string, unknown>[];
      assert.deepEqual({ ...fa, created_at: undefined, modified_at: undefined }, {
        name: 'genome.fa', kind: 'dataobject', size: 23, checksum: sha2('>chr1\nACGTACGTACGTACGT\n'),
        created_at: undefined, modified_at: undefined, path: '/genome.fa', link: `${l.url}/genome.fa`,
      });
      assert.match(String(fa!.created_at), /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual({ name: run1!.name, kind: run1!.kind, size: run1!.size, checksum: run1!.checksum, path: run1!.path, link: run1!.link },
        { name: 'run1', kind: 'collection', size: null, checksum: null, path: '/run1', link: `${l.url}/run1` });
      const inner = await json(await fetch(String(run1!.link)));
      assert.deepEqual((inner.Response.data as { path: string }[]).map((m) => m.path), ['/run1/reads.txt']);
      assert.equal(await (await fetch(`${l.url}/run1/reads.txt`)).text(), 'read-1\nread-2\n');
      const missing = await fetch(`${l.url}/run1/none.txt`);
      assert.equal(missing.status, 404);
      assert.ok(!(await missing.text()).includes('/tz/home'));
      assert.equal((await rawRequest(s.url, 'GET', `/api/shared/${l.token}/run1/..`)).status, 400, '.. is refused, never resolved');
      assert.equal((await rawRequest(s.url, 'GET', `/api/shared/${l.token}/%2e%2e/%2e%2e/bob`)).status, 400);
      assert.equal((await fetch(`${l.url}/genome.fa`, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })).status, 403, 'read-only');
      assert.equal(await usesOf(l.id), 1, 'listings take no use');
    });

    it('follows its collection through a rename', async () => {
      const made = await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: path('draft') }) });
      assert.equal(made.status, 200);
      await put(s.home('alice', 'draft/a.txt'), 'a');
      const l = await link({ path: path('draft'), kind: 'read' });
      const renamed = await fetch(s.home('alice', 'draft'), { method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'final' }) });
      assert.equal(renamed.status, 200);
      assert.equal(await (await fetch(`${l.url}/a.txt`)).text(), 'a');
      const mine = await json(await fetch(`${s.url}/api/shares`, { headers: { authorization: alice } }));
      assert.equal((mine.Response.data as CreatedLink[]).find((x) => x.id === l.id)?.path, path('final'));
    });
  });

  describe('a drop box', () => {
    it('takes a raw body and a form from anyone with the link, as new objects of the owner; refuses overwrites, paths and listing', async () => {
      const l = await link({ path: path('inbox'), kind: 'upload' });
      const raw = await fetch(`${l.url}/results.csv`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'a,b\n1,2\n' });
      assert.equal(raw.status, 201);
      assert.deepEqual(await json(raw), {
        Meta: { data_type: "<class 'dict'>", elements: 3, errors: 0, status: 201 },
        Response: { data: { filename: 'results.csv', size: 8, checksum: sha2('a,b\n1,2\n') }, errors: null },
      });
      const form = new FormData();
      form.append('file', new Blob(['from a browser']), 'notes.txt');
      const posted = await fetch(l.url, { method: 'POST', body: form });
      assert.equal(posted.status, 201);
      assert.equal(((await json(posted)).Response.data as { filename: string }).filename, 'notes.txt');

      const meta = await json(await fetch(s.home('alice', 'inbox/results.csv'), { headers: { authorization: alice } }));
      assert.equal(meta.Response.data[0]['results.csv'].metadata.checksum, sha2('a,b\n1,2\n'));
      const again = await fetch(`${l.url}/results.csv`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'overwrite?' });
      assert.equal(again.status, 409);
      assert.ok(!(await again.text()).includes('/tz/home'));
      const twice = new FormData();
      twice.append('force', 'true');
      twice.append('file', new Blob(['again']), 'notes.txt');
      assert.equal((await fetch(l.url, { method: 'POST', body: twice })).status, 409, 'a form\'s force changes nothing');
      assert.equal(await (await fetch(`${s.home('alice', 'inbox/results.csv')}?download=true`, { headers: { authorization: alice } })).text(), 'a,b\n1,2\n');

      assert.equal((await fetch(`${l.url}/sub/x.csv`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: 'x' })).status, 400);
      assert.equal((await fetch(`${l.url}/x.csv`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'x' })).status, 415);
      assert.equal((await fetch(l.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 415);
      for (const target of [l.url, `${l.url}/results.csv`]) {
        const refused = await fetch(target);
        assert.equal(refused.status, 403, target);
        assert.match(JSON.stringify(await json(refused)), /drop box/);
      }
      assert.equal(await usesOf(l.id), 2, 'two stored files');
    });
  });

  describe('a password-protected link', () => {
    it('asks with WWW-Authenticate: Basic, takes the password with any user name, and refuses a wrong one', async () => {
      const l = await link({ path: path('study/genome.fa'), kind: 'read', password: 'Geheim 2026' });
      const none = await fetch(l.url);
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), 'Basic realm="lading share link", charset="UTF-8"');
      assert.equal((await json(none)).Meta.status, 401);
      assert.equal((await fetch(l.url, { headers: { authorization: basic('wrong') } })).status, 401);
      assert.equal((await fetch(l.url, { headers: { authorization: alice } })).status, 401, 'a bearer token is no password');
      assert.equal((await fetch(l.url, { headers: { authorization: basic('Geheim 2026') } })).status, 200);
      assert.equal((await fetch(l.url, { headers: { authorization: basic('Geheim 2026', 'anyone') } })).status, 200);
    });
  });

  it('never logs a token, and logs who created and revoked which link', async () => {
    const l = await link({ path: path('study/genome.fa'), kind: 'read' });
    await fetch(`${l.url}?x=1`);
    await fetch(`${l.url}/nothing`);
    await fetch(`${s.url}/api/shares/${l.id}`, { method: 'DELETE', headers: { authorization: alice } });
    await fetch(l.url);
    const all = logLines.join('');
    assert.ok(!all.includes(l.token), 'the token appears in no log line');
    const records = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const created = records.find((r) => r.msg === 'share link created' && r.share === l.id);
    assert.deepEqual({ user: created?.user, path: created?.path, kind: created?.kind }, { user: 'alice', path: path('study/genome.fa'), kind: 'read' });
    assert.ok(records.some((r) => r.msg === 'share link revoked' && r.share === l.id && r.user === 'alice'));
    assert.ok(records.some((r) => typeof r.msg === 'string' && r.msg.startsWith('GET /api/shared/[redacted]')));
  });
});

describe('share link limits over HTTP', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer({
      'shares.max_active_per_user': 2, 'shares.requests_per_link': 4, 'shares.requests_per_address': 12, 'shares.max_failed_passwords': 2,
    });
    alice = await s.bearer('alice');
    await fetch(s.home('alice', 'f.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'f' });
  });
  after(() => s.stop());

  const create = (body: Record<string, unknown>) => fetch(`${s.url}/api/shares`, {
    method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/tz/home/alice/f.txt', kind: 'read', ...body }),
  });
  const assert429 = async (res: Response, pattern: RegExp) => {
    const body = await json(res);
    assert.equal(res.status, 429, JSON.stringify(body));
    assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After: ${res.headers.get('retry-after')}`);
    assert.equal(body.Meta.status, 429);
    assert.match(Object.values(body.Response.errors![0]!)[0]!, pattern);
  };

  it('answers 429 with Retry-After for each limit: active links, requests per link, wrong passwords, requests per address', async () => {
    const first = (await json(await create({ password: 'pw' }))).Response.data as CreatedLink;
    const second = (await json(await create({}))).Response.data as CreatedLink;
    await assert429(await create({}), /active links/);

    for (let i = 0; i < 4; i++) assert.equal((await fetch(second.url, { method: 'HEAD' })).status, 200);
    await assert429(await fetch(second.url), /This link received more than 4 requests/);

    for (let i = 0; i < 2; i++) assert.equal((await fetch(first.url, { headers: { authorization: basic(`wrong-${i}`) } })).status, 401);
    await assert429(await fetch(first.url, { headers: { authorization: basic('pw') } }), /Too many wrong passwords/);

    // 5 + 3 requests so far from this address; the 13th of the window is refused, for any token.
    for (let i = 0; i < 4; i++) assert.equal((await fetch(`${s.url}/api/shared/no-such-token`)).status, 404);
    await assert429(await fetch(`${s.url}/api/shared/no-such-token`), /This address sent more than 12 requests/);
  });
});

describe('wrong share-link passwords, counted per link and address', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    // NOTE: addresses are set with X-Forwarded-For, as a reverse proxy would; 2 wrong passwords
    // per address, so 10 per link from every address together.
    s = await startTestServer({ trust_proxy: true, 'shares.max_failed_passwords': 2 });
    alice = await s.bearer('alice');
    await fetch(s.home('alice', 'f.txt'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'f' });
  });
  after(() => s.stop());

  const from = (address: string, password: string) => ({ 'x-forwarded-for': address, authorization: basic(password) });

  it('lets a guesser at one address lock out only that address, and stops one spread over many at the per-link bound', async () => {
    const created = await fetch(`${s.url}/api/shares`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/tz/home/alice/f.txt', kind: 'read', password: 'right one' }),
    });
    const l = (await json(created)).Response.data as CreatedLink;
    for (let i = 0; i < 2; i++) assert.equal((await fetch(l.url, { headers: from('198.51.100.1', `wrong-${i}`) })).status, 401);
    const limited = await fetch(l.url, { headers: from('198.51.100.1', 'right one') });
    assert.equal(limited.status, 429, 'the guessing address is refused, with the right password too');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    await limited.arrayBuffer();

    // Whoever holds the link elsewhere still opens it with the password.
    const other = await fetch(l.url, { headers: from('198.51.100.2', 'right one') });
    assert.equal(other.status, 200);
    assert.equal(await other.text(), 'f');

    // A guesser spread over four more addresses reaches the link's bound (2 + 4 × 2 = 10).
    for (let a = 3; a <= 6; a++) {
      for (let i = 0; i < 2; i++) assert.equal((await fetch(l.url, { headers: from(`198.51.100.${a}`, `guess-${a}-${i}`) })).status, 401);
    }
    const stopped = await fetch(l.url, { headers: from('198.51.100.7', 'right one') });
    const body = await json(stopped);
    assert.equal(stopped.status, 429, JSON.stringify(body));
    assert.ok(Number(stopped.headers.get('retry-after')) >= 1);
    assert.match(Object.values(body.Response.errors![0]!)[0]!, /Too many wrong passwords/);
  });
});

describe('drop box byte bounds over HTTP', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer({ 'shares.drop_max_bytes': 100 });
    alice = await s.bearer('alice');
    for (const box of ['box', 'race', 'race-chunked', 'large']) {
      await fetch(`${s.url}/api/registered`, {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/tz/home/alice/${box}`, force: true }),
      });
    }
  });
  after(() => s.stop());

  const create = async (body: Record<string, unknown>) => {
    const res = await fetch(`${s.url}/api/shares`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await json(res) };
  };
  const dropBox = async (box: string, extra: Record<string, unknown> = {}) => {
    const made = await create({ path: `/tz/home/alice/${box}`, kind: 'upload', ...extra });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.Response.data as CreatedLink & { max_bytes: number | null; bytes_used: number };
  };
  const linkNow = async (id: string) => {
    const list = await json(await fetch(`${s.url}/api/shares`, { headers: { authorization: alice } }));
    return (list.Response.data as (CreatedLink & { max_bytes: number | null; bytes_used: number })[]).find((l) => l.id === id)!;
  };
  const deposit = (url: string, name: string, size: number) =>
    fetch(`${url}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, 'x') });
  // A body without Content-Length (chunked), so the bound is counted as the bytes arrive.
  const depositChunked = (url: string, name: string, size: number) => fetch(`${url}/${name}`, {
    method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, duplex: 'half',
    body: new ReadableStream({ start(c) { c.enqueue(new Uint8Array(size).fill(120)); c.close(); } }),
  } as RequestInit);
  const stored = async (box: string, name: string) => {
    const res = await fetch(`${s.home('alice', `${box}/${name}`)}?download=true`, { headers: { authorization: alice } });
    return res.status === 200 ? (await res.arrayBuffer()).byteLength : res.status;
  };
  const refusedAsTooLarge = async (res: Response) => {
    const body = await json(res);
    assert.equal(res.status, 413, JSON.stringify(body));
    assert.equal(body.Response.data, null);
    assert.match(Object.values(body.Response.errors![0]!)[0]!, /drop box takes at most 100 bytes in all/);
    assert.ok(!JSON.stringify(body).includes('/tz/home'), 'no owner path');
  };

  it('bounds what a drop box takes, all files together: past it, 413, and nothing is stored or counted', async () => {
    const l = await dropBox('box');
    assert.equal(l.max_bytes, 100, 'the configured default');
    assert.equal(l.bytes_used, 0);
    assert.equal((await deposit(l.url, 'first.bin', 60)).status, 201);
    await refusedAsTooLarge(await deposit(l.url, 'declared.bin', 41));
    await refusedAsTooLarge(await depositChunked(l.url, 'chunked.bin', 41));
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(41, 'x')]), 'form.bin');
    await refusedAsTooLarge(await fetch(l.url, { method: 'POST', body: form }));
    for (const name of ['declared.bin', 'chunked.bin', 'form.bin']) assert.equal(await stored('box', name), 404, name);
    let now = await linkNow(l.id);
    assert.equal(now.bytes_used, 60, 'refused deposits give back what they reserved');
    assert.equal(now.uses, 1, 'and their use');
    assert.equal((await depositChunked(l.url, 'fits.bin', 40)).status, 201, 'up to the bound exactly');
    assert.equal(await stored('box', 'fits.bin'), 40);
    now = await linkNow(l.id);
    assert.equal(now.bytes_used, 100);
    assert.equal((await deposit(l.url, 'empty.bin', 0)).status, 201, 'an empty file still fits');
  });

  it('takes a bound of its own on creation, for drop boxes only, and shows it with what was deposited', async () => {
    const large = await dropBox('large', { max_bytes: 1000 });
    assert.equal(large.max_bytes, 1000, 'above the default: the owner decides');
    assert.equal((await deposit(large.url, 'big.bin', 700)).status, 201);
    assert.equal((await linkNow(large.id)).bytes_used, 700);
    for (const bad of [{ kind: 'upload', max_bytes: 0 }, { kind: 'upload', max_bytes: 1.5 }, { kind: 'upload', max_bytes: '100' }, { kind: 'read', max_bytes: 100 }]) {
      const made = await create({ path: '/tz/home/alice/large', ...bad });
      assert.equal(made.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(made.body)}`);
    }
    const read = await create({ path: '/tz/home/alice/large', kind: 'read' });
    assert.equal((read.body.Response.data as { max_bytes: unknown }).max_bytes, null);
  });

  it('never lets racing deposits pass the bound together, declared or chunked', async () => {
    const l = await dropBox('race');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => deposit(l.url, `f${i}.bin`, 30)));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, 413, 413, 413, 413, 413], 'exactly three of 30 bytes fit in 100');
    await Promise.all(answers.map((r) => r.arrayBuffer()));
    const sizes = await Promise.all(Array.from({ length: 8 }, (_, i) => stored('race', `f${i}.bin`)));
    assert.deepEqual(sizes.map((size, i) => (answers[i]!.status === 201 ? size === 30 : size === 404)), Array(8).fill(true));
    assert.equal((await linkNow(l.id)).bytes_used, 90);

    const chunked = await dropBox('race-chunked');
    const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => depositChunked(chunked.url, `c${i}.bin`, 30)));
    await Promise.all(raced.map((r) => r.arrayBuffer()));
    assert.ok(raced.every((r) => r.status === 201 || r.status === 413), raced.map((r) => r.status).join());
    const kept = await Promise.all(Array.from({ length: 8 }, (_, i) => stored('race-chunked', `c${i}.bin`)));
    const total = kept.reduce<number>((sum, size, i) => sum + (raced[i]!.status === 201 ? (size as number) : (assert.equal(size, 404), 0)), 0);
    assert.ok(total <= 100 && total > 0, `stored ${total} bytes`);
    assert.equal((await linkNow(chunked.id)).bytes_used, total, 'what is counted is what is stored');
  });
});
