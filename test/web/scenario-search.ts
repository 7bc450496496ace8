/**
 * Search in the web app, as a user goes about it with the keyboard: in a folder, the header's
 * search box ("Search projects") finds files by part of their name in that folder and below it,
 * each with the folder it is in; the results page widens the search to everywhere the user has
 * access (what another user shares with them appears, that user's private files never do),
 * searches by a metadata attribute and value, says when nothing is found, and opens a result
 * from the keyboard. The Recent page lists the user's latest uploads first. Every new page is
 * checked by axe-core and photographed at desktop and phone widths, light and dark.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { TestContext } from 'node:test';
import type { Browser } from 'playwright-core';
import { pageCheck, signIn } from './scenario.ts';

export interface SearchDeployment {
  /** The server's URL. */
  base: string;
  zone: string;
  user: string;
  password: string;
  /** Makes a collection, uploads, adds an AVU and shares, over the API as `as` (the user, or the other one). */
  api: (as: 'user' | 'other', method: string, path: string, body?: unknown) => Promise<number>;
  /** The other user's name. */
  other: string;
  shots: string;
}

export async function runSearchScenario(t: TestContext, browser: Browser, d: SearchDeployment): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const home = `/${d.zone}/home/${d.user}`;
  const theirs = `/${d.zone}/home/${d.other}`;
  const ok = async (as: 'user' | 'other', method: string, path: string, body?: unknown) => assert.ok((await d.api(as, method, path, body)) < 300, `${method} ${path}`);
  for (const dir of ['projects', 'projects/alpha', 'projects/beta']) await ok('user', 'POST', '/api/registered', { path: `${home}/${dir}` });
  for (const file of ['projects/alpha/survey-2026.csv', 'projects/alpha/survey notes.md', 'projects/beta/Survey_raw.json', 'readme.txt', 'survey-summary.pdf']) {
    await ok('user', 'PUT', `/api/registered${home}/${file}`, `contents of ${file}\n`);
    // NOTE: Recent orders by the time of the change, in milliseconds.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await ok('user', 'POST', `/api/metadata${home}/projects/alpha/survey-2026.csv`, { attribute: 'project', value: 'alpha' });
  await ok('other', 'POST', '/api/registered', { path: `${theirs}/for-${d.user}` });
  await ok('other', 'PUT', `/api/registered${theirs}/for-${d.user}/survey-shared.csv`, 'shared\n');
  await ok('other', 'PUT', `/api/registered${theirs}/survey-private.txt`, 'private\n');
  await ok('other', 'PUT', `/api/acl${theirs}/for-${d.user}`, { principal: d.user, level: 'read' });

  const visited: string[] = [];
  const check = pageCheck(d.shots, visited);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text()); });
  await signIn(page, d);
  const found = async () => (await page.locator('.found-list tbody .entry-name').allInnerTexts()).map((n) => n.replace(/\s*\(collection\)$/, '').trim());
  const status = page.locator('.found-list .count');

  // In a folder, the header's box searches it: typed and sent with Enter.
  await page.evaluate(`location.hash = '#/browse${home}/projects'`);
  await page.getByRole('heading', { level: 1, name: 'projects' }).waitFor();
  const box = page.getByRole('searchbox', { name: 'Search projects' });
  await box.focus();
  await page.keyboard.type('SURVEY');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
  await status.filter({ hasText: '3 results' }).waitFor();
  assert.deepEqual(await found(), ['survey notes.md', 'survey-2026.csv', 'Survey_raw.json'], 'by part of the name, in any case, in the folder and below, in path order');
  assert.match(await status.innerText(), /names containing “SURVEY” in My files \/ projects/);
  const row = (name: string) => page.locator('.found-list tbody tr').filter({ has: page.getByTitle(name, { exact: true }) });
  assert.equal((await row('Survey_raw.json').locator('td.col-folder').innerText()).trim(), 'My files / projects / beta', 'each with its folder');
  assert.equal(await page.getByLabel('Where').inputValue(), `${home}/projects`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(150);
  const header = await page.locator('header.app-header').boundingBox();
  assert.ok(header && header.height <= 110, `the search box leaves the phone's header two rows: ${header?.height} px`);
  assert.ok(await page.getByRole('searchbox', { name: 'Search everything' }).isVisible());
  await page.setViewportSize({ width: 1280, height: 800 });
  const desktop = await page.locator('header.app-header').boundingBox();
  assert.ok(desktop && desktop.height <= 64, `and the desktop's header one row: ${desktop?.height} px`);
  await check(page, 'search');

  // Everywhere: what is shared with the user comes too, the other user's private file never.
  await page.getByLabel('Where').selectOption('');
  await page.getByLabel('Name contains').press('Enter');
  await status.filter({ hasText: '5 results' }).waitFor();
  assert.deepEqual(await found(), ['survey notes.md', 'survey-2026.csv', 'Survey_raw.json', 'survey-summary.pdf', 'survey-shared.csv']);
  assert.equal((await row('survey-shared.csv').locator('td.col-folder').innerText()).trim(), `${d.other}'s files / for-${d.user}`, 'a shared folder in words, never its path');
  assert.equal(await page.getByText('survey-private.txt').count(), 0, 'another user\'s private data is never found');

  // By metadata: an attribute and its value.
  await page.getByText('Search by metadata').click();
  await page.getByLabel('Name contains').fill('');
  await page.getByLabel('Attribute').fill('project');
  await page.getByLabel('Value (optional)').fill('alpha');
  await page.getByLabel('Value (optional)').press('Enter');
  await status.filter({ hasText: '1 result' }).waitFor();
  assert.deepEqual(await found(), ['survey-2026.csv']);
  assert.match(await status.innerText(), /project = “alpha” everywhere you have access/);
  await check(page, 'search-metadata');

  // Nothing found says so; then a result opens from the keyboard.
  await page.getByLabel('Attribute').fill('');
  await page.getByLabel('Name contains').fill('no-such-thing');
  await page.getByLabel('Name contains').press('Enter');
  await page.getByRole('status').filter({ hasText: 'Nothing found: no names containing “no-such-thing” everywhere you have access.' }).waitFor();
  await page.getByLabel('Name contains').fill('summary');
  await page.getByLabel('Name contains').press('Enter');
  await status.filter({ hasText: '1 result' }).waitFor();
  await page.locator('.found-list tbody').getByRole('link', { name: 'survey-summary.pdf' }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'survey-summary.pdf' }).waitFor();

  // Recent: the user's uploads, the latest first, with their folders.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Recent' }).click();
  await page.getByRole('heading', { level: 1, name: 'Recent uploads' }).waitFor();
  await page.locator('.found-list tbody tr').first().waitFor();
  assert.deepEqual(await found(), ['survey-summary.pdf', 'readme.txt', 'Survey_raw.json', 'survey notes.md', 'survey-2026.csv'], 'theirs only, the latest first');
  await check(page, 'recent');

  await page.emulateMedia({ colorScheme: 'dark' });
  await check(page, 'recent-dark');
  await page.evaluate(`location.hash = '#/search?q=survey&under=${encodeURIComponent(`${home}/projects`)}'`);
  await status.filter({ hasText: '3 results' }).waitFor();
  await check(page, 'search-dark');
  await context.close();

  assert.deepEqual(problems, [], 'no script error and nothing the CSP refused');
  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}
