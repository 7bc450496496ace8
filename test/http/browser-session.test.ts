/**
 * Browser sessions on whole lading nodes: sign-in through the embedded provider via
 * /auth/signin ends in the session cookie (HttpOnly, SameSite=Lax, Path=/; `__Host-` and Secure
 * on https), the cookie authenticates API requests, changes need the session's CSRF token and
 * are refused cross-origin, downloads by plain link work with Range, the idle and absolute
 * timeouts hold (on the test clock), sign-out ends the session on the server, a failed sign-in
 * shows a browser a page saying why, /auth/askauth still answers JSON, API tokens are made, listed and revoked; and, on a shared PostgreSQL
 * catalog, a session opened on one node works on another and ends on both at once.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Clock } from '../../src/core/ports.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { Jar, follow, loginToCallback } from '../oidc/flow.ts';

/** A clock the test moves forward. */
function testClock(): Clock & { advance(seconds: number): void } {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (seconds) => { offset += seconds * 1000; } };
}

/** Signs `user` in through /auth/signin and the embedded provider's pages; returns the jar holding the cookie and the callback's answer. */
async function signIn(base: string, user: string, password: string, next = '/x', headers: Record<string, string> = {}): Promise<{ jar: Jar; res: Response }> {
  const { jar, callback } = await loginToCallback(base, user, password, new Jar(), `${base}/auth/signin?next=${encodeURIComponent(next)}`);
  const res = await jar.fetch(callback, { headers });
  return { jar, res };
}

async function sessionOf(jar: Jar, base: string): Promise<{ status: number; data: any }> {
  const res = await jar.fetch(`${base}/auth/session`);
  return { status: res.status, data: (await json(res)).Response.data };
}

describe('browser sessions', () => {
  const clock = testClock();
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ 'web.session_idle': 600, 'web.session_max': 1800 }, { overrides: { clock } });
    await s.addUser('mira', 'pw-mira');
    await s.addUser('olaf', 'pw-olaf');
  });
  after(async () => {
    await s?.stop();
  });

  it('signs in through the embedded provider and lands on next with the session cookie', async () => {
    const { jar, res } = await signIn(s.url, 'mira', 'pw-mira', '/browse/a?b=1#c');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/browse/a?b=1#c');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('lading_session='));
    assert.ok(cookie, 'the session cookie is set');
    const attrs = cookie.split(';').slice(1).map((a) => a.trim());
    assert.ok(attrs.includes('HttpOnly'));
    assert.ok(attrs.includes('SameSite=Lax'));
    assert.ok(attrs.includes('Path=/'));
    assert.ok(!attrs.includes('Secure'), 'no Secure on an http public base');
    assert.ok(!attrs.some((a) => /^domain=/i.test(a)), 'no Domain');
    assert.match(cookie, /^lading_session=[A-Za-z0-9_-]{43};/, 'a 256-bit token');

    const { status, data } = await sessionOf(jar, s.url);
    assert.equal(status, 200);
    assert.equal(data.user, 'mira');
    assert.equal(data.home, `/${s.zone}/home/mira`);
    assert.equal(data.provider, 'embedded');
    assert.match(data.csrf_token, /^[A-Za-z0-9_-]{20,}$/);
    const now = clock.now().getTime();
    assert.ok(Math.abs(Date.parse(data.idle_expires_at) - (now + 600_000)) < 60_000);
    assert.ok(Math.abs(Date.parse(data.expires_at) - (now + 1800_000)) < 60_000);
  });

  it('takes a local next only, and / by default', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'x', '/a\nb']) {
      const res = await fetch(`${s.url}/auth/signin?next=${encodeURIComponent(next)}`, { redirect: 'manual' });
      assert.equal(res.status, 400, next);
      assert.equal((await json(res)).Meta.status, 400);
    }
    const { res } = await signIn(s.url, 'mira', 'pw-mira', '/');
    assert.equal(res.headers.get('location'), '/');
    const { jar, callback } = await loginToCallback(s.url, 'mira', 'pw-mira', new Jar(), `${s.url}/auth/signin`);
    assert.equal((await jar.fetch(callback)).headers.get('location'), '/');
  });

  it('refuses cookie-authenticated changes without the right CSRF token or from another origin', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const { data } = await sessionOf(jar, s.url);
    const mkdir = (name: string, headers: Record<string, string>) => jar.fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ path: `/${s.zone}/home/mira/${name}` }),
    });
    const wrong: Record<string, string>[] = [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': data.csrf_token.slice(0, -1) + (data.csrf_token.endsWith('A') ? 'B' : 'A') }];
    for (const headers of wrong) {
      const res = await mkdir('refused', headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      const body = await json(res);
      assert.equal(body.Meta.status, 403);
      assert.match(Object.values(body.Response.errors![0]!)[0]!, /X-CSRF-Token/);
    }
    const csrf = { 'x-csrf-token': data.csrf_token };
    assert.equal((await mkdir('refused', { ...csrf, origin: 'http://evil.example' })).status, 403, 'cross-origin Origin');
    assert.equal((await mkdir('refused', { ...csrf, origin: 'null' })).status, 403, 'opaque Origin');
    assert.equal((await mkdir('refused', { ...csrf, 'sec-fetch-site': 'cross-site' })).status, 403, 'cross-site fetch');
    assert.equal((await mkdir('refused', { ...csrf, 'sec-fetch-site': 'same-site' })).status, 403, 'a sibling site is another origin');
    const listed = await jar.fetch(`${s.home('mira')}/`);
    assert.equal(listed.status, 200, 'a GET needs no CSRF token');
    assert.deepEqual((await json(listed)).Response.data, [], 'nothing was created');

    assert.equal((await mkdir('made', csrf)).status, 200);
    assert.equal((await mkdir('made-too', { ...csrf, origin: s.url, 'sec-fetch-site': 'same-origin' })).status, 200);
    const after = await json(await jar.fetch(`${s.home('mira')}/`));
    assert.deepEqual(after.Response.data.map((e: object) => Object.keys(e)[0]).sort(), ['made', 'made-too']);
  });

  it('downloads by plain link with the cookie, Range intact', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const { data } = await sessionOf(jar, s.url);
    const put = await jar.fetch(s.home('mira', 'hello.txt'), {
      method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'x-csrf-token': data.csrf_token }, body: 'hello, browser',
    });
    assert.equal(put.status, 200, await put.clone().text());
    const whole = await jar.fetch(`${s.home('mira', 'hello.txt')}?download=true`);
    assert.equal(whole.status, 200);
    assert.equal(await whole.text(), 'hello, browser');
    const part = await jar.fetch(`${s.home('mira', 'hello.txt')}?download=true`, { headers: { range: 'bytes=7-13' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 7-13/14');
    assert.equal(await part.text(), 'browser');
  });

  it('keeps the cookie and bearer tokens apart', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const cookieToken = jar.get('lading_session')!;
    const asBearer = await fetch(`${s.url}/auth/session`, { headers: { authorization: `Bearer ${cookieToken}` } });
    assert.equal(asBearer.status, 401, 'the cookie\'s token is no bearer token');
    const bearer = await s.login('mira', 'pw-mira');
    const asCookie = await fetch(`${s.url}/auth/session`, { headers: { cookie: `lading_session=${bearer}` } });
    assert.equal(asCookie.status, 401, 'a bearer token is no session cookie');
    const both = await jar.fetch(`${s.url}/auth/session`, { headers: { authorization: `Bearer ${bearer}` } });
    assert.equal(both.status, 200);
    assert.equal((await json(both)).Response.data.csrf_token, null, 'the Authorization header wins over the cookie');
    assert.equal((await fetch(`${s.url}/auth/session`)).status, 401, 'neither: 401');
  });

  it('ends a session at its idle timeout and at its absolute one, recording use at most once a minute', async () => {
    const idle = await signIn(s.url, 'olaf', 'pw-olaf');
    const busy = await signIn(s.url, 'olaf', 'pw-olaf');
    const deadline = async (jar: Jar) => {
      const { status, data } = await sessionOf(jar, s.url);
      assert.equal(status, 200);
      return Date.parse(data.idle_expires_at);
    };
    clock.advance(300);
    const first = await deadline(idle.jar);
    assert.ok(Math.abs(first - (clock.now().getTime() + 600_000)) < 5_000, 'use moves the idle deadline on');
    await deadline(busy.jar);
    clock.advance(30);
    assert.equal(await deadline(idle.jar), first, 'within a minute, use is not written again');
    clock.advance(520);
    await deadline(idle.jar);
    await deadline(busy.jar);
    clock.advance(550);
    await deadline(busy.jar);
    clock.advance(51);
    assert.equal((await sessionOf(idle.jar, s.url)).status, 401, 'idle for more than web.session_idle');
    await deadline(busy.jar);
    clock.advance(350);
    const ended = await sessionOf(busy.jar, s.url);
    assert.equal(ended.status, 401, 'busy, but past web.session_max');
    assert.equal(ended.data, null);
  });

  it('signs out: the session ends on the server and the cookie is cleared', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const cookieToken = jar.get('lading_session')!;
    const { data } = await sessionOf(jar, s.url);
    const refused = await jar.fetch(`${s.url}/auth/signout`, { method: 'POST' });
    assert.equal(refused.status, 403, 'sign-out needs the CSRF token');
    assert.deepEqual(refused.headers.getSetCookie(), [], 'a forged sign-out clears nothing');
    const out = await jar.fetch(`${s.url}/auth/signout`, { method: 'POST', headers: { 'x-csrf-token': data.csrf_token } });
    assert.equal(out.status, 200);
    assert.ok(out.headers.getSetCookie().some((c) => /^lading_session=;/.test(c) && c.includes('Max-Age=0')));
    assert.deepEqual((await json(out)).Response.data, { Completed: 'Signed out.', next: '/' });
    const replayed = await fetch(`${s.url}/auth/session`, { headers: { cookie: `lading_session=${cookieToken}` } });
    assert.equal(replayed.status, 401, 'the old cookie is refused');

    // The embedded provider's login session ended too: signing in again asks for the password.
    const again = await follow(jar, `${s.url}/auth/signin`, (u) => new URL(u).pathname === '/auth/callback');
    assert.ok(again.res, 'the provider stops at a page instead of going straight back');
    assert.match(await again.res.text(), /id="password"/);
  });

  it('ends browser sessions when the user is disabled', async () => {
    await s.addUser('ines', 'pw-ines');
    const { jar } = await signIn(s.url, 'ines', 'pw-ines');
    assert.equal((await sessionOf(jar, s.url)).status, 200);
    await s.deps.admin.setDisabled('ines', true);
    assert.equal((await sessionOf(jar, s.url)).status, 401);
  });

  it('keeps /auth/askauth answering API clients with JSON', async () => {
    const { jar, callback } = await loginToCallback(s.url, 'mira', 'pw-mira');
    const res = await jar.fetch(callback);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.ok(!res.headers.getSetCookie().some((c) => c.startsWith('lading_session')), 'no session cookie');
    const body = await json(res);
    assert.equal(body.Response.data.storage_user, 'mira');
    const ok = await fetch(`${s.url}/auth/b2safeproxy`, { headers: { authorization: `Bearer ${body.Response.data.token}` } });
    assert.equal(ok.status, 200);
  });

  it('answers a browser whose sign-in fails with a page saying why, and API clients with the envelope', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const page = async (res: Response, status: number, heading: string) => {
      const text = await res.text();
      assert.equal(res.status, status, text);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'none'; style-src 'sha256-[^']+'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/);
      assert.equal(res.headers.get('cache-control'), 'private, no-store');
      assert.match(text, new RegExp(`<h1>${heading}</h1>`));
      assert.ok(!text.includes('"Meta"'), 'not the envelope');
      return text;
    };

    // Used twice: the second time, a browser reads that it was already used.
    const first = await loginToCallback(s.url, 'mira', 'pw-mira', new Jar(), `${s.url}/auth/signin?next=${encodeURIComponent('/browse/b')}`);
    assert.equal((await first.jar.fetch(first.callback, { headers: html })).status, 303);
    const again = await first.jar.fetch(first.callback, { headers: html });
    assert.equal(again.headers.get('www-authenticate'), 'Bearer realm="lading"');
    await page(again, 401, 'This sign-in was already used');
    const envelope = await first.jar.fetch(first.callback);
    assert.equal(envelope.status, 401, 'a client that does not ask for HTML gets the envelope');
    assert.equal((await json(envelope)).Meta.status, 401);

    // Refused at the consent page: signing in again heads where the refused sign-in did.
    const refused = await loginToCallback(s.url, 'mira', 'pw-mira', new Jar(), `${s.url}/auth/signin?next=${encodeURIComponent('/browse/b')}`, 'abort');
    const cancelled = await page(await refused.jar.fetch(refused.callback, { headers: html }), 401, 'Sign-in cancelled');
    assert.match(cancelled, /<a class="button" href="\/auth\/signin\?next=%2Fbrowse%2Fb">Sign in again<\/a>/);

    // A state this server never gave out (or one long expired).
    await page(await fetch(`${s.url}/auth/callback?state=signin.unknown&code=abc`, { headers: html }), 401, 'This sign-in has expired');
    // Another browser's sign-in.
    const elsewhere = await loginToCallback(s.url, 'mira', 'pw-mira', new Jar(), `${s.url}/auth/signin`);
    await page(await fetch(elsewhere.callback, { headers: html }), 401, 'This sign-in was started elsewhere');
    // A link to /auth/signin that is not valid.
    await page(await fetch(`${s.url}/auth/signin?next=${encodeURIComponent('//evil.example/')}`, { headers: html, redirect: 'manual' }), 400, 'This sign-in link is not valid');

    // /auth/askauth's callback answers JSON, to a browser too.
    const api = await loginToCallback(s.url, 'mira', 'pw-mira', new Jar(), `${s.url}/auth/askauth`, 'abort');
    const denied = await api.jar.fetch(api.callback, { headers: html });
    assert.equal(denied.status, 401);
    assert.match(denied.headers.get('content-type') ?? '', /application\/json/);
    assert.match(Object.values((await json(denied)).Response.errors![0]!)[0]!, /access_denied/);
  });

  it('makes, lists and revokes API tokens, with the cookie and with a bearer token', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const { data: session } = await sessionOf(jar, s.url);
    const csrf = { 'x-csrf-token': session.csrf_token };
    const withBody = { ...csrf, 'content-type': 'application/json' };
    assert.equal((await jar.fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"label":"x"}' })).status, 403);
    assert.equal((await jar.fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: withBody, body: JSON.stringify({ label: ' ' }) })).status, 400);
    const made = await jar.fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: withBody, body: JSON.stringify({ label: 'laptop sync' }) });
    assert.equal(made.status, 201);
    const token = (await json(made)).Response.data;
    assert.equal(token.label, 'laptop sync');
    assert.match(token.token, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(Date.parse(token.expires_at) > clock.now().getTime());
    const bearer = { authorization: `Bearer ${token.token}` };

    const check = await fetch(`${s.url}/auth/b2safeproxy`, { headers: bearer });
    assert.equal(check.status, 200, 'the token works as a bearer token');
    const listed = await fetch(`${s.url}/auth/tokens`, { headers: bearer });
    assert.equal(listed.status, 200);
    const entries = (await json(listed)).Response.data as { id: string; label: string | null; current: boolean }[];
    const mine = entries.find((e) => e.id === token.id);
    assert.deepEqual({ label: mine?.label, current: mine?.current }, { label: 'laptop sync', current: true });
    assert.ok(!JSON.stringify(entries).includes(token.token), 'never the token itself');
    assert.ok(entries.every((e) => e.id !== undefined && 'last_used_at' in e));

    // A second token made with a bearer token, revoked by the cookie; one of another user is not found.
    const second = await json(await fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'ci' }) }));
    const otherUser = await json(await fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: { authorization: `Bearer ${await s.login('olaf', 'pw-olaf')}`, 'content-type': 'application/json' }, body: JSON.stringify({ label: 'olaf' }) }));
    assert.equal((await jar.fetch(`${s.url}/auth/tokens/${otherUser.Response.data.id}`, { method: 'DELETE', headers: csrf })).status, 404);
    assert.equal((await jar.fetch(`${s.url}/auth/tokens/${token.id}`, { method: 'DELETE' })).status, 403, 'revoking needs the CSRF token');
    assert.equal((await jar.fetch(`${s.url}/auth/tokens/${token.id}`, { method: 'DELETE', headers: csrf })).status, 200);
    assert.equal((await fetch(`${s.url}/auth/b2safeproxy`, { headers: bearer })).status, 401, 'a revoked token stops working at once');
    assert.equal((await jar.fetch(`${s.url}/auth/tokens/${token.id}`, { method: 'DELETE', headers: csrf })).status, 404);
    const secondBearer = { authorization: `Bearer ${second.Response.data.token}` };
    assert.equal((await fetch(`${s.url}/auth/tokens/${second.Response.data.id}`, { method: 'DELETE', headers: secondBearer })).status, 200, 'a bearer token needs no CSRF token');
  });

  it('gives an API token the lifetime its maker chooses, up to auth.token_ttl_max', async () => {
    const bearer = { authorization: `Bearer ${await s.login('olaf', 'pw-olaf')}`, 'content-type': 'application/json' };
    const session = (await json(await fetch(`${s.url}/auth/session`, { headers: bearer }))).Response.data;
    assert.deepEqual(session.token_lifetime, { default: 86400, max: 90 * 86400 }, 'the session says what a token may be given');
    const make = (body: Record<string, unknown>) => fetch(`${s.url}/auth/tokens`, { method: 'POST', headers: bearer, body: JSON.stringify(body) });
    const longer = await make({ label: 'nightly sync', lifetime: 30 * 86400 });
    assert.equal(longer.status, 201);
    const made = (await json(longer)).Response.data;
    const lasts = Date.parse(made.expires_at) - Date.parse(made.created_at);
    assert.equal(lasts, 30 * 86400 * 1000, 'it expires 30 days after it was made');
    const tooLong = await make({ label: 'forever', lifetime: 91 * 86400 });
    assert.equal(tooLong.status, 400);
    assert.match(Object.values((await json(tooLong)).Response.errors![0]!)[0]!, /7776000 seconds \(90 days\)/);
    assert.equal((await make({ label: 'blink', lifetime: 10 })).status, 400, 'less than a minute is refused');
    const plain = (await json(await make({ label: 'plain' }))).Response.data;
    assert.equal(Date.parse(plain.expires_at) - Date.parse(plain.created_at), 86400 * 1000, 'auth.token_ttl when none is chosen');
    // Two days on, the default token has expired and the 30-day one still works.
    clock.advance(2 * 86400);
    try {
      assert.equal((await fetch(`${s.url}/auth/b2safeproxy`, { headers: { authorization: `Bearer ${plain.token}` } })).status, 401);
      assert.equal((await fetch(`${s.url}/auth/b2safeproxy`, { headers: { authorization: `Bearer ${made.token}` } })).status, 200);
    } finally {
      // NOTE: the provider's own checks run on the real clock: the tests after this one need the two to agree.
      clock.advance(-2 * 86400);
    }
  });

  it('shows and regenerates the proxy certificate of a browser session', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const { data } = await sessionOf(jar, s.url);
    const state = await jar.fetch(`${s.url}/auth/proxy`);
    assert.equal(state.status, 200);
    const proxy = (await json(state)).Response.data;
    assert.equal(proxy.storage_user, 'mira');
    assert.equal(proxy.expired, false);
    assert.ok(proxy.seconds_left > 0);
    const res = await jar.fetch(`${s.url}/auth/proxy`, { method: 'POST', headers: { 'x-csrf-token': data.csrf_token } });
    assert.equal(res.status, 200, await res.clone().text());
  });

  it('takes tus uploads with the cookie and the CSRF token', async () => {
    const { jar } = await signIn(s.url, 'mira', 'pw-mira');
    const { data } = await sessionOf(jar, s.url);
    const metadata = `filename ${Buffer.from('tus.txt').toString('base64')},path ${Buffer.from(`/${s.zone}/home/mira/tus.txt`).toString('base64')}`;
    const tus = { 'tus-resumable': '1.0.0', 'upload-length': '5', 'upload-metadata': metadata, 'content-type': 'application/offset+octet-stream' };
    assert.equal((await jar.fetch(`${s.url}/api/uploads`, { method: 'POST', headers: tus, body: 'hello' })).status, 403, 'no CSRF token');
    const made = await jar.fetch(`${s.url}/api/uploads`, { method: 'POST', headers: { ...tus, 'x-csrf-token': data.csrf_token }, body: 'hello' });
    assert.equal(made.status, 201, await made.clone().text());
    assert.equal(await (await jar.fetch(`${s.home('mira', 'tus.txt')}?download=true`)).text(), 'hello');
  });
});

describe('sign-out and the embedded provider\'s login session', () => {
  // NOTE: a server of its own: its clock moves hours ahead, past what the other tests' pages allow.
  const clock = testClock();
  let s: TestServer;
  before(async () => {
    s = await startTestServer({}, { overrides: { clock } });
    await s.addUser('mira', 'pw-mira');
  });
  after(async () => {
    await s?.stop();
  });

  it('ends at sign-out what hung on the provider\'s login session, and nothing else', async () => {
    const { jar: browser } = await signIn(s.url, 'mira', 'pw-mira');
    const { callback } = await loginToCallback(s.url, 'mira', 'pw-mira', browser);
    const fromAskauth = (await json(await browser.fetch(callback))).Response.data.token as string;
    const { data } = await sessionOf(browser, s.url);
    const made = await browser.fetch(`${s.url}/auth/tokens`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': data.csrf_token }, body: JSON.stringify({ label: 'script' }),
    });
    const apiToken = (await json(made)).Response.data.token as string;
    assert.equal((await browser.fetch(`${s.url}/auth/signout`, { method: 'POST', headers: { 'x-csrf-token': data.csrf_token } })).status, 200);
    clock.advance(13 * 3600);
    const renew = (token: string) => fetch(`${s.url}/auth/proxy`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    // NOTE: the provider binds a refresh token issued without offline_access to its login session.
    assert.equal((await renew(fromAskauth)).status, 401, 'a token from /auth/askauth in that browser renews through that login: no more');
    assert.equal((await renew(apiToken)).status, 200, 'an API token stands on its own');
  });
});

describe('browser sessions on an https public base', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ trust_proxy: true });
    await s.addUser('mira', 'pw-mira');
  });
  after(async () => {
    await s?.stop();
  });

  it('names the cookie __Host-lading_session and makes it Secure', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const { jar, res } = await signIn(s.url, 'mira', 'pw-mira', '/x', https);
    assert.equal(res.status, 303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-lading_session='));
    assert.ok(cookie, 'the __Host- cookie is set');
    const attrs = cookie.split(';').slice(1).map((a) => a.trim());
    for (const attr of ['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/']) assert.ok(attrs.includes(attr), attr);
    assert.ok(!res.headers.getSetCookie().some((c) => c.startsWith('lading_session=')));
    const token = jar.get('__Host-lading_session')!;

    const info = await fetch(`${s.url}/auth/session`, { headers: { ...https, cookie: `__Host-lading_session=${token}` } });
    assert.equal(info.status, 200);
    const csrf = (await json(info)).Response.data.csrf_token as string;
    const plain = await fetch(`${s.url}/auth/session`, { headers: { ...https, cookie: `lading_session=${token}` } });
    assert.equal(plain.status, 401, 'on https only the __Host- cookie counts');
    const origin = 'https://' + new URL(s.url).host;
    const out = await fetch(`${s.url}/auth/signout`, { method: 'POST', headers: { ...https, origin, cookie: `__Host-lading_session=${token}`, 'x-csrf-token': csrf } });
    assert.equal(out.status, 200, 'same origin: the https origin of the public base');
    assert.ok(out.headers.getSetCookie().some((c) => c.startsWith('__Host-lading_session=;') && c.includes('Secure') && c.includes('Max-Age=0')));
  });
});

const pgUrl = process.env.LADING_TEST_PG_URL;
if (!pgUrl) {
  const message = 'browser sessions on two nodes need LADING_TEST_PG_URL: run `source .ci/services/postgres.sh` first.';
  if (process.env.CI) test('browser sessions on nodes sharing PostgreSQL', () => assert.fail(message));
  else test('browser sessions on nodes sharing PostgreSQL', { skip: message }, () => {});
} else {
  describe('browser sessions on nodes sharing PostgreSQL', () => {
    const schema = `lading_test_web_${randomBytes(4).toString('hex')}`;
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    before(async () => {
      // NOTE: the nodes share their keys, CA and stored bytes as a deployment shares them.
      dataDir = await mkdtemp(join(tmpdir(), 'lading-web-nodes-'));
      const flags = { 'catalog.driver': 'postgres', 'catalog.url': pgUrl, 'catalog.schema': schema };
      a = await startTestServer(flags, { dataDir, keepData: true });
      b = await startTestServer(flags, { dataDir, keepData: true });
      await a.addUser('mira', 'pw-mira');
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await rm(dataDir, { recursive: true, force: true });
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
    });

    it('opens a session on one node that works on the other and ends on both when signed out on either', async () => {
      const { jar, res } = await signIn(a.url, 'mira', 'pw-mira');
      assert.equal(res.status, 303);
      const onB = await sessionOf(jar, b.url);
      assert.equal(onB.status, 200);
      assert.equal(onB.data.user, 'mira');
      const out = await jar.fetch(`${b.url}/auth/signout`, { method: 'POST', headers: { 'x-csrf-token': onB.data.csrf_token } });
      assert.equal(out.status, 200);
      assert.equal((await sessionOf(jar, a.url)).status, 401, 'signed out on b: refused on a');
      const second = (await signIn(a.url, 'mira', 'pw-mira')).jar;
      assert.equal((await sessionOf(second, b.url)).status, 200);
      await b.deps.admin.revokeSessions('mira');
      assert.equal((await sessionOf(second, a.url)).status, 401, 'revoked on b (lading user revoke): refused on a');
    });
  });
}
