/**
 * Browser sign-in end to end in a real browser: Debian's headless Chromium, driven by
 * playwright-core, opens /auth/signin?next=/x on a whole lading node with the embedded
 * provider, signs in and allows access, and lands on /x holding the session cookie, which
 * scripts cannot read; from the page, GET /auth/session names the user, a change is refused
 * without the CSRF token and done with it, and sign-out ends the session. Skips locally
 * without Chromium; never in CI.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
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
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  const landed = page.waitForURL((url) => url.pathname === '/x');
  await page.getByRole('button', { name: 'Allow' }).click();
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
