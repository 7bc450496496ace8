/**
 * End to end in a real browser: Debian's headless Chromium, driven by playwright-core, opens
 * /auth/askauth on a whole lading node with the embedded provider, signs in on the login page
 * as a user created like `lading user add` (lading's own app is asked no consent), reads the token
 * from the result envelope and uses it on /api/registered. Screenshots of its pages go to
 * test-artifacts/. Skips locally without Chromium; never in CI.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'oidc');
const skip = browserSkip;

let server: TestServer;
let browser: Browser;

before(async () => {
  if (skip) return;
  server = await startTestServer();
  await server.addUser('mira', 'correct horse battery staple');
  browser = await launchBrowser();
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

it('logs in through the embedded provider in Chromium and gets a working token', { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/auth/askauth`);

  await page.getByLabel('User name').waitFor();
  assert.match(await page.title(), /Sign in/);
  assert.equal(await page.locator('[placeholder]').count(), 0, 'no placeholder text stands in for labels');
  await page.screenshot({ path: join(ARTIFACTS, 'login.png'), fullPage: true });

  // A wrong password first: the page says so and keeps the user name.
  await page.getByLabel('User name').fill('mira');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /user name or password is wrong/);
  assert.equal(await page.getByLabel('User name').inputValue(), 'mira');
  await page.screenshot({ path: join(ARTIFACTS, 'login-error.png'), fullPage: true });

  await page.getByLabel('Password').fill('correct horse battery staple');
  // NOTE: lading's own app is asked no consent: the password is the last page before the callback.
  const pages: string[] = [];
  page.on('framenavigated', (frame) => { if (frame === page.mainFrame()) pages.push(new URL(frame.url()).pathname); });
  const landed = page.waitForURL((url) => url.pathname === '/auth/callback');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await landed;
  assert.deepEqual(pages.filter((p) => p.startsWith('/oidc/interaction/')), [], 'no consent page');

  const body = JSON.parse(await page.locator('body').innerText()) as {
    Meta: { status: number; elements: number };
    Response: { data: { storage_home: string; storage_user: string; token: string } };
  };
  assert.equal(body.Meta.status, 200);
  assert.equal(body.Meta.elements, 3);
  assert.equal(body.Response.data.storage_user, 'mira');
  assert.equal(body.Response.data.storage_home, `/${server.zone}/home/mira`);

  const auth = { authorization: `Bearer ${body.Response.data.token}` };
  const put = await fetch(server.home('mira', 'hello.txt'), { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: 'hi' });
  assert.equal(put.status, 200, await put.clone().text());
  const list = await fetch(server.home('mira') + '/', { headers: auth });
  assert.equal(list.status, 200);
  const listed = (await list.json()) as { Response: { data: Record<string, unknown>[] } };
  assert.deepEqual(listed.Response.data.map((e) => Object.keys(e)[0]), ['hello.txt']);
  await context.close();
});
