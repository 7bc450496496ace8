/**
 * The web app's page and assets over HTTP, and share links opened in a browser: `/` is the
 * app's page under a strict CSP, its script and stylesheet are cached by content hash; a share
 * link answers a browser (Accept preferring text/html, no download) with the app's page and
 * every other client as before — bytes, the JSON listing, the error envelope — with Vary:
 * Accept. In Chromium: a shared collection lists its members and downloads one, or all of them
 * as a ZIP; a drop box takes a file; a password-protected link asks for its password on the
 * page (one field, no Basic prompt), remembers it for that link in a cookie scoped to the
 * link, while curl keeps sending it as Basic; axe-core on each page, screenshots at desktop and phone width into
 * $LADING_SCREENSHOT_DIR/share-pages.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { browserSkip, launchBrowser, seriousViolations } from '../helpers/browser.ts';
import { screenshotDir } from './scenario.ts';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('the web app over HTTP, and share links opened in a browser', { timeout: 120_000 }, () => {
  let s: TestServer;
  let auth: string;
  const put = async (rest: string, body: string) => {
    const res = await fetch(s.home('mira', rest), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body });
    assert.equal(res.status, 200, await res.text());
  };
  const share = async (rest: string, extra: Record<string, unknown> = {}) => {
    const res = await fetch(`${s.url}/api/shares`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ path: `/${s.zone}/home/mira${rest ? `/${rest}` : ''}`, kind: 'read', ...extra }),
    });
    const body = await json(res);
    assert.equal(res.status, 201, JSON.stringify(body));
    return body.Response.data as { url: string; id: string };
  };

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    auth = await s.bearer('mira');
    await put('report.csv', 'a,b\n1,2\n');
    await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/mira/survey/run-1`, force: true }) });
    await put('survey/notes.txt', 'calm sea');
    await put('survey/run-1/cast.csv', 'depth\n10\n');
  });
  after(() => s?.stop());

  it('serves the app at / under a strict CSP, and its assets named by content with long caching', async () => {
    const res = await fetch(`${s.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline script');
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const page = await res.text();
    assert.doesNotMatch(page, /<script>(?!<)/, 'no inline script');
    const script = /src="(\/app\/main-[A-Z0-9]+\.js)"/.exec(page)?.[1];
    const style = /href="(\/app\/main-[A-Z0-9]+\.css)"/.exec(page)?.[1];
    assert.ok(script && style, page);
    const js = await fetch(`${s.url}${script}`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(js.headers.get('cache-control') ?? '', /immutable/);
    const again = await fetch(`${s.url}${script}`, { headers: { 'if-none-match': js.headers.get('etag')! } });
    assert.equal(again.status, 304);
    assert.match((await fetch(`${s.url}${style}`)).headers.get('content-type') ?? '', /^text\/css/);
    const missing = await fetch(`${s.url}/app/main-OLD.js`);
    assert.equal(missing.status, 404);
    assert.equal((await json(missing)).Meta.status, 404, 'the error envelope');
  });

  it('answers a browser opening a share link with the app\'s page, and everything else as before', async () => {
    const { url, id } = await share('report.csv');
    const bytes = await fetch(url);
    assert.equal(await bytes.text(), 'a,b\n1,2\n', 'curl gets the bytes');
    assert.equal(bytes.headers.get('vary'), 'Accept');
    const page = await fetch(url, { headers: { accept: HTML } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(page.headers.get('vary'), 'Accept, Accept-Encoding', 'a page may come compressed');
    const data = JSON.parse(/<script type="application\/json" id="lading-data">(.*?)<\/script>/s.exec(await page.text())![1]!);
    assert.equal(data.share.kind, 'read');
    assert.equal(data.share.entry.name, 'report.csv');
    assert.equal(data.share.entry.size, 8);
    assert.doesNotMatch(JSON.stringify(data), /home\/mira/, 'the page shows no owner\'s path');
    const download = await fetch(`${url}?download=true`, { headers: { accept: HTML } });
    assert.equal(await download.text(), 'a,b\n1,2\n', 'a download link gets the bytes in a browser too');
    const head = await fetch(url, { method: 'HEAD', headers: { accept: HTML } });
    assert.equal(head.headers.get('content-length'), '8', 'HEAD is not a page');
    const listing = await json(await fetch((await share('survey')).url));
    assert.deepEqual(listing.Response.data.map((m: { name: string }) => m.name), ['notes.txt', 'run-1'], 'scripts still get the JSON listing');

    await fetch(`${s.url}/api/shares/${id}`, { method: 'DELETE', headers: { authorization: auth } });
    const gone = await fetch(url, { headers: { accept: HTML } });
    assert.equal(gone.status, 404);
    assert.match(gone.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await gone.text(), /"status":404/);
    const goneJson = await fetch(url);
    assert.equal(goneJson.status, 404);
    assert.equal((await json(goneJson)).Meta.status, 404, 'curl gets the envelope');

    const locked = await share('report.csv', { password: 'open sesame' });
    const asked = await fetch(locked.url, { headers: { accept: HTML } });
    assert.equal(asked.status, 401);
    assert.equal(asked.headers.get('www-authenticate'), null, 'no Basic prompt in a browser: the page asks');
    assert.match(await asked.text(), /"passwordRequired":true/);
    const curl = await fetch(locked.url);
    assert.equal(curl.status, 401);
    assert.match(curl.headers.get('www-authenticate') ?? '', /^Basic /, 'curl is told to send it as Basic');
    const basic = `Basic ${Buffer.from(':open sesame').toString('base64')}`;
    assert.equal(await (await fetch(locked.url, { headers: { authorization: basic } })).text(), 'a,b\n1,2\n', 'curl -u :password');
    assert.equal((await fetch(locked.url, { headers: { accept: HTML, authorization: basic } })).status, 200);
    // The page's field: a wrong password sets nothing; the right one a cookie for this link only.
    const post = (password: string) => fetch(`${locked.url}/password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
    const wrong = await post('open barley');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    assert.doesNotMatch(wrong.headers.get('www-authenticate') ?? '', /Basic/, 'no Basic challenge, which would make a browser prompt');
    const right = await post('open sesame');
    assert.equal(right.status, 200);
    const cookie = right.headers.get('set-cookie') ?? '';
    const path = new URL(locked.url).pathname;
    assert.match(cookie, new RegExp(`^lading_share_password=open%20sesame; Path=${path}; HttpOnly; SameSite=Lax$`));
    const withCookie = await fetch(locked.url, { headers: { cookie: cookie.split(';')[0]! } });
    assert.equal(await withCookie.text(), 'a,b\n1,2\n', 'the cookie opens the link');
    assert.equal((await fetch(locked.url, { headers: { cookie: 'lading_share_password=wrong' } })).status, 401);
  });

  describe('in Chromium', async () => {
    const skip = browserSkip;
    let browser: Browser;
    const shots = screenshotDir('share-pages');
    before(async () => {
      if (skip) return;
      browser = await launchBrowser();
      await mkdir(shots, { recursive: true });
    });
    after(() => browser?.close());

    const checked = async (page: import('playwright-core').Page, name: string) => {
      assert.deepEqual((await seriousViolations(page)).map((v) => `${v.id}: ${v.help}`), [], `axe-core on ${name}`);
      await page.screenshot({ path: join(shots, `${name}-desktop.png`), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      assert.ok(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'), `${name} fits a phone`);
      await page.screenshot({ path: join(shots, `${name}-phone.png`), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 800 });
    };

    it('lists a shared collection, goes into a member collection and downloads a file', { skip }, async () => {
      const { url } = await share('survey');
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
      await page.getByRole('heading', { level: 1, name: 'survey' }).waitFor();
      await page.getByRole('link', { name: 'notes.txt (download)' }).waitFor();
      await checked(page, 'collection');
      // The collection as one download, by a plain link to the share link's archive.
      assert.equal(await page.getByRole('link', { name: 'Download as BagIt' }).getAttribute('href'), `${url}?download=bag`);
      const zipped = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download as ZIP' }).click();
      const zip = await readFile(await (await zipped).path());
      assert.equal(zip.subarray(0, 4).toString('latin1'), 'PK\x03\x04', 'a ZIP archive');
      assert.ok(zip.includes('survey/run-1/cast.csv'), 'of the whole collection');
      await page.getByRole('link', { name: 'run-1 (folder)' }).click();
      await page.getByRole('heading', { level: 1, name: 'run-1' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Download as ZIP' }).getAttribute('href'), `${url}/run-1?download=zip`, 'a member collection\'s own archive');
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'cast.csv (download)' }).click();
      assert.equal(await readFile(await (await download).path(), 'utf8'), 'depth\n10\n');
      await page.getByRole('link', { name: 'survey' }).click();
      await page.getByRole('heading', { level: 1, name: 'survey' }).waitFor();
      assert.deepEqual(errors, []);
      await context.close();
    });

    it('takes a file into a drop box, which refuses a name that is taken', { skip }, async () => {
      const res = await fetch(`${s.url}/api/shares`, {
        method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `/${s.zone}/home/mira/survey`, kind: 'upload' }),
      });
      const { url } = (await json(res)).Response.data as { url: string };
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(url);
      await page.getByRole('heading', { level: 1, name: 'Drop box' }).waitFor();
      const file = join(s.dataDir, 'deposit.csv');
      await writeFile(file, 'station,temp\nA1,3.4\n');
      await page.getByLabel('Choose files to upload').setInputFiles(file);
      await page.getByText('Uploaded.').waitFor();
      await checked(page, 'drop-box');
      const stored = await fetch(`${s.home('mira', 'survey/deposit.csv')}?download=true`, { headers: { authorization: auth } });
      assert.equal(await stored.text(), 'station,temp\nA1,3.4\n');
      await page.getByLabel('Choose files to upload').setInputFiles(file);
      await page.getByText(/already there/).waitFor();
      await context.close();
    });

    it('asks for a link\'s password on its page, remembers it for that link, and downloads with it', { skip }, async () => {
      const { url } = await share('report.csv', { password: 'open sesame' });
      const other = await share('survey/notes.txt', { password: 'another one' });
      const asked = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
      const page = await asked.newPage();
      const response = await page.goto(url);
      assert.equal(response?.status(), 401);
      await page.getByRole('heading', { level: 1, name: 'This link needs a password' }).waitFor();
      await checked(page, 'password');
      await page.getByLabel('Password').fill('open barley');
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByRole('alert').filter({ hasText: 'That is not the password of this link.' }).waitFor();
      await page.emulateMedia({ colorScheme: 'dark' });
      await checked(page, 'password-wrong-dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.getByLabel('Password').fill('open sesame');
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByRole('heading', { level: 1, name: 'report.csv' }).waitFor();
      await checked(page, 'file');
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download report.csv' }).click();
      assert.equal(await readFile(await (await download).path(), 'utf8'), 'a,b\n1,2\n', 'the remembered password downloads');
      // Remembered for that link only: another link asks for its own.
      await page.goto(other.url);
      await page.getByRole('heading', { level: 1, name: 'This link needs a password' }).waitFor();
      await page.goto(url);
      await page.getByRole('heading', { level: 1, name: 'report.csv' }).waitFor();
      await asked.close();
    });
  });
});
