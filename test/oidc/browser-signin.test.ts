/**
 * Browser sign-in end to end in a real browser: Debian's headless Chromium, driven by
 * playwright-core, opens /auth/signin?next=/x on a whole lading node with the embedded
 * provider, signs in and allows access, and lands on /x holding the session cookie, which
 * scripts cannot read; from the page, GET /auth/session names the user, a change is refused
 * without the CSRF token and done with it, and sign-out ends the session. A sign-in refused at
 * the consent page ends on a page saying so (its stylesheet allowed by the CSP, no serious
 * accessibility violation), from which the user signs in again. Signing out ends the embedded
 * provider's login session too: the next sign-in asks for the password again. Skips locally
 * without Chromium; never in CI.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser, seriousViolations } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  server = await startTestServer();
  await server.addUser('mira', 'correct horse battery staple');
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

it('signs a browser in via /auth/signin and lands on next with an HttpOnly session cookie', { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/auth/signin?next=/x`);
  await page.getByLabel('User name').fill('mira');
  await page.getByLabel('Password').fill('correct horse battery staple');
  // NOTE: lading's own app is asked no consent: the password is the last page before the app.
  const landed = page.waitForURL((url) => url.pathname === '/x');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await landed;
  assert.equal(new URL(page.url()).origin, server.url);

  const cookie = (await context.cookies(server.url)).find((c) => c.name === 'lading_session');
  assert.ok(cookie, 'the browser holds the session cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Lax');
  assert.equal(cookie.path, '/');
  assert.equal(cookie.expires, -1, 'a cookie for this browser session only');
  assert.ok(!((await page.evaluate('document.cookie')) as string).includes('lading_session'), 'scripts cannot read it');

  const session = await page.evaluate(async () => {
    const res = await fetch('/auth/session');
    return { status: res.status, body: await res.json() as { Response: { data: { user: string; csrf_token: string } } } };
  });
  assert.equal(session.status, 200);
  assert.equal(session.body.Response.data.user, 'mira');
  const csrf = session.body.Response.data.csrf_token;

  const mkdir = (token: string | null) => page.evaluate(async ({ token, path }) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers['x-csrf-token'] = token;
    return (await fetch('/api/registered', { method: 'POST', headers, body: JSON.stringify({ path }) })).status;
  }, { token, path: `/${server.zone}/home/mira/from-the-browser` });
  assert.equal(await mkdir(null), 403, 'no CSRF token: refused');
  assert.equal(await mkdir(csrf), 200);

  const signout = await page.evaluate(async (token) => (await fetch('/auth/signout', { method: 'POST', headers: { 'x-csrf-token': token } })).status, csrf);
  assert.equal(signout, 200);
  assert.equal((await context.cookies(server.url)).find((c) => c.name === 'lading_session'), undefined, 'the cookie is gone');
  const after = await page.evaluate(async () => (await fetch('/auth/session')).status);
  assert.equal(after, 401);
  await context.close();
});

it('ends a sign-in refused at the consent page on a page saying so, from which the user signs in again', { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const refusedByCsp: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refusedByCsp.push(message.text());
  });
  // NOTE: lading's own app is asked no consent; this sign-in asks for the consent page
  // (prompt=consent, as any client may), where the user cancels.
  // NOTE: a redirect is not a request of its own to the browser's router: the app's redirect to
  // the provider is rewritten instead.
  const start = (url: URL) => url.pathname === '/auth/signin';
  await page.route(start, async (route) => {
    const response = await route.fetch({ maxRedirects: 0 });
    const asked = new URL(response.headers().location!, server.url);
    asked.searchParams.set('prompt', 'consent');
    await route.fulfill({ response, headers: { ...response.headers(), location: asked.href } });
  });
  await page.goto(`${server.url}/auth/signin?next=/x`);
  await page.getByLabel('User name').fill('mira');
  await page.getByLabel('Password').fill('correct horse battery staple');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.unroute(start);
  const answer = page.waitForResponse((res) => new URL(res.url()).pathname === '/auth/callback');
  await page.getByRole('button', { name: 'Cancel' }).click();
  const callback = await answer;
  assert.equal(callback.status(), 401);
  assert.match(callback.headers()['content-type'] ?? '', /^text\/html/);
  assert.match(callback.headers()['content-security-policy'] ?? '', /default-src 'none'; style-src 'sha256-/);
  await page.getByRole('heading', { name: 'Sign-in cancelled' }).waitFor();
  assert.match(await page.locator('main').innerText(), /You chose not to let lading data staging use your account/);
  assert.equal((await context.cookies(server.url)).find((c) => c.name === 'lading_session'), undefined, 'not signed in');

  const again = page.getByRole('link', { name: 'Sign in again' });
  assert.equal(await again.getAttribute('href'), '/auth/signin?next=%2Fx', 'back to where the sign-in was headed');
  assert.equal(await page.evaluate("getComputedStyle(document.querySelector('a.button')).backgroundColor"), 'rgb(11, 92, 173)', 'the stylesheet applies');
  assert.deepEqual(refusedByCsp, [], 'the CSP refused nothing the page uses');
  assert.deepEqual(await seriousViolations(page), []);

  const landed = page.waitForURL((url) => url.pathname === '/x');
  await again.click();
  await landed;
  assert.ok((await context.cookies(server.url)).find((c) => c.name === 'lading_session'), 'signed in at the second attempt');
  await context.close();
});

it('asks for the password again at the next sign-in after signing out', { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const signIn = async (next: string) => {
    await page.goto(`${server.url}/auth/signin?next=${next}`);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByLabel('User name').fill('mira');
    const landed = page.waitForURL((url) => url.pathname === next);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await landed;
  };
  await signIn('/first');
  // Without signing out, a second sign-in goes straight through: the provider remembers the login.
  await page.goto(`${server.url}/auth/signin?next=/again`);
  await page.waitForURL((url) => url.pathname === '/again');

  const out = await page.evaluate(async () => {
    const session = await (await fetch('/auth/session')).json() as { Response: { data: { csrf_token: string } } };
    const res = await fetch('/auth/signout', { method: 'POST', headers: { 'x-csrf-token': session.Response.data.csrf_token } });
    return { status: res.status, body: await res.json() as { Response: { data: { next: string } } } };
  });
  assert.equal(out.status, 200);
  assert.equal(out.body.Response.data.next, '/', 'nothing more to visit: the embedded provider\'s login ended with the sign-out');

  await page.goto(`${server.url}/auth/signin?next=/second`);
  await page.getByLabel('Password').waitFor();
  assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password page is shown, empty');
  await signIn('/second');
  assert.ok((await context.cookies(server.url)).find((c) => c.name === 'lading_session'), 'signed in again');
  await context.close();
});
