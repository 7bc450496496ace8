/**
 * Selecting rows and acting on them together in the web app: the user sees which rows are
 * published, shared and linked by their marks; picks rows with a click, Shift+click, Space,
 * Shift+Arrow and Ctrl+A, and clears them with Escape; downloads three of them (a collection
 * among them) as one ZIP, whose members and bytes Python's zipfile reads back; copies them into
 * another collection; moves two where one name is taken (one moves, the other is reported and
 * stays); moves two to the trash and brings both back with one Undo; and is told why when an
 * archive is refused (a row trashed elsewhere meanwhile). The listing with its
 * selection bar and the dialogs are checked by axe-core and photographed at desktop and phone
 * width, light and dark.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { type Deployment, inPage, pageCheck, signIn } from './scenario.ts';

const run = promisify(execFile);
const DESKTOP = { width: 1280, height: 800 };

/** Every member of a ZIP file: its text, or null for a directory. */
const PY_MEMBERS = `
import json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    print(json.dumps({i.filename: (None if i.is_dir() else z.read(i).decode('utf-8')) for i in z.infolist()}))
`;

export async function runBulkScenario(t: TestContext, browser: Browser, d: Pick<Deployment, 'base' | 'user' | 'password' | 'zone' | 'shots' | 'dir'> & { other: string }): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const visited: string[] = [];
  const check = pageCheck(d.shots, visited);
  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await signIn(page, d);

  const base = `/${d.zone}/home/${d.user}/bulk`;
  const api = async (method: string, url: string, body?: string | Record<string, unknown>) => {
    const res = await inPage(page, method, url, body);
    assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
    return res;
  };
  for (const c of [base, `${base}/dest`, `${base}/sub`]) await api('POST', '/api/registered', { path: c });
  const files: Record<string, string> = { 'a.txt': 'alpha\n', 'b.txt': 'bravo\n', 'c.txt': 'charlie\n', 'd.txt': 'delta\n', 'sub/x.txt': 'inside sub\n' };
  for (const [name, text] of Object.entries(files)) await api('PUT', `/api/registered${base}/${name}`, text);
  await api('PUT', `/api/publish${base}/a.txt`);
  await api('PUT', `/api/acl${base}/b.txt`, { principal: d.other, level: 'read' });
  await api('POST', '/api/shares', { path: `${base}/c.txt`, kind: 'read' });
  const names = async (path: string) => (JSON.parse((await api('GET', `/api/registered${path}/`)).text) as { Response: { data: Record<string, unknown>[] } })
    .Response.data.map((r) => Object.keys(r)[0]!).sort();

  await page.evaluate(`location.hash = '#/browse${base}'`);
  const row = (name: string) => page.locator('tbody tr').filter({ has: page.locator(`a.entry-name[title="${name}"]`) });
  await row('d.txt').waitFor();

  // The marks: each row says how far it is open to others, and only those rows.
  await row('a.txt').getByRole('img', { name: 'Published' }).waitFor();
  await row('b.txt').getByRole('img', { name: 'Shared with others' }).waitFor();
  await row('c.txt').getByRole('img', { name: 'Has share links' }).waitFor();
  assert.equal(await row('d.txt').locator('.mark').count(), 0, 'a plain row has no mark');
  assert.equal(await row('a.txt').locator('.mark').count(), 1, 'only the mark that applies');
  assert.equal(await row('a.txt').getByRole('img', { name: 'Published' }).getAttribute('title'), 'Published: anyone on the internet can read it');

  const bar = page.getByRole('region', { name: 'Selected items' });
  const count = async () => (await bar.isVisible()) ? Number((await bar.locator('.selection-count strong').innerText()).trim()) : 0;
  const box = (name: string) => page.getByRole('checkbox', { name: `Select ${name}`, exact: true });
  const picked = async () => (await page.locator('tbody tr.selected .entry-name').allInnerTexts()).map((n) => n.replace(/\s*\(folder\)$/, '').trim());

  // Click, then Shift+click: the range between them (rows in shown order: dest, sub, a, b, c, d).
  await box('a.txt').click();
  assert.equal(await count(), 1);
  await box('c.txt').click({ modifiers: ['Shift'] });
  assert.deepEqual(await picked(), ['a.txt', 'b.txt', 'c.txt'], 'Shift+click picks the range');
  assert.equal(await count(), 3);
  await box('b.txt').click();
  assert.deepEqual(await picked(), ['a.txt', 'c.txt'], 'a click toggles one row');
  await page.keyboard.press('Escape');
  assert.equal(await count(), 0, 'Escape clears the selection');
  assert.equal(await bar.count(), 0, 'no bar without a selection');

  // The keyboard: Space on a row's name toggles it, Shift+Arrow extends, Ctrl+A picks all.
  await row('sub').locator('a.entry-name').focus();
  await page.keyboard.press('Space');
  assert.deepEqual(await picked(), ['sub']);
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  assert.deepEqual(await picked(), ['sub', 'a.txt', 'b.txt'], 'Shift+Arrow extends');
  assert.equal(await box('b.txt').evaluate((el) => el === el.ownerDocument.activeElement), true, 'the focus follows');
  await page.keyboard.press('Control+a');
  assert.equal(await count(), 6, 'Ctrl+A picks every row');
  assert.equal(await page.getByRole('checkbox', { name: 'Select all' }).isChecked(), true);
  await page.keyboard.press('Escape');
  assert.equal(await count(), 0);
  // Keys faster than a frame (a held Shift+Arrow): each one starts from the row the last one
  // moved to, not from where the focus was when the page last drew.
  await row('sub').locator('a.entry-name').focus();
  await page.keyboard.press('Space');
  await page.evaluate(`for (let i = 0; i < 3; i++) document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', shiftKey: true, bubbles: true, cancelable: true }))`);
  assert.deepEqual(await picked(), ['sub', 'a.txt', 'b.txt', 'c.txt'], 'three Shift+Arrows within one frame extend by three rows');
  await page.keyboard.press('Escape');
  assert.equal(await count(), 0);
  await box('d.txt').click();
  await bar.getByRole('button', { name: /^Clear/ }).click();
  assert.equal(await count(), 0, 'Clear empties the selection');
  assert.equal(await page.getByRole('checkbox', { name: 'Select all' }).evaluate((el) => el === el.ownerDocument.activeElement), true, 'and the focus stays in the table');
  await row('sub').locator('a.entry-name').focus();
  await page.keyboard.press('Space');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  assert.equal(await count(), 3);
  await check(page, 'bulk-selected');

  // One ZIP of the three, in one request: every member and its bytes.
  const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Download as ZIP' }).click()]);
  assert.equal(download.suggestedFilename(), 'bulk.zip');
  const zip = join(d.dir, 'bulk.zip');
  await download.saveAs(zip);
  const members = JSON.parse((await run('python3', ['-c', PY_MEMBERS, zip])).stdout) as Record<string, string | null>;
  assert.deepEqual(members, {
    'bulk/': null, 'bulk/sub/': null, 'bulk/sub/x.txt': files['sub/x.txt'], 'bulk/a.txt': files['a.txt'], 'bulk/b.txt': files['b.txt'],
  });

  // Copy the three into dest.
  await bar.getByRole('button', { name: 'Copy…' }).click();
  const copy = page.getByRole('dialog', { name: 'Copy 3 items' });
  await copy.getByRole('button', { name: 'Open dest' }).click();
  await copy.locator('.picker-here strong').filter({ hasText: /^dest$/ }).waitFor();
  assert.equal(await copy.getByRole('button', { name: 'Open sub' }).count(), 0, 'dest holds no collection yet');
  await check(page, 'bulk-copy-dialog');
  await copy.getByRole('button', { name: 'Copy here' }).click();
  await page.getByText('3 items copied.').waitFor();
  assert.equal(await count(), 0, 'the selection is cleared once done');
  assert.deepEqual(await names(`${base}/dest`), ['a.txt', 'b.txt', 'sub']);

  // Move two where one name is taken: one moves, the other is reported and stays.
  await box('a.txt').click();
  await box('c.txt').click();
  await bar.getByRole('button', { name: 'Move…' }).click();
  const move = page.getByRole('dialog', { name: 'Move 2 items' });
  await move.getByRole('button', { name: 'Open dest' }).click();
  await move.getByRole('button', { name: 'Open sub' }).waitFor();
  await move.getByRole('button', { name: 'Move here' }).click();
  const summary = page.locator('.notice.error').filter({ hasText: '1 moved, 1 could not be:' });
  await summary.waitFor();
  assert.match(await summary.innerText(), /a\.txt \(a\.txt already exists in dest\)/);
  await row('c.txt').waitFor({ state: 'detached' });
  assert.deepEqual(await names(`${base}/dest`), ['a.txt', 'b.txt', 'c.txt', 'sub']);
  assert.ok((await names(base)).includes('a.txt'), 'the one refused stays where it was');
  await check(page, 'bulk-move-summary');

  // Two to the trash, and both back with one Undo.
  await box('b.txt').click();
  await box('d.txt').click();
  await bar.getByRole('button', { name: 'Move to trash' }).click();
  const toast = page.locator('.toast-slot');
  await toast.getByText('2 items moved to the trash.').waitFor();
  assert.equal(await toast.getByRole('button', { name: 'Undo' }).evaluate((el) => el === el.ownerDocument.activeElement), true, 'the focus, whose bar is gone, goes to Undo');
  await row('d.txt').waitFor({ state: 'detached' });
  assert.deepEqual(await names(base), ['a.txt', 'dest', 'sub']);
  await check(page, 'bulk-trash-toast');
  await toast.getByRole('button', { name: 'Undo' }).click();
  await toast.getByText('Restored 2 items to bulk.').waitFor();
  await row('d.txt').waitFor();
  assert.deepEqual(await names(base), ['a.txt', 'b.txt', 'd.txt', 'dest', 'sub']);

  // Dark mode: the marks, the selected rows and the bar.
  await page.emulateMedia({ colorScheme: 'dark' });
  await box('a.txt').click();
  await box('d.txt').click({ modifiers: ['Shift'] });
  assert.equal(await count(), 3);
  await check(page, 'bulk-selected-dark');
  await bar.getByRole('button', { name: 'Copy…' }).click();
  await page.getByRole('dialog', { name: 'Copy 3 items' }).waitFor();
  await check(page, 'bulk-copy-dialog-dark');
  await page.getByRole('dialog', { name: 'Copy 3 items' }).getByRole('button', { name: 'Cancel' }).click();

  // A row gone behind the page's back: the archive is refused before a byte, and the page says why.
  await api('POST', '/api/trash', { path: `${base}/d.txt` });
  await bar.getByRole('button', { name: 'Download as ZIP' }).click();
  const refused = page.locator('.notice.error').filter({ hasText: 'd.txt' });
  await refused.waitFor();
  assert.match(await refused.innerText(), /Not found|does not exist/i);
  await context.close();

  assert.deepEqual(problems, [], 'no script error');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}
