/**
 * A PID's landing page in a real browser (Debian's headless Chromium, driven by
 * playwright-core): it shows the object's fields, the copy button puts the PID on the
 * clipboard, the download button downloads the published object, the page asks the server
 * for nothing but itself and breaks no rule of its Content-Security-Policy, and axe-core finds
 * no serious or critical accessibility violation; a withdrawn object's PID shows its tombstone
 * (when, by whom, why; no download) under the same checks. Screenshots at desktop and phone width go to
 * $LADING_SCREENSHOT_DIR (default test-artifacts/pid-landing). Skips locally without Chromium;
 * never in CI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchBrowser, seriousViolations } from '../helpers/browser.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';


const SHOTS = resolve(process.env.LADING_SCREENSHOT_DIR || join(import.meta.dirname, '..', '..', 'test-artifacts', 'pid-landing'));
const skip = browserSkip;

describe('the PID landing page in Chromium', { skip }, () => {
  let s: TestServer;
  let browser: Browser;
  let rulesDir: string;
  let pid: string;
  let privatePid: string;
  let auth: string;
  const CONTENT = 'station,depth,temperature\nA1,1200,3.4\n';

  before(async () => {
    rulesDir = await mkdtemp(join(tmpdir(), 'lading-landing-'));
    await writeFile(join(rulesDir, 'rules.txt'), 'object.created /tz/home/** pid.register\nentity.published /tz/home/** pid.update\n');
    s = await startTestServer({ 'pid.rules': join(rulesDir, 'rules.txt'), 'pid.prefix': '21.T44444', 'resource.fsync': false });
    auth = await s.bearer('mira');
    const put = async (name: string) => (await json(await fetch(`${s.home('mira', name)}?pid_await=true`, {
      method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: CONTENT,
    }))).Response.data.PID as string;
    pid = await put('ctd-cast-2026-11.csv');
    privatePid = await put('unpublished.csv');
    assert.equal((await fetch(`${s.url}/api/publish/tz/home/mira/ctd-cast-2026-11.csv`, { method: 'PUT', headers: { authorization: auth } })).status, 200);
    browser = await launchBrowser();
    await mkdir(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
    if (rulesDir) await rm(rulesDir, { recursive: true, force: true });
  });

  /** Opens `url` in a fresh context; returns the page, every request it made and every CSP complaint. */
  async function open(url: string, viewport: { width: number; height: number }) {
    const context = await browser.newContext({ viewport, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
    const page = await context.newPage();
    const requests: string[] = [];
    const complaints: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (/Content.Security.Policy|Refused to/i.test(m.text())) complaints.push(m.text()); });
    const response = await page.goto(url);
    await page.waitForLoadState('networkidle');
    return { context, page, requests, complaints, response };
  }

  it('shows the fields, copies the PID, downloads, loads nothing else, and passes axe-core', { timeout: 60_000 }, async (t) => {
    const url = `${s.url}/api/pids/${pid}`;
    const { context, page, requests, complaints, response } = await open(url, { width: 1280, height: 800 });
    assert.equal(response?.status(), 200);
    assert.match(await page.title(), /ctd-cast-2026-11\.csv/);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'ctd-cast-2026-11.csv');
    const main = await page.locator('main').innerText();
    for (const text of [pid, `${Buffer.byteLength(CONTENT)} bytes`, 'sha2:', 'Created', 'Owner', 'mira']) assert.ok(main.includes(text), `the page shows ${text}`);

    await page.getByRole('button', { name: 'Copy PID' }).click();
    await page.getByRole('status').filter({ hasText: 'copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), pid);

    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Download/ }).click();
    const file = await (await download).path();
    assert.equal(await readFile(file, 'utf8'), CONTENT);

    assert.deepEqual(requests.filter((r) => r !== url && !r.includes('/api/public/')), [], 'no request but the page and the download');
    assert.deepEqual(complaints, [], 'the CSP allows exactly the page\'s style and script');

    const violations = await seriousViolations(page);
    assert.deepEqual(violations.map((v) => `${v.id}: ${v.help}`), []);

    await page.screenshot({ path: join(SHOTS, 'desktop.png'), fullPage: true });
    t.diagnostic(`screenshot: ${join(SHOTS, 'desktop.png')}`);
    await context.close();
  });

  it('fits a phone\'s width, and offers no download of what is not published', { timeout: 60_000 }, async (t) => {
    const { context, page, requests, complaints } = await open(`${s.url}/api/pids/${pid}`, { width: 375, height: 740 });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    assert.ok(overflow <= 0, `no horizontal scrolling at 375 px (${overflow} px too wide)`);
    const violations = await seriousViolations(page);
    assert.deepEqual(violations.map((v) => `${v.id}: ${v.help}`), []);
    await page.screenshot({ path: join(SHOTS, 'phone.png'), fullPage: true });
    t.diagnostic(`screenshot: ${join(SHOTS, 'phone.png')}`);
    assert.equal(requests.length, 1);
    assert.deepEqual(complaints, []);

    await page.goto(`${s.url}/api/pids/${privatePid}`);
    assert.equal(await page.getByRole('link', { name: /Download/ }).count(), 0);
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), 'the note wraps at 375 px');
    assert.match(await page.locator('main').innerText(), /not public/);
    await page.screenshot({ path: join(SHOTS, 'phone-unpublished.png'), fullPage: true });

    const missing = await page.goto(`${s.url}/api/pids/21.T44444/no-such-pid`);
    assert.equal(missing?.status(), 404);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'PID not found');
    await page.screenshot({ path: join(SHOTS, 'phone-not-found.png'), fullPage: true });
    await context.close();
  });

  it('shows a withdrawn object\'s tombstone: withdrawn when, by whom and why, with no download, and passes axe-core', { timeout: 60_000 }, async (t) => {
    const trashed = await fetch(`${s.url}/api/trash`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/tz/home/mira/unpublished.csv', reason: 'Calibration error in the CTD sensor; superseded by cast 2026-12.' }),
    });
    assert.equal(trashed.status, 200);
    const url = `${s.url}/api/pids/${privatePid}`;
    for (const viewport of [{ width: 1280, height: 800, name: 'tombstone.png' }, { width: 375, height: 740, name: 'phone-tombstone.png' }]) {
      const { context, page, requests, complaints, response } = await open(url, viewport);
      assert.equal(response?.status(), 200);
      assert.match(await page.title(), /Withdrawn: unpublished\.csv/);
      const main = await page.locator('main').innerText();
      for (const text of ['Withdrawn data object', 'withdrawn by its owner', 'Calibration error in the CTD sensor', 'mira', privatePid]) assert.ok(main.includes(text), `the tombstone shows ${text}`);
      assert.equal(await page.getByRole('link', { name: /Download/ }).count(), 0);
      assert.ok(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), `no horizontal scrolling at ${viewport.width} px`);
      assert.deepEqual(requests, [url]);
      assert.deepEqual(complaints, []);
      const violations = await seriousViolations(page);
      assert.deepEqual(violations.map((v) => `${v.id}: ${v.help}`), []);
      await page.screenshot({ path: join(SHOTS, viewport.name), fullPage: true });
      t.diagnostic(`screenshot: ${join(SHOTS, viewport.name)}`);
      await context.close();
    }
  });
});
