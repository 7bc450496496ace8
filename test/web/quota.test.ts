/**
 * The web app's header shows how much of the quota over the user's home is used, the trash
 * included, and nothing without a quota. Skips locally without Chromium; never in CI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { signIn } from './scenario.ts';

describe('the web app\'s quota in the header', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let browser: Browser;

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    const alice = await s.bearer('alice');
    const put = await fetch(s.home('alice', 'half.bin'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(512 * 1024) });
    assert.equal(put.status, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('shows the usage of the quota over the home, and nothing without one', async () => {
    const page = await browser.newPage();
    await signIn(page, { base: s.url, user: 'alice', password: 'pw-alice' });
    await page.waitForLoadState('networkidle');
    assert.equal(await page.locator('.app-header .quota').count(), 0, 'no quota, no meter');
    await s.deps.quotas.set('alice', { maxBytes: 1024 * 1024 });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'My files' }).waitFor();
    const shown = page.locator('.app-header .quota');
    await shown.waitFor();
    assert.equal((await shown.innerText()).trim(), '512 KiB of 1.0 MiB used');
    assert.equal(await page.getByRole('meter', { name: 'Storage used' }).getAttribute('value'), String(512 * 1024));
    await page.close();
  });
});
