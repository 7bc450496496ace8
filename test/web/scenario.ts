/**
 * The web app's end-to-end scenario, in Debian's headless Chromium driven by playwright-core,
 * against whatever deployment a test started (one node on the embedded defaults, or three
 * nodes on PostgreSQL and S3 behind nginx), reached through a TCP relay that restarts the
 * server and cuts the connection while a large upload is in flight. The user signs in, uploads
 * a folder of 50 files and one file of 200 MiB, sees every file listed with the checksum of the
 * local file, is asked "replace or skip" for a file that exists, downloads the large file back,
 * renames it, shares it, opens the link in a fresh browser context without a session, revokes
 * it and sees the refusal, gives a second user read access to a collection (who finds it under
 * Shared with me, opens it, downloads from it, and is offered no rename or sharing), makes an API token whose curl line works and revokes it (the API
 * then refuses it), goes over the main pages once more in dark mode, and signs out. axe-core
 * runs on every page (no serious or critical violation), and each page is photographed at
 * desktop (1280×800) and phone (390×844) width into $LADING_SCREENSHOT_DIR/<name>. Listings
 * must show their dates and actions whole at both widths, and once the uploads are done
 * nothing may lie over the page's controls.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import type { Browser, Locator, Page, Response } from 'playwright-core';
import { type Relay, generateFile } from '../e2e/tus-support.ts';
import { seriousViolations } from '../helpers/browser.ts';

const MIB = 1024 * 1024;
const BIG = 200 * MIB;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

export function screenshotDir(name: string): string {
  return resolve(process.env.LADING_SCREENSHOT_DIR || join(import.meta.dirname, '..', '..', 'test-artifacts', 'web'), name);
}

const sha256File = async (path: string) => {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('base64');
};

/** axe-core's serious and critical violations on the page, one line each. */
async function axeViolations(page: Page): Promise<string[]> {
  return (await seriousViolations(page)).map((v) => `${v.id}: ${v.help} (${JSON.stringify(v.nodes.map((n) => n.target))})`);
}

/**
 * What of a listing's table does not fit at the page's width: the table wider than its box,
 * or a cell of the size, date, owner or actions columns cut off (an action clipped, a date
 * ellipsised). Empty when every row shows its date and its actions whole.
 */
async function tableProblems(page: Page): Promise<string[]> {
  // NOTE: page code as text: the tests are type-checked without the DOM's types.
  return (await page.evaluate(`(() => {
    const problems = [];
    const box = document.querySelector('.table-scroll');
    if (box && box.scrollWidth > box.clientWidth) problems.push('the table is ' + (box.scrollWidth - box.clientWidth) + ' px wider than its box');
    for (const td of document.querySelectorAll('tbody td.col-size, tbody td.col-modified, tbody td.col-owner, tbody td.col-actions')) {
      if (!td.offsetParent) continue;
      const name = td.parentElement.querySelector('.entry-name').title;
      const cell = td.getBoundingClientRect();
      const cut = [...td.querySelectorAll('a, button')].filter((a) => a.offsetParent).some((a) => {
        const r = a.getBoundingClientRect();
        return r.left < cell.left || r.right > cell.right;
      });
      if (cut || td.scrollWidth > td.clientWidth) problems.push(td.className + ' of ' + name + ' is cut off');
    }
    return problems;
  })()`)) as string[];
}

/**
 * The controls of a one-line form (`.inline-form`) that sit in the same row as another but
 * not level with it, one line each: a label that takes two lines puts its input below its
 * neighbour's. Empty when every row's inputs and selects start at the same height.
 */
async function formProblems(page: Page): Promise<string[]> {
  // NOTE: page code as text: the tests are type-checked without the DOM's types.
  return (await page.evaluate(`(() => {
    const problems = [];
    for (const form of document.querySelectorAll('.inline-form')) {
      if (!form.offsetParent) continue;
      const rows = new Map();
      for (const field of form.querySelectorAll(':scope > .field')) {
        const control = field.querySelector('input, select, textarea');
        if (!field.offsetParent || !control) continue;
        const top = Math.round(field.getBoundingClientRect().top);
        rows.set(top, [...(rows.get(top) ?? []), { label: field.querySelector('label')?.textContent ?? '?', top: control.getBoundingClientRect().top }]);
      }
      for (const row of rows.values()) {
        for (const c of row) {
          if (Math.abs(c.top - row[0].top) > 1) problems.push('the inputs of "' + row[0].label + '" and "' + c.label + '" start ' + Math.round(Math.abs(c.top - row[0].top)) + ' px apart');
        }
      }
    }
    return problems;
  })()`)) as string[];
}

/**
 * Asserts that nothing lies over a control when it is at the bottom of the window, where a
 * floating panel would be: the element at its centre is the control (or inside it).
 */
async function uncovered(page: Page, control: Locator): Promise<void> {
  const hit = await control.evaluate((el) => {
    el.scrollIntoView({ block: 'end' });
    const r = el.getBoundingClientRect();
    const top = el.ownerDocument.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return top !== null && (top === el || el.contains(top)) ? '' : (top?.outerHTML ?? 'nothing').slice(0, 200);
  });
  assert.equal(hit, '', 'the control is not covered');
}

/** What a deployment gives the scenario. */
export interface Deployment {
  /** Where the browser goes: the relay's URL, which is also the deployment's public URL. */
  base: string;
  relay: Relay;
  /** Restarts the server (every node) with kill -9, on the same data; the relay holds the client meanwhile. */
  restart: () => Promise<void>;
  /** A directory for local files. */
  dir: string;
  user: string;
  password: string;
  /** A second user, whom the first shares a collection with. */
  other: { user: string; password: string };
  zone: string;
  /** Screenshots go here. */
  shots: string;
  /** The handle prefix PIDs get (the rules register every object created in the home). */
  pidPrefix: string;
  /** The S3 endpoint the API access page names, when the server runs an S3 listener; absent: the page offers no S3 keys. */
  s3Endpoint?: string;
}

/**
 * axe-core on the page (no serious or critical violation), its fields lined up at widths from
 * a tablet's to the desktop's, no sideways scrolling at a phone's, and screenshots at desktop
 * and phone width into `shots` as `<name>-desktop.png` and `<name>-phone.png`; each page's
 * name goes into `visited`.
 */
export function pageCheck(shots: string, visited: string[]): (page: Page, name: string) => Promise<void> {
  return async (page: Page, name: string) => {
    await page.waitForLoadState('networkidle');
    const violations = await axeViolations(page);
    assert.deepEqual(violations, [], `axe-core on ${name}`);
    await page.screenshot({ path: join(shots, `${name}-desktop.png`), fullPage: true });
    assert.deepEqual(await formProblems(page), [], `the fields of ${name}'s forms line up`);
    const size = page.viewportSize() ?? DESKTOP;
    // NOTE: between the phone's width and the desktop's, where a row of a form holds fewer
    // fields and a long label is nearest to wrapping (tablets in portrait: 768-834).
    for (const width of [740, 768, 800, 834, 900, 960]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForTimeout(50);
      assert.deepEqual(await formProblems(page), [], `the fields of ${name}'s forms line up at ${width} px`);
    }
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(150);
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    assert.ok(overflow <= 0, `${name} fits a phone's width (${overflow} px too wide)`);
    assert.deepEqual(await formProblems(page), [], `the fields of ${name}'s forms line up at phone width`);
    assert.deepEqual(await axeViolations(page), [], `axe-core on ${name} at phone width`);
    await page.screenshot({ path: join(shots, `${name}-phone.png`), fullPage: true });
    await page.setViewportSize(size);
    visited.push(name);
  };
}

export async function runScenario(t: TestContext, browser: Browser, d: Deployment): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const home = `/${d.zone}/home/${d.user}`;
  const visited: string[] = [];
  const problems: string[] = [];

  const check = pageCheck(d.shots, visited);
  const watch = (page: Page) => {
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text()); });
  };

  // Local files: a folder of 50 (five of them in a subfolder) and one of 200 MiB.
  const folder = join(d.dir, 'campaign-2026');
  await mkdir(join(folder, 'raw'), { recursive: true });
  const local = new Map<string, Buffer>();
  for (let i = 1; i <= 50; i++) {
    const name = i <= 45 ? `station-${String(i).padStart(2, '0')}.csv` : `raw/cast-${i}.bin`;
    // NOTE: station-02 has the widest size text there is ("1023 bytes"): the listing must fit it.
    const data = randomBytes(i === 2 ? 1023 : 512 + Math.floor(Math.random() * 200_000));
    local.set(name, data);
    await writeFile(join(folder, name), data);
  }
  const bigPath = join(d.dir, 'ctd-profile.bin');
  const bigSha = await generateFile(bigPath, BIG);

  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.base });
  const page = await context.newPage();
  watch(page);

  // Signing in: the app's sign-in page, the provider's, back to the app with a session.
  const first = await page.goto(`${d.base}/`);
  assert.equal(first?.status(), 200);
  assert.match(first?.headers()['content-security-policy'] ?? '', /default-src 'self'/);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await check(page, 'sign-in');
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('User name').waitFor();
  await check(page, 'provider-sign-in');
  await page.getByLabel('User name').fill(d.user);
  await page.getByLabel('Password').fill(d.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const files = page.getByRole('heading', { level: 1, name: 'Your files' });
  const allow = page.getByRole('button', { name: 'Allow' });
  await files.or(allow).waitFor();
  if (await allow.isVisible()) {
    await check(page, 'provider-consent');
    await allow.click();
  }
  await files.waitFor();
  assert.equal(new URL(page.url()).origin, d.base, 'back on the app');
  await check(page, 'files-empty');

  // A folder of 50 files, by the folder picker; nothing it asks for is refused (the folder and
  // its subfolder do not exist yet, and are not asked for).
  const folderRefused: string[] = [];
  const onResponse = (r: Response) => {
    if (r.status() >= 400) folderRefused.push(`${r.request().method()} ${new URL(r.url()).pathname}: ${r.status()}`);
  };
  page.on('response', onResponse);
  await page.getByLabel('Upload a folder').setInputFiles(folder);
  const panel = page.getByRole('complementary', { name: 'Uploads in progress' });
  // Once every upload is done the panel gives way to a chip in the header.
  await page.getByRole('link', { name: '50 of 50 uploads done' }).waitFor({ timeout: 120_000 });
  page.off('response', onResponse);
  assert.deepEqual(folderRefused, [], 'no request of the folder upload was refused');
  assert.equal(await panel.count(), 0, 'no panel once nothing is under way');

  // One file of 200 MiB; the server restarts (kill -9) at 70 MiB and the connection is cut at 150 MiB.
  const mark = d.relay.sent;
  // NOTE: the upload may finish on a node that is up again before the others are (three
  // nodes), so the restart is awaited after the upload, before anything else is asked of them.
  let restart: Promise<void> | undefined;
  d.relay.triggers.push({ at: mark + 70 * MIB, action: () => (restart = d.restart()) });
  d.relay.triggers.push({ at: mark + 150 * MIB, action: 'cut' });
  const cuts = d.relay.cuts;
  await page.getByLabel('Upload files').setInputFiles(bigPath);
  await panel.getByRole('progressbar', { name: 'Upload of ctd-profile.bin' }).waitFor();
  await check(page, 'files-uploading');
  await page.getByRole('link', { name: '51 of 51 uploads done' }).waitFor({ timeout: 240_000 });
  assert.ok(restart, 'the server was restarted during the upload');
  await restart;
  assert.ok(d.relay.cuts > cuts, 'the connection was cut during the upload');

  await page.getByRole('link', { name: '51 of 51 uploads done' }).click();
  await page.getByRole('heading', { name: 'Transfers' }).waitFor();
  const bigRow = page.locator('li.transfer').filter({ hasText: 'ctd-profile.bin' });
  assert.match(await bigRow.innerText(), /Done/);
  assert.match(await bigRow.innerText(), /resumed at \d/, 'the large upload resumed where it stopped');
  // The PID the rules assign appears once registered (the app waits for it with pid_await).
  await bigRow.getByText(new RegExp(`PID ${d.pidPrefix.replace('.', '\\.')}/`)).waitFor({ timeout: 30_000 });
  await check(page, 'transfers');

  // Every file is listed, with the checksum of the local file.
  await page.getByRole('link', { name: 'Files', exact: true }).click();
  await files.waitFor();
  const rows = page.locator('tbody tr:not(.spacer)');
  await page.getByRole('link', { name: 'ctd-profile.bin', exact: true }).waitFor();
  await page.getByRole('link', { name: 'campaign-2026 (collection)' }).click();
  await page.getByRole('heading', { level: 1, name: 'campaign-2026' }).waitFor();
  await page.getByRole('link', { name: 'station-45.csv', exact: true }).waitFor();
  assert.equal(await rows.count(), 46, '45 files and the collection raw');
  await page.getByLabel('Filter by name').fill('station-0');
  await page.getByText('9 of 46 entries').waitFor();
  // Dates and both actions whole at desktop width; at a phone's, one action, as an icon.
  assert.deepEqual(await tableProblems(page), [], 'the listing fits at desktop width');
  const station = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'station-01.csv', exact: true }) });
  assert.match(await station.locator('td.col-modified').innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d$/);
  assert.ok(await station.getByRole('link', { name: 'Download station-01.csv' }).isVisible());
  assert.ok(await station.getByRole('link', { name: 'Details of station-01.csv' }).isVisible());
  await check(page, 'collection');
  await page.setViewportSize(PHONE);
  assert.deepEqual(await tableProblems(page), [], 'the listing fits at phone width');
  assert.ok(await station.getByRole('link', { name: 'Download station-01.csv' }).isVisible(), 'the download action is there on a phone');
  await page.setViewportSize(DESKTOP);
  await page.getByLabel('Filter by name').fill('');
  await page.getByRole('button', { name: 'Size' }).click();
  assert.equal(await page.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort'), 'ascending');
  const sizes = (await page.locator('tbody td.col-size').allInnerTexts()).filter((s) => s !== '');
  assert.equal(sizes.length, 45);
  for (const [name, data] of local) {
    await page.evaluate(`location.hash = '#/item${home}/campaign-2026/${name}'`);
    await page.getByRole('heading', { level: 1, name: name.split('/').at(-1)! }).waitFor();
    assert.equal(await page.locator('#checksum').innerText(), `sha2:${createHash('sha256').update(data).digest('base64')}`, `${name}: the checksum of the local file`);
  }
  await check(page, 'details-small-file');

  // A file that exists: the app asks, and skipping leaves it as it was.
  await page.evaluate(`location.hash = '#/browse${home}/campaign-2026'`);
  await page.getByRole('link', { name: 'station-01.csv', exact: true }).waitFor();
  await writeFile(join(d.dir, 'station-01.csv'), 'not the same content');
  await page.getByLabel('Upload files').setInputFiles(join(d.dir, 'station-01.csv'));
  const dialog = page.getByRole('dialog', { name: 'Replace or skip?' });
  await dialog.waitFor();
  await check(page, 'replace-or-skip');
  await dialog.getByRole('button', { name: 'Skip' }).click();
  await page.getByText('0 files queued for upload, 1 skipped').waitFor();
  await page.evaluate(`location.hash = '#/item${home}/campaign-2026/station-01.csv'`);
  await page.getByRole('heading', { level: 1, name: 'station-01.csv' }).waitFor();
  assert.equal(await page.locator('#checksum').innerText(), `sha2:${createHash('sha256').update(local.get('station-01.csv')!).digest('base64')}`, 'skipped, not overwritten');
  // Asked again, Keep both: the new file goes beside the old one as station-01 (2).csv.
  await page.evaluate(`location.hash = '#/browse${home}/campaign-2026'`);
  await page.getByRole('link', { name: 'station-01.csv', exact: true }).waitFor();
  await page.getByLabel('Upload files').setInputFiles(join(d.dir, 'station-01.csv'));
  await dialog.getByText('keep both (the new one as station-01 (2).csv)').waitFor();
  await dialog.getByRole('button', { name: 'Keep both' }).click();
  await page.getByRole('link', { name: 'station-01 (2).csv', exact: true }).waitFor({ timeout: 30_000 });
  const both = await checksums(page, `${home}/campaign-2026`);
  assert.equal(both['station-01 (2).csv'], `sha2:${createHash('sha256').update('not the same content').digest('base64')}`, 'the new file beside the old');
  assert.equal(both['station-01.csv'], `sha2:${createHash('sha256').update(local.get('station-01.csv')!).digest('base64')}`, 'the old one as it was');

  // The large file: its details, its PID, and a download by a plain link.
  await page.getByRole('link', { name: 'Your files' }).click();
  await page.getByRole('link', { name: 'ctd-profile.bin', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'ctd-profile.bin' }).waitFor();
  assert.equal(await page.locator('#checksum').innerText(), `sha2:${bigSha}`);
  assert.match(await page.locator('#pid').innerText(), new RegExp(`^${d.pidPrefix.replace('.', '\\.')}/`));
  assert.ok(await page.getByRole('link', { name: 'Landing page' }).isVisible());
  await check(page, 'details');
  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download', exact: true }).click();
  assert.equal(await sha256File(await (await download).path()), bigSha, 'the download is the local file');

  // Rename.
  await page.getByRole('button', { name: 'Rename' }).click();
  const rename = page.getByRole('dialog', { name: 'Rename data object' });
  await rename.getByLabel('New name').fill('ctd-profile-final.bin');
  await check(page, 'rename');
  await rename.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('heading', { level: 1, name: 'ctd-profile-final.bin' }).waitFor();
  await page.getByRole('link', { name: 'Your files' }).click();
  await page.getByRole('link', { name: 'ctd-profile-final.bin', exact: true }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'ctd-profile.bin', exact: true }).count(), 0, 'the old name is gone');

  // A share link, opened in a fresh context without a session, then revoked.
  await page.getByRole('link', { name: 'ctd-profile-final.bin', exact: true }).click();
  await page.getByRole('button', { name: 'Create link' }).click();
  const shareUrl = await page.locator('#new-link').innerText();
  assert.ok(shareUrl.startsWith(`${d.base}/api/shared/`), shareUrl);
  await check(page, 'details-shared');
  const stranger = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const guest = await stranger.newPage();
  watch(guest);
  const opened = await guest.goto(shareUrl);
  assert.equal(opened?.status(), 200);
  await guest.getByRole('heading', { level: 1, name: 'ctd-profile-final.bin' }).waitFor();
  assert.match(await guest.locator('main').innerText(), /200 MiB/);
  await check(guest, 'share-link');
  const shared = guest.waitForEvent('download');
  await guest.getByRole('link', { name: 'Download ctd-profile-final.bin' }).click();
  assert.equal(await sha256File(await (await shared).path()), bigSha, 'the shared download is the local file');
  assert.equal((await guest.evaluate('fetch("/auth/session").then((r) => r.status)')), 401, 'the fresh context has no session');

  await page.getByRole('button', { name: /^Revoke the read link/ }).click();
  await page.getByText('No links yet.').waitFor();
  const refused = await guest.reload();
  assert.equal(refused?.status(), 404);
  await guest.getByRole('heading', { level: 1, name: 'This link does not work' }).waitFor();
  await check(guest, 'share-link-revoked');
  await stranger.close();

  // The other pages: a collection's details, shared with me, API access with a working token.
  await page.evaluate(`location.hash = '#/item${home}/campaign-2026'`);
  await page.getByRole('heading', { level: 1, name: 'campaign-2026' }).waitFor();
  await page.getByRole('heading', { name: 'Who has access' }).waitFor();
  await uncovered(page, page.getByRole('button', { name: `Revoke access of ${d.user}` }));
  await check(page, 'details-collection');
  await page.getByRole('link', { name: 'Shared with me' }).click();
  await page.getByRole('heading', { level: 1, name: 'Shared with me' }).waitFor();
  await page.getByText('Nobody has shared anything with you yet.').waitFor();
  await check(page, 'shared-with-me');

  // Sharing with another user: read on the collection. In a browser context of their own they
  // find it under Shared with me, open it and download from it, and are offered no upload,
  // rename or sharing.
  await page.evaluate(`location.hash = '#/item${home}/campaign-2026'`);
  await page.getByLabel('User or group (or public)').fill(d.other.user);
  await page.locator('#acl-level').selectOption('read');
  await page.getByRole('button', { name: 'Grant' }).click();
  await page.getByRole('button', { name: `Revoke access of ${d.other.user}` }).waitFor();
  const otherContext = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const other = await otherContext.newPage();
  watch(other);
  await signIn(other, { base: d.base, user: d.other.user, password: d.other.password });
  await other.getByRole('link', { name: 'Shared with me' }).click();
  await other.getByRole('heading', { level: 1, name: 'Shared with me' }).waitFor();
  const sharedLink = other.getByRole('link', { name: 'campaign-2026 (collection)' });
  await sharedLink.waitFor();
  const sharedRow = other.getByRole('row').filter({ has: sharedLink });
  assert.equal(await other.locator('tbody tr').count(), 1, 'one entity is shared with them');
  assert.equal(await sharedRow.locator('.entry-path').innerText(), `in ${home}`);
  assert.equal(await sharedRow.locator('td.col-owner').innerText(), d.user);
  assert.equal(await sharedRow.locator('td.col-level').innerText(), 'read');
  await check(other, 'shared-with-me-other');
  await sharedLink.click();
  await other.getByRole('heading', { level: 1, name: 'campaign-2026' }).waitFor();
  await other.getByRole('link', { name: 'station-01.csv', exact: true }).waitFor();
  assert.equal(await other.getByRole('link', { name: 'Shared with me' }).first().getAttribute('aria-current'), 'page');
  const otherDownload = other.waitForEvent('download');
  await other.getByRole('link', { name: 'Download station-01.csv' }).click();
  assert.deepEqual(await readFile(await (await otherDownload).path()), local.get('station-01.csv'), 'they download the file');
  for (const control of ['Upload files', 'Upload a folder']) assert.equal(await other.getByLabel(control).count(), 0, `no ${control} with read access`);
  assert.equal(await other.getByRole('button', { name: 'New collection' }).count(), 0, 'no New collection with read access');
  await check(other, 'shared-collection-other');
  await other.getByRole('link', { name: 'Details', exact: true }).click();
  await other.getByRole('heading', { name: 'Metadata' }).waitFor();
  assert.equal(await other.locator('#your-access').innerText(), 'Read');
  assert.equal(await other.getByRole('button', { name: 'Rename' }).count(), 0, 'no Rename with read access');
  assert.equal(await other.getByRole('heading', { name: 'Share links' }).count(), 0, 'no sharing without own');
  assert.equal(await other.getByRole('button', { name: 'Create link' }).count(), 0, 'no Create link without own');
  assert.equal(await other.getByRole('heading', { name: 'Who has access' }).count(), 0, 'no access list without own');
  await check(other, 'shared-details-other');
  await other.evaluate(`location.hash = '#/item${home}/campaign-2026/station-01.csv'`);
  await other.getByRole('heading', { level: 1, name: 'station-01.csv' }).waitFor();
  await other.getByRole('heading', { name: 'Metadata' }).waitFor();
  assert.ok(await other.getByRole('link', { name: 'Download', exact: true }).isVisible());
  assert.equal(await other.getByRole('button', { name: 'Rename' }).count(), 0, 'no Rename of a file inside with read access');
  assert.equal(await other.getByRole('button', { name: 'Add' }).count(), 0, 'no metadata to add with read access');
  await otherContext.close();
  await page.getByRole('link', { name: 'API access' }).click();
  await page.getByLabel('Label').fill('e2e script');
  // The lifetime is chosen: the server's default (1 day) first, up to its maximum (90 days).
  const lifetimes = await page.getByLabel('Expires after').locator('option').allInnerTexts();
  assert.deepEqual(lifetimes, ['1 day', '7 days', '30 days', '90 days']);
  assert.equal(await page.getByLabel('Expires after').inputValue(), '86400');
  await page.getByLabel('Expires after').selectOption({ label: '30 days' });
  await uncovered(page, page.getByRole('button', { name: 'Create a token' }));
  await page.getByRole('button', { name: 'Create a token' }).click();
  const curl = await page.locator('#curl-line').innerText();
  const token = /Bearer ([^"]+)"/.exec(curl)?.[1];
  assert.ok(token, curl);
  const made = (await (await fetch(`${d.base}/auth/tokens`, { headers: { authorization: `Bearer ${token}` } })).json()) as { Response: { data: { label: string; created_at: string; expires_at: string }[] } };
  const mine = made.Response.data.find((x) => x.label === 'e2e script');
  assert.equal(Date.parse(mine!.expires_at) - Date.parse(mine!.created_at), 30 * 86_400_000, 'the token lasts the 30 days chosen');
  const listed = await fetch(`${d.base}/api/registered${home}/`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(listed.status, 200, 'the new token lists the home, as the curl line does');
  const davUrl = await page.locator('#dav-url').innerText();
  assert.equal(davUrl, `${d.base}/dav${home}/`);
  const davListed = await fetch(davUrl, { method: 'PROPFIND', headers: { depth: '1', authorization: `Basic ${Buffer.from(`${d.user}:${token}`).toString('base64')}` } });
  assert.equal(davListed.status, 207, 'the WebDAV address answers the user name with the new token as password');
  assert.match(await davListed.text(), /campaign-2026/);
  await page.getByRole('cell', { name: 'e2e script', exact: true }).waitFor();
  await check(page, 'api-access');

  // Revoking the token on the page: it leaves the list, and the API refuses it at once.
  await page.getByRole('button', { name: 'Revoke the token e2e script' }).click();
  await page.getByRole('cell', { name: 'e2e script', exact: true }).waitFor({ state: 'detached' });
  const refusedToken = await fetch(`${d.base}/api/registered${home}/`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(refusedToken.status, 401, 'the revoked token is refused');
  assert.match(await refusedToken.text(), /"errors":\[\{/, 'in the JSON envelope');

  // An S3 key, where the server runs an S3 listener: the endpoint named, the secret shown once
  // as the two export lines, listed without it, revoked. Without one, no S3 keys are offered.
  if (d.s3Endpoint === undefined) {
    assert.equal(await page.getByRole('heading', { name: 'S3 keys' }).count(), 0, 'no S3 keys section without an S3 listener');
  } else {
    assert.equal(await page.locator('#s3-endpoint').innerText(), d.s3Endpoint);
    await page.getByLabel('Name of the key (optional)').fill('e2e s3');
    await page.getByRole('button', { name: 'Create an S3 key' }).click();
    const exportLines = await page.locator('#s3-exports').innerText();
    const s3KeyId = /^export AWS_ACCESS_KEY_ID=(LK[A-Z2-7]{18})\nexport AWS_SECRET_ACCESS_KEY=[A-Za-z0-9_-]{40}$/.exec(exportLines.trim())?.[1];
    assert.ok(s3KeyId, exportLines);
    await page.getByRole('cell', { name: s3KeyId, exact: true }).waitFor();
    await page.getByRole('button', { name: `Revoke the S3 key ${s3KeyId}` }).click();
    await page.getByRole('cell', { name: s3KeyId, exact: true }).waitFor({ state: 'detached' });
  }

  // Dark mode: the main pages once more with prefers-color-scheme: dark, photographed and
  // checked by axe-core there (its colour-contrast rule included).
  await page.emulateMedia({ colorScheme: 'dark' });
  // Each page, and a heading that only it has (so the previous page's cannot satisfy the wait).
  const dark: [name: string, hash: string, heading: string][] = [
    ['files-dark', `#/browse${home}`, 'Your files'],
    ['collection-dark', `#/browse${home}/campaign-2026`, 'campaign-2026'],
    ['details-collection-dark', `#/item${home}/campaign-2026`, 'Who has access'],
    ['details-dark', `#/item${home}/ctd-profile-final.bin`, 'ctd-profile-final.bin'],
    ['transfers-dark', '#/transfers', 'Transfers'],
    ['shared-with-me-dark', '#/shared', 'Shared with me'],
    ['api-access-dark', '#/api', 'API access'],
  ];
  for (const [name, hash, heading] of dark) {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    assert.equal(await page.evaluate('getComputedStyle(document.body).backgroundColor'), 'rgb(16, 22, 29)', `${name}: the dark palette applies`);
    await check(page, name);
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // Signing out ends the session on the server.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByText('You signed out.').waitFor();
  assert.equal(await page.evaluate('fetch("/auth/session").then((r) => r.status)'), 401);
  await check(page, 'signed-out');
  await page.emulateMedia({ colorScheme: 'dark' });
  await check(page, 'signed-out-dark');
  await context.close();

  assert.deepEqual(problems, [], 'no script error and nothing the CSP refused');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}

/** Signs in from the app's sign-in page (no checks); resolves on the user's files. */
export async function signIn(page: Page, d: Pick<Deployment, 'base' | 'user' | 'password'>): Promise<void> {
  await page.goto(`${d.base}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill(d.user);
  await page.getByLabel('Password').fill(d.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const files = page.getByRole('heading', { level: 1, name: 'Your files' });
  const allow = page.getByRole('button', { name: 'Allow' });
  await files.or(allow).waitFor();
  if (await allow.isVisible()) await allow.click();
  await files.waitFor();
}

/**
 * An upload interrupted by a page reload: after it, the app lists the unfinished upload with
 * what the server kept, the user picks the same file again, and it goes on from there.
 */
export async function runReloadScenario(browser: Browser, d: Deployment): Promise<void> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signIn(page, d);
  const path = join(d.dir, 'resume-me.bin');
  const sha = await generateFile(path, 48 * MIB);
  let reloaded = false;
  d.relay.triggers.push({
    at: d.relay.sent + 24 * MIB,
    // NOTE: the upload's connection stays held until the reload has taken the page away.
    action: async () => {
      void page.reload();
      reloaded = true;
      await new Promise((r) => setTimeout(r, 2000));
    },
  });
  // What the page asked of the uploads endpoint, so that a failure says where it stopped.
  const requests: string[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/api/uploads')) requests.push(`${r.request().method()} ${r.status()}`);
  });
  page.on('requestfailed', (r) => {
    if (r.url().includes('/api/uploads')) requests.push(`${r.method()} failed (${r.failure()?.errorText ?? '?'})`);
  });
  await page.getByLabel('Upload files').setInputFiles(path);
  // After the reload no panel covers the listing: a chip in the header points to Transfers.
  const unfinished = page.getByRole('region', { name: 'Unfinished uploads' });
  await page.getByRole('link', { name: '1 unfinished upload' }).click({ timeout: 60_000 }).then(() => unfinished.waitFor()).catch(async (err: unknown) => {
    await page.screenshot({ path: join(d.shots, 'reload-failure.png') }).catch(() => {});
    const shown = await page.locator('body').innerText({ timeout: 1000 }).catch(() => '?');
    throw new Error(`no "Unfinished uploads" after the reload (reloaded: ${reloaded}, ${d.relay.sent} bytes through the relay); `
      + `the uploads endpoint answered: ${requests.join(', ') || 'nothing'}; the page shows: ${shown.replace(/\s+/g, ' ').slice(0, 500)}`, { cause: err });
  });
  assert.ok(reloaded);
  assert.equal(await page.getByRole('complementary', { name: 'Uploads in progress' }).count(), 0, 'no panel for uploads no page sends');
  const text = await unfinished.innerText();
  assert.match(text, /resume-me\.bin/);
  assert.doesNotMatch(text, /\(0 bytes of/, `the server kept what arrived before the reload: ${text}`);
  await page.getByLabel('Choose the files again').setInputFiles(path);
  await page.getByRole('link', { name: '1 of 1 upload done' }).click({ timeout: 60_000 });
  const row = page.locator('li.transfer').filter({ hasText: 'resume-me.bin' });
  assert.match(await row.innerText(), /resumed at \d/, 'it went on where it stopped');
  await row.getByText(`sha2:${sha}`).waitFor({ timeout: 15_000 });
  await context.close();
}

/** A request to the API from inside the page, as the app makes it: the session cookie and its CSRF token. */
async function inPage(page: Page, method: string, url: string, body?: string | Record<string, unknown>): Promise<{ status: number; text: string }> {
  return page.evaluate(async ({ method, url, body }) => {
    const session = (await (await fetch('/auth/session', { headers: { Accept: 'application/json' } })).json()) as { Response: { data: { csrf_token: string } } };
    const headers: Record<string, string> = { Accept: 'application/json', 'X-CSRF-Token': session.Response.data.csrf_token };
    if (body !== undefined) headers['Content-Type'] = typeof body === 'string' ? 'application/octet-stream' : 'application/json';
    const res = await fetch(url, { method, headers, body: typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  }, { method, url, body });
}

/** The checksum of each data object of a collection's listing, by name. */
async function checksums(page: Page, path: string): Promise<Record<string, string | null>> {
  const listed = await inPage(page, 'GET', `/api/registered${path}/`);
  assert.equal(listed.status, 200, `${path} is listed: ${listed.text}`);
  const records = (JSON.parse(listed.text) as { Response: { data: Record<string, { metadata: { checksum: string | null; object_type: string } }>[] } }).Response.data;
  return Object.fromEntries(records.map((r) => Object.entries(r)[0]!).filter(([, v]) => v.metadata.object_type === 'dataobject').map(([name, v]) => [name, v.metadata.checksum]));
}

/**
 * Moving and copying in the web app, and a collection as one download: the user moves a file
 * into a sub-collection with a row's "Move to…" dialog, is asked to replace a file of the same
 * name there and does, copies a collection from its details page (the copy has the same
 * checksums) and is told a collection of that name exists the second time, drags a row onto a
 * collection's row to move it there (and replaces on request), downloads a collection as ZIP
 * by its plain link, and finds the public archive of a collection it publishes. The dialogs are checked by axe-core and photographed at
 * both widths, light and dark.
 */
export async function runMoveCopyScenario(t: TestContext, browser: Browser, d: Deployment): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const home = `/${d.zone}/home/${d.user}`;
  const base = `${home}/sorting`;
  const visited: string[] = [];
  const check = pageCheck(d.shots, visited);
  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await signIn(page, d);

  // What the user has: a collection with two files, a collection of two files, and a
  // sub-collection that already has a file of one of the names.
  for (const path of [base, `${base}/inbox`, `${base}/survey`]) {
    const created = await inPage(page, 'POST', '/api/registered', { path });
    assert.ok(created.status < 300, `created ${path}: ${created.text}`);
  }
  const files: Record<string, string> = {
    'notes.txt': 'notes to be moved\n', 'log.csv': 'time,value\n1,2\n', 'inbox/log.csv': 'an older log\n',
    'survey/site-a.csv': 'depth,temp\n1,12.5\n', 'survey/site-b.csv': 'depth,temp\n2,11.0\n',
  };
  for (const [name, content] of Object.entries(files)) {
    const uploaded = await inPage(page, 'PUT', `/api/registered${base}/${name}`, content);
    assert.ok(uploaded.status < 300, `uploaded ${name}: ${uploaded.text}`);
  }
  const sha = (text: string) => `sha2:${createHash('sha256').update(text).digest('base64')}`;
  const exists = async (path: string) => (await inPage(page, 'GET', `/api/registered${path}`)).status === 200;

  // Move by a row's menu, into a sub-collection picked in the dialog.
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await page.getByRole('link', { name: 'notes.txt', exact: true }).waitFor();
  assert.deepEqual(await tableProblems(page), [], 'the listing with its menus fits at desktop width');
  await page.getByRole('button', { name: 'More actions for notes.txt' }).click();
  await page.getByRole('button', { name: 'Move to…' }).waitFor();
  await check(page, 'row-menu');
  // NOTE: the menu closes when the window is resized, as the check does.
  await page.getByRole('button', { name: 'More actions for notes.txt' }).click();
  await page.getByRole('button', { name: 'Move to…' }).click();
  const move = page.getByRole('dialog', { name: 'Move notes.txt' });
  await move.getByRole('button', { name: 'Open inbox' }).waitFor();
  await check(page, 'move-dialog');
  await move.getByRole('button', { name: 'Open inbox' }).click();
  await move.getByText(`${base}/inbox`, { exact: true }).waitFor();
  await move.getByText('No collections in here.').waitFor();
  await move.getByRole('button', { name: 'Move here' }).click();
  const moved = page.getByRole('status').filter({ hasText: 'Moved notes.txt to inbox.' });
  await moved.waitFor();
  assert.equal(await moved.getByRole('link', { name: 'inbox' }).getAttribute('href'), `#/browse${base}/inbox`, 'the message links to where it went');
  await page.locator('tbody').getByRole('link', { name: 'notes.txt', exact: true }).waitFor({ state: 'detached' });
  assert.equal(await exists(`${base}/notes.txt`), false, 'it left the collection');
  assert.equal((await checksums(page, `${base}/inbox`))['notes.txt'], sha(files['notes.txt']!), 'it is in inbox, whole');

  // A name taken there: the dialog offers to replace a data object, and replacing moves it.
  await page.getByRole('button', { name: 'More actions for log.csv' }).click();
  await page.getByRole('button', { name: 'Move to…' }).click();
  const again = page.getByRole('dialog', { name: 'Move log.csv' });
  await again.getByRole('button', { name: 'Open inbox' }).click();
  await again.getByText('No collections in here.').waitFor();
  await again.getByRole('button', { name: 'Move here' }).click();
  await again.getByText('already exists in inbox').waitFor();
  assert.equal((await checksums(page, `${base}/inbox`))['log.csv'], sha(files['inbox/log.csv']!), 'nothing replaced before the user says so');
  await check(page, 'move-conflict');
  await again.getByRole('button', { name: 'Replace' }).click();
  await page.getByRole('status').filter({ hasText: 'Moved log.csv to inbox.' }).waitFor();
  assert.equal(await exists(`${base}/log.csv`), false, 'the moved file left the collection');
  assert.equal((await checksums(page, `${base}/inbox`))['log.csv'], sha(files['log.csv']!), 'the file in inbox is the moved one');

  // Copy a collection from its details page: the copy has the same checksums.
  await page.evaluate(`location.hash = '#/item${base}/survey'`);
  await page.getByRole('heading', { level: 1, name: 'survey' }).waitFor();
  await page.getByRole('button', { name: 'Copy to…' }).click();
  const copy = page.getByRole('dialog', { name: 'Copy survey' });
  await copy.getByRole('button', { name: 'Open inbox' }).waitFor();
  assert.ok(await copy.getByRole('button', { name: 'Open survey' }).isDisabled(), 'a collection is not copied into itself');
  await check(page, 'copy-dialog');
  await copy.getByRole('button', { name: 'Open inbox' }).click();
  await copy.getByText('No collections in here.').waitFor();
  await copy.getByRole('button', { name: 'Copy here' }).click();
  await page.getByRole('status').filter({ hasText: 'Copied survey to inbox.' }).waitFor();
  const original = await checksums(page, `${base}/survey`);
  assert.deepEqual(Object.keys(original).sort(), ['site-a.csv', 'site-b.csv']);
  assert.deepEqual(await checksums(page, `${base}/inbox/survey`), original, 'the copy has the same files and checksums');
  // The second time the name is taken: a collection is never replaced, the dialog says so.
  await page.getByRole('button', { name: 'Copy to…' }).click();
  await copy.getByRole('button', { name: 'Open inbox' }).click();
  await copy.getByRole('button', { name: 'Open survey' }).waitFor();
  await copy.getByRole('button', { name: 'Copy here' }).click();
  await copy.getByText(/A collection or data object named survey already exists in inbox/).waitFor();
  assert.equal(await copy.getByRole('button', { name: 'Replace' }).count(), 0, 'no Replace for a collection');
  await copy.getByRole('button', { name: 'Cancel' }).click();

  // A collection as one download: a plain link the session cookie authenticates.
  const zipLink = page.getByRole('link', { name: 'Download as ZIP' });
  assert.equal(await zipLink.getAttribute('href'), `/api/registered${base}/survey?download=zip`);
  assert.equal(await zipLink.getAttribute('download'), 'survey.zip');
  assert.equal(await page.getByRole('link', { name: 'Download as BagIt' }).getAttribute('href'), `/api/registered${base}/survey?download=bag`);
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await page.getByRole('button', { name: 'More actions for survey' }).click();
  const rowZip = page.getByRole('link', { name: 'Download as ZIP' });
  const href = await rowZip.getAttribute('href');
  assert.equal(href, `/api/registered${base}/survey?download=zip`);
  const head = await page.evaluate(async (url) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), bytes: [...new Uint8Array(await res.arrayBuffer()).slice(0, 4)] };
  }, href);
  assert.equal(head.status, 200);
  assert.equal(head.type, 'application/zip');
  assert.deepEqual(head.bytes, [0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (PK\\x03\\x04)');
  const download = page.waitForEvent('download');
  await rowZip.click();
  const zip = await readFile(await (await download).path());
  assert.equal(zip.subarray(0, 4).toString('latin1'), 'PK\x03\x04', 'the link downloads the ZIP');
  assert.ok(zip.includes('survey/site-a.csv'), 'with the collection as its top folder');

  // Dragging a row onto a collection's row moves it there; a name taken there is asked about.
  const draft = { first: 'a first draft\n', second: 'the second draft\n' };
  assert.ok((await inPage(page, 'PUT', `/api/registered${base}/draft.txt`, draft.first)).status < 300);
  const reopen = async () => {
    await page.evaluate(`location.hash = '#/browse${home}'`);
    await page.getByRole('link', { name: 'sorting (collection)' }).click();
    await page.getByRole('heading', { level: 1, name: 'sorting' }).waitFor();
  };
  await reopen();
  const row = (name: string) => page.locator('tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });
  await row('draft.txt').dragTo(row('survey (collection)'));
  await page.getByRole('status').filter({ hasText: 'Moved draft.txt to survey.' }).waitFor();
  assert.equal(await exists(`${base}/draft.txt`), false, 'the dragged file left the collection');
  assert.equal((await checksums(page, `${base}/survey`))['draft.txt'], sha(draft.first), 'it is in the collection it was dropped on');
  assert.ok((await inPage(page, 'PUT', `/api/registered${base}/draft.txt`, draft.second)).status < 300);
  await reopen();
  await row('draft.txt').dragTo(row('survey (collection)'));
  const taken = page.getByRole('dialog', { name: 'draft.txt is already there' });
  await taken.waitFor();
  assert.equal((await checksums(page, `${base}/survey`))['draft.txt'], sha(draft.first), 'nothing replaced before the user says so');
  await check(page, 'drop-conflict');
  await taken.getByRole('button', { name: 'Replace' }).click();
  await page.getByRole('status').filter({ hasText: 'Moved draft.txt to survey.' }).waitFor();
  assert.equal((await checksums(page, `${base}/survey`))['draft.txt'], sha(draft.second), 'the dropped file replaced the one there');
  assert.equal(await exists(`${base}/draft.txt`), false);

  // A published collection: its public URL's archive next to it, for anyone, without a session.
  await page.evaluate(`location.hash = '#/item${base}/inbox'`);
  await page.getByRole('heading', { level: 1, name: 'inbox' }).waitFor();
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  const confirm = page.getByRole('dialog', { name: 'Publish inbox?' });
  await confirm.getByText('Anyone on the internet can then read and download inbox and everything in it').waitFor();
  assert.equal((JSON.parse((await inPage(page, 'GET', `/api/publish${base}/inbox`)).text) as { Response: { data: { published: boolean } } }).Response.data.published, false, 'nothing published before the user confirms');
  await check(page, 'publish-confirm');
  await confirm.getByRole('button', { name: 'Publish for everyone' }).click();
  const publishing = page.getByRole('region', { name: 'Publishing' });
  const publicZip = publishing.getByRole('link', { name: 'Download as ZIP' });
  await publicZip.waitFor();
  const publicUrl = await publishing.locator('p.break a').getAttribute('href');
  assert.ok(publicUrl, 'the public URL is shown');
  assert.equal(await publicZip.getAttribute('href'), `${publicUrl}?download=zip`);
  const anyone = await fetch(new URL(`${publicUrl}?download=zip`, d.base));
  assert.equal(anyone.status, 200, 'the public archive needs no session');
  assert.equal(Buffer.from(await anyone.arrayBuffer()).subarray(0, 4).toString('latin1'), 'PK\x03\x04');
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await page.getByRole('button', { name: 'More actions for inbox' }).waitFor();

  // The dialogs in dark mode.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByRole('button', { name: 'More actions for inbox' }).click();
  await page.getByRole('button', { name: 'Move to…' }).click();
  await page.getByRole('dialog', { name: 'Move inbox' }).getByRole('button', { name: 'Open survey' }).waitFor();
  await check(page, 'move-dialog-dark');
  await page.getByRole('dialog', { name: 'Move inbox' }).getByRole('button', { name: 'Cancel' }).click();
  // The focus goes back to what opened the dialog: the row's menu button, its item having gone with the menu.
  const opener = page.getByRole('button', { name: 'More actions for inbox' });
  let focused = false;
  for (let i = 0; i < 50 && !focused; i++) {
    focused = await opener.evaluate((el) => el === el.ownerDocument.activeElement);
    if (!focused) await page.waitForTimeout(100);
  }
  assert.ok(focused, 'the focus is back on the menu button that opened the dialog');
  await page.getByRole('button', { name: 'More actions for survey' }).click();
  await page.getByRole('button', { name: 'Copy to…' }).click();
  await page.getByRole('dialog', { name: 'Copy survey' }).getByRole('button', { name: 'Open inbox' }).waitFor();
  await check(page, 'copy-dialog-dark');
  await context.close();

  assert.deepEqual(problems, [], 'no script error');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}

/**
 * The trash in the web app: the user moves a file to the trash from a row's menu, sees the
 * toast and undoes it (the file is back, whole), trashes a collection from its details page
 * and two files, finds them on the Trash page with where they stood, when and their size,
 * restores one to its place and one whose place a new file took under another name (the new
 * file untouched), and empties the trash after confirming. The toast, the Trash page and its
 * dialogs are checked by axe-core and photographed at both widths, light and dark.
 */
export async function runTrashScenario(t: TestContext, browser: Browser, d: Deployment): Promise<void> {
  const { base, check, context, page, problems, visited } = await signedInWithCollection(browser, d, 'cleanup');
  const drafts = await inPage(page, 'POST', '/api/registered', { path: `${base}/drafts` });
  assert.ok(drafts.status < 300, `created ${base}/drafts: ${drafts.text}`);
  const files: Record<string, string> = {
    'old.csv': 'a,b\n1,2\n', 'report.txt': 'the first report\n', 'keep.csv': 'kept\n',
    'drafts/one.txt': 'x'.repeat(3000), 'drafts/two.txt': 'y'.repeat(2000),
  };
  for (const [name, content] of Object.entries(files)) {
    const uploaded = await inPage(page, 'PUT', `/api/registered${base}/${name}`, content);
    assert.ok(uploaded.status < 300, `uploaded ${name}: ${uploaded.text}`);
  }
  const sha = (text: string) => `sha2:${createHash('sha256').update(text).digest('base64')}`;
  const exists = async (path: string) => (await inPage(page, 'GET', `/api/registered${path}`)).status === 200;
  const rowLink = (name: string) => page.locator('tbody').getByRole('link', { name, exact: true });
  const toast = page.locator('.toast-slot');

  // Move to trash from a row's menu: the row goes, the toast says so and undoes it.
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await rowLink('old.csv').waitFor();
  await page.getByRole('button', { name: 'More actions for old.csv' }).click();
  await page.getByRole('button', { name: 'Move to trash' }).click();
  await toast.getByText('old.csv moved to the trash.').waitFor();
  await rowLink('old.csv').waitFor({ state: 'detached' });
  assert.equal(await exists(`${base}/old.csv`), false, 'it left its collection');
  assert.equal(await toast.getByRole('button', { name: 'Undo' }).evaluate((el) => el === el.ownerDocument.activeElement), true, 'the focus, whose row is gone, goes to Undo');
  await check(page, 'trash-toast');
  await toast.getByRole('button', { name: 'Undo' }).click();
  await toast.getByText('Restored old.csv.').waitFor();
  await rowLink('old.csv').waitFor();
  assert.equal((await checksums(page, base))['old.csv'], sha(files['old.csv']!), 'undo brought it back whole');

  // A collection from its details page; then two files from their rows.
  await page.evaluate(`location.hash = '#/item${base}/drafts'`);
  await page.getByRole('heading', { level: 1, name: 'drafts' }).waitFor();
  await page.getByRole('button', { name: 'Move to trash' }).click();
  await toast.getByText('drafts moved to the trash.').waitFor();
  await page.getByRole('heading', { level: 1, name: 'cleanup' }).waitFor();
  assert.equal(await exists(`${base}/drafts/one.txt`), false, 'the collection went with what is in it');
  for (const name of ['old.csv', 'report.txt']) {
    await page.getByRole('button', { name: `More actions for ${name}` }).click();
    await page.getByRole('button', { name: 'Move to trash' }).click();
    await toast.getByText(`${name} moved to the trash.`).waitFor();
    await rowLink(name).waitFor({ state: 'detached' });
  }
  // A new report takes the old one's place.
  assert.ok((await inPage(page, 'PUT', `/api/registered${base}/report.txt`, 'the second report\n')).status < 300);

  // The Trash page: newest first, where each stood, when, how big.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
  await page.getByRole('heading', { level: 1, name: 'Trash' }).waitFor();
  const rows = page.locator('.trash-list tbody tr');
  await rows.first().waitFor();
  const names = await rows.locator('.entry-name').allInnerTexts();
  assert.deepEqual(names.map((n) => n.replace(/\s*\(collection\)$/, '').trim()), ['report.txt', 'old.csv', 'drafts'], 'newest first');
  const row = (name: string) => rows.filter({ has: page.getByTitle(name, { exact: true }) });
  assert.match(await row('drafts').innerText(), /from Your files \/ cleanup/);
  assert.match(await row('drafts').locator('td.col-size').innerText(), /^4\.9 KiB$/, 'a collection\'s size is what is in it');
  assert.match(await row('old.csv').locator('td.col-size').innerText(), /^8 bytes$/);
  assert.match(await row('old.csv').locator('td.col-trashed').innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d\s+deleted for good on \d{4}-\d\d-\d\d$/);
  const cutOff = `[...document.querySelectorAll('.trash-list td')].filter((td) => td.offsetParent && td.scrollWidth > td.clientWidth).map((td) => td.className + ': ' + td.innerText)`;
  assert.deepEqual(await page.evaluate(cutOff), [], 'every cell of the trash shows whole at desktop width');
  await page.setViewportSize(PHONE);
  assert.deepEqual(await page.evaluate(cutOff), [], 'and at phone width');
  await page.setViewportSize(DESKTOP);
  await check(page, 'trash');

  // Restore to where it was.
  await row('old.csv').getByRole('button', { name: 'Restore old.csv' }).click();
  await page.getByRole('status').filter({ hasText: 'Restored old.csv to cleanup.' }).waitFor();
  await row('old.csv').waitFor({ state: 'detached' });
  assert.equal((await checksums(page, base))['old.csv'], sha(files['old.csv']!), 'back where it was, whole');

  // Its place taken: restored beside it under another name, never over it.
  await row('report.txt').getByRole('button', { name: 'Restore report.txt' }).click();
  const restoreAs = page.getByRole('dialog', { name: 'Restore report.txt under another name' });
  await restoreAs.waitFor();
  assert.equal(await restoreAs.getByLabel('Name').inputValue(), 'report (2).txt');
  await check(page, 'trash-restore-as');
  await restoreAs.getByRole('button', { name: 'Restore' }).click();
  await page.getByRole('status').filter({ hasText: 'Restored report (2).txt to cleanup.' }).waitFor();
  assert.equal(await toast.getByText('report.txt moved to the trash.').count(), 0, 'no Undo left for what was restored');
  const now = await checksums(page, base);
  assert.equal(now['report (2).txt'], sha(files['report.txt']!), 'the trashed report, under its new name');
  assert.equal(now['report.txt'], sha('the second report\n'), 'the new report untouched');

  // Dark mode; then emptying, after a confirmation.
  await page.emulateMedia({ colorScheme: 'dark' });
  await check(page, 'trash-dark');
  await page.getByRole('button', { name: 'Empty the trash' }).click();
  const confirm = page.getByRole('dialog', { name: 'Empty the trash?' });
  await confirm.getByText('The 1 item in your trash (4.9 KiB) will be deleted for good').waitFor();
  await check(page, 'trash-empty-dark');
  await confirm.getByRole('button', { name: 'Delete for good' }).click();
  await page.getByRole('status').filter({ hasText: 'Emptied the trash: 1 item deleted for good.' }).waitFor();
  await page.getByText('The trash is empty.').waitFor();
  assert.equal(JSON.parse((await inPage(page, 'GET', '/api/trash')).text).Response.data.length, 0, 'the API agrees');
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await rowLink('keep.csv').waitFor();
  await page.getByRole('button', { name: 'More actions for keep.csv' }).click();
  await page.getByRole('button', { name: 'Move to trash' }).click();
  await toast.getByText('keep.csv moved to the trash.').waitFor();
  await check(page, 'trash-toast-dark');
  await context.close();

  assert.deepEqual(problems, [], 'no script error');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}

/**
 * Published data and PID pages for people: anyone (a browser context without a session)
 * opening a published collection's URL under /api/public gets a page listing it, goes into a
 * sub-collection and back by the breadcrumbs, and downloads a file from it; a published data
 * object's URL is a card with its download; what is not published is a 404 page, and curl
 * still gets JSON. The PID landing page of an object that is not public offers "Sign in to
 * download", which comes back to the landing page signed in, now offering the download. The
 * pages are checked by axe-core and photographed at both widths, light and dark.
 */
export async function runPublicScenario(t: TestContext, browser: Browser, d: Deployment): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const home = `/${d.zone}/home/${d.user}`;
  const base = `${home}/published`;
  const visited: string[] = [];
  const check = pageCheck(d.shots, visited);
  const problems: string[] = [];
  const owner = await browser.newContext({ viewport: DESKTOP });
  const page = await owner.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await signIn(page, d);
  for (const path of [base, `${base}/casts`]) assert.ok((await inPage(page, 'POST', '/api/registered', { path })).status < 300);
  const files: Record<string, string> = { 'notes.txt': 'calm sea, 3 m swell\n', 'stations.csv': 'station,lat,lon\n1,54.1,7.9\n', 'casts/cast-01.csv': 'depth,temp\n5,11.2\n' };
  for (const [name, content] of Object.entries(files)) assert.ok((await inPage(page, 'PUT', `/api/registered${base}/${name}`, content)).status < 300);
  const published = await inPage(page, 'PUT', `/api/publish${base}`);
  assert.equal(published.status, 200, published.text);
  const secret = await inPage(page, 'PUT', `/api/registered${home}/private.csv?pid_await=true`, 'not for everyone\n');
  assert.ok(secret.status < 300, secret.text);
  const handle = (JSON.parse(secret.text) as { Response: { data: { PID: string | null } } }).Response.data.PID;
  assert.ok(handle, `the rules gave private.csv a PID: ${secret.text}`);

  // Anyone, without a session.
  const anyone = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const visitor = await anyone.newPage();
  visitor.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const opened = await visitor.goto(`${d.base}/api/public${base}`);
  assert.equal(opened?.status(), 200);
  await visitor.getByRole('heading', { level: 1, name: 'published' }).waitFor();
  await visitor.getByText(`Collection published by ${d.user}`).waitFor();
  const listed = visitor.locator('tbody tr');
  await listed.first().waitFor();
  assert.deepEqual((await listed.locator('.entry-name').allInnerTexts()).map((n) => n.replace(/\s*\((collection|download)\)$/, '').trim()).sort(), ['casts', 'notes.txt', 'stations.csv']);
  assert.equal(await visitor.getByRole('link', { name: 'Download as ZIP' }).getAttribute('href'), `${d.base}/api/public${base}?download=zip`);
  await check(visitor, 'public-collection');
  await visitor.getByRole('link', { name: 'casts (collection)' }).click();
  await visitor.getByRole('heading', { level: 1, name: 'casts' }).waitFor();
  await visitor.getByRole('link', { name: 'cast-01.csv (download)' }).waitFor();
  await visitor.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'published' }).click();
  await visitor.getByRole('heading', { level: 1, name: 'published' }).waitFor();
  const download = visitor.waitForEvent('download');
  await visitor.getByRole('link', { name: 'notes.txt (download)' }).click();
  assert.equal(await readFile(await (await download).path(), 'utf8'), files['notes.txt'], 'the file, whole');

  // A published data object: a card with its download.
  await visitor.goto(`${d.base}/api/public${base}/stations.csv`);
  await visitor.getByRole('heading', { level: 1, name: 'stations.csv' }).waitFor();
  await visitor.getByText(sha256Text(files['stations.csv']!)).waitFor();
  assert.equal(await visitor.getByRole('link', { name: 'Download stations.csv' }).getAttribute('href'), `${d.base}/api/public${base}/stations.csv?download=true`);
  await check(visitor, 'public-file');
  // What is not published: a page saying so, with the API's status; curl still gets JSON.
  const hidden = await visitor.goto(`${d.base}/api/public${home}/private.csv`);
  assert.equal(hidden?.status(), 404);
  await visitor.getByRole('heading', { level: 1, name: 'Nothing is published here' }).waitFor();
  await check(visitor, 'public-missing');
  const curl = await fetch(`${d.base}/api/public${base}/stations.csv`, { headers: { accept: '*/*' } });
  assert.match(curl.headers.get('content-type') ?? '', /^application\/json/);
  await visitor.emulateMedia({ colorScheme: 'dark' });
  await visitor.goto(`${d.base}/api/public${base}`);
  await visitor.getByRole('link', { name: 'casts (collection)' }).waitFor();
  await check(visitor, 'public-collection-dark');
  await visitor.emulateMedia({ colorScheme: 'light' });

  // The PID of what is not public: sign in to download, back on the landing page.
  await visitor.goto(`${d.base}/api/pids/${handle}`);
  await visitor.getByText('This data object is not public. If you have access to it, sign in to download it.').waitFor();
  assert.equal(await visitor.getByRole('link', { name: /^Download/ }).count(), 0, 'no download offered before signing in');
  await check(visitor, 'pid-sign-in');
  await visitor.getByRole('link', { name: 'Sign in to download' }).click();
  await visitor.getByLabel('User name').fill(d.user);
  await visitor.getByLabel('Password').fill(d.password);
  await visitor.getByRole('button', { name: 'Sign in' }).click();
  const offered = visitor.getByRole('link', { name: 'Download private.csv' });
  const allow = visitor.getByRole('button', { name: 'Allow' });
  await offered.or(allow).waitFor();
  if (await allow.isVisible()) await allow.click();
  await offered.waitFor();
  assert.equal(new URL(visitor.url()).pathname, `/api/pids/${handle}`, 'back on the landing page');
  const got = visitor.waitForEvent('download');
  await offered.click();
  assert.equal(await readFile(await (await got).path(), 'utf8'), 'not for everyone\n');
  await check(visitor, 'pid-signed-in');
  await anyone.close();
  await owner.close();
  assert.deepEqual(problems, [], 'no script error');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}

function sha256Text(text: string): string {
  return `sha2:${createHash('sha256').update(text).digest('base64')}`;
}

/**
 * A fresh browser context at desktop width, signed in as `d.user`, with a new collection
 * `name` in the home: the page, its checks (axe-core, screenshots) and the page errors seen.
 */
async function signedInWithCollection(browser: Browser, d: Deployment, name: string) {
  await mkdir(d.shots, { recursive: true });
  const base = `/${d.zone}/home/${d.user}/${name}`;
  const visited: string[] = [];
  const check = pageCheck(d.shots, visited);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await signIn(page, d);
  assert.ok((await inPage(page, 'POST', '/api/registered', { path: base })).status < 300);
  return { base, check, context, page, problems, visited };
}

/**
 * The server goes away under an open page and a running upload, and comes back: the folder
 * keeps its last listing with "Reconnecting…" (never "empty"), the upload says it waits for the
 * server (no rate, no time left), and once the server is back both go on by themselves: the
 * notice leaves and the upload finishes, whole.
 */
export async function runReconnectScenario(t: TestContext, browser: Browser, d: Deployment, outage: { stop: () => Promise<void>; start: () => Promise<void> }): Promise<void> {
  const { base, check, context, page, problems } = await signedInWithCollection(browser, d, 'outage');
  assert.ok((await inPage(page, 'PUT', `/api/registered${base}/kept.csv`, 'a,b\n1,2\n')).status < 300);
  const rowLink = (name: string) => page.locator('tbody').getByRole('link', { name, exact: true });
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await rowLink('kept.csv').waitFor();

  // The server stops (kill -9) once 16 MiB of a 96 MiB upload have gone through.
  const bigPath = join(d.dir, 'outage.bin');
  const bigSha = await generateFile(bigPath, 96 * MIB);
  let stopped: Promise<void> | undefined;
  d.relay.triggers.push({ at: d.relay.sent + 16 * MIB, action: () => (stopped = outage.stop()) });
  await page.getByLabel('Upload files').setInputFiles(bigPath);
  const panel = page.getByRole('complementary', { name: 'Uploads in progress' });
  await panel.getByRole('progressbar', { name: 'Upload of outage.bin' }).waitFor();
  for (let i = 0; !stopped && i < 600; i++) await page.waitForTimeout(100);
  assert.ok(stopped, 'the server was stopped during the upload');
  await stopped;
  t.diagnostic('the server is stopped');

  // Away and back while the server is gone: the folder as last seen, and why nothing changes.
  await page.evaluate(`location.hash = '#/transfers'`);
  await page.getByRole('heading', { level: 1, name: 'Transfers' }).waitFor();
  await page.evaluate(`location.hash = '#/browse${base}'`);
  const reconnecting = page.getByText('Reconnecting…');
  await reconnecting.waitFor({ timeout: 20_000 });
  await rowLink('kept.csv').waitFor();
  assert.equal(await page.getByText('This collection is empty').count(), 0, 'a folder never looks empty for want of the server');
  const row = panel.locator('li.transfer').filter({ hasText: 'outage.bin' });
  await row.getByText('Waiting for the server…').waitFor({ timeout: 30_000 });
  assert.doesNotMatch(await row.innerText(), /left|\/s/, 'no rate and no time left while nothing moves');
  await check(page, 'reconnecting');
  await page.emulateMedia({ colorScheme: 'dark' });
  await check(page, 'reconnecting-dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // The server is back: the notice goes by itself, the upload finishes whole.
  await outage.start();
  t.diagnostic('the server is started again');
  await reconnecting.waitFor({ state: 'detached', timeout: 40_000 });
  await rowLink('kept.csv').waitFor();
  const done = page.getByRole('link', { name: /uploads? done/ });
  await done.waitFor({ timeout: 180_000 });
  await done.click();
  const finished = page.locator('li.transfer').filter({ hasText: 'outage.bin' });
  await finished.getByText('Done', { exact: true }).waitFor();
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await rowLink('outage.bin').waitFor({ timeout: 20_000 });
  assert.equal((await checksums(page, base))['outage.bin'], `sha2:${bigSha}`, 'stored whole');
  assert.deepEqual(problems, []);
  await context.close();
}

/**
 * The uploads panel and Transfers: an open upload this browser never knew (the CLI's, another
 * browser's) is listed under Transfers with its target and age and can be discarded; a paused
 * upload keeps the panel, with Resume in reach (at a phone's width too, where the panel is a
 * sheet along the bottom of the screen); "queued" goes once the uploads are done; Transfers
 * says where each file went and when.
 */
export async function runUploadsPanelScenario(t: TestContext, browser: Browser, d: Deployment): Promise<void> {
  const { base, check, context, page, problems, visited } = await signedInWithCollection(browser, d, 'panel');

  // An upload started elsewhere: created through the API, 100 of its 1,000 bytes sent.
  const created = await page.evaluate(async (path) => {
    const session = (await (await fetch('/auth/session', { headers: { Accept: 'application/json' } })).json()) as { Response: { data: { csrf_token: string } } };
    const csrf = { 'X-CSRF-Token': session.Response.data.csrf_token, 'Tus-Resumable': '1.0.0' };
    const res = await fetch('/api/uploads', { method: 'POST', headers: { ...csrf, 'Upload-Length': '1000', 'Upload-Metadata': `path ${btoa(path)}` } });
    const url = res.headers.get('location')!;
    const patched = await fetch(url, { method: 'PATCH', headers: { ...csrf, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, body: 'x'.repeat(100) });
    return { status: res.status, patched: patched.status, url };
  }, `${base}/from-elsewhere.bin`);
  assert.equal(created.status, 201);
  assert.equal(created.patched, 204);
  await page.reload();
  await page.getByRole('link', { name: /^\d+ unfinished uploads?$/ }).click();
  const region = page.getByRole('region', { name: 'Unfinished uploads' });
  const elsewhere = region.locator('li').filter({ hasText: 'from-elsewhere.bin' });
  await elsewhere.waitFor();
  assert.match(await elsewhere.innerText(), /100 bytes of 1000 bytes sent, into panel, started just now, not from this browser/);
  await check(page, 'transfers-unfinished');
  await elsewhere.getByRole('button', { name: 'Discard the upload of from-elsewhere.bin' }).click();
  await elsewhere.waitFor({ state: 'detached' });
  const listed = await inPage(page, 'GET', '/api/uploads');
  assert.doesNotMatch(listed.text, /from-elsewhere\.bin/, 'discarded on the server');

  // A paused upload keeps the panel and its Resume, at a phone's width too; no red chip.
  const bigPath = join(d.dir, 'paused.bin');
  const bigSha = await generateFile(bigPath, 160 * MIB);
  await page.evaluate(`location.hash = '#/browse${base}'`);
  await page.getByRole('heading', { level: 1, name: 'panel' }).waitFor();
  await page.getByLabel('Upload files').setInputFiles(bigPath);
  const panel = page.getByRole('complementary', { name: 'Uploads in progress' });
  await panel.getByRole('button', { name: 'Pause paused.bin' }).click();
  const resume = panel.getByRole('button', { name: 'Resume paused.bin' });
  await resume.waitFor();
  await page.waitForTimeout(500);
  assert.equal(await panel.count(), 1, 'the panel stays while an upload is paused');
  assert.equal(await page.locator('.upload-chip.trouble').count(), 0, 'a pause is not an error');
  await page.setViewportSize(PHONE);
  await page.evaluate('window.scrollTo(0, 0)');
  await page.waitForTimeout(150);
  const header = await page.locator('header.app-header').boundingBox();
  assert.ok(header && header.height <= 110, `the header leaves the phone's screen to the page: ${header?.height} px`);
  const box = await panel.boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= PHONE.height + 1, `the panel is in sight on a phone: ${JSON.stringify(box)}`);
  await page.screenshot({ path: join(d.shots, 'panel-paused-phone.png') });
  await page.setViewportSize(DESKTOP);
  await resume.click();
  await page.getByRole('link', { name: '1 of 1 upload done' }).waitFor({ timeout: 120_000 });
  assert.equal(await page.getByText(/queued for upload/).count(), 0, '"queued" goes once the uploads are done');

  // Transfers: where it went, and when.
  await page.getByRole('link', { name: '1 of 1 upload done' }).click();
  const row = page.locator('li.transfer').filter({ hasText: 'paused.bin' });
  await row.getByText(`sha2:${bigSha}`).waitFor({ timeout: 15_000 });
  assert.match(await row.innerText(), /into panel · done \d{4}-\d\d-\d\d \d\d:\d\d/);
  assert.equal(await row.getByRole('link', { name: 'panel' }).getAttribute('href'), `#/browse${base}`);
  await check(page, 'transfers-done');
  t.diagnostic(`pages checked: ${visited.join(', ')}`);
  assert.deepEqual(problems, []);
  await context.close();
}
