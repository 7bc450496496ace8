/**
 * The web app in people's words, in Chromium: a signed-out load logs no error; signing in from
 * a fresh browser is two screens (the app's button, the provider's password page), with no
 * consent page for lading's own app; the provider's pages follow dark mode; breadcrumbs start
 * at "My files" (and "alice's files" under Shared with me), never at the zone's path; folders
 * and files are called so; the name field says the name rule and refuses a name as it is typed;
 * a 10-row folder shows its last row without a scrolling box of its own; the share-link kind
 * select is not cut off; a new share link is said to be shown once, with Copy and "Create
 * another"; a link's uses and expiry are changed from the page and take effect (a link past
 * its uses is refused); a PID in the metadata table takes at most two lines on a phone.
 * axe-core runs on every page (no serious or critical violation) at desktop and phone width,
 * light and dark, and each is photographed into `shots`.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { seriousViolations } from '../helpers/browser.ts';
import { signIn } from './scenario.ts';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** What the polish scenario is given: a server whose `user` owns `tenrows` (ten files) and `report.csv` (with a PID), shared with `other`. */
export interface PolishDeployment {
  base: string;
  user: string;
  password: string;
  other: { user: string; password: string };
  zone: string;
  shots: string;
  /** The folder of ten files in the user's home, and the file with a PID there. */
  folder: string;
  file: string;
  pid: string;
}

/**
 * axe-core (no serious or critical violation) and a screenshot, at desktop and at phone width
 * (where the page must not scroll sideways), as `<name>-desktop.png` and `<name>-phone.png`.
 */
async function checkPage(page: Page, shots: string, name: string, visited: string[]): Promise<void> {
  const size = page.viewportSize() ?? DESKTOP;
  for (const [width, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    const violations = (await seriousViolations(page)).map((v) => `${v.id}: ${v.help} (${JSON.stringify(v.nodes.map((n) => n.target))})`);
    assert.deepEqual(violations, [], `axe-core on ${name} at ${width} width`);
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    assert.ok(overflow <= 0, `${name} fits the ${width}'s width (${overflow} px too wide)`);
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
  visited.push(name);
}

/** The texts of the breadcrumbs, first to last. */
async function crumbs(page: Page): Promise<string[]> {
  return (await page.getByRole('navigation', { name: 'Breadcrumb' }).locator('li').allInnerTexts()).map((t) => t.trim());
}

/** A select's width, the width its chosen text needs, and whether it lies inside `container`. */
async function selectFit(select: Locator, container: string): Promise<{ width: number; needed: number; inside: boolean }> {
  return select.evaluate((el, within) => {
    const probe = el.cloneNode(true) as typeof el;
    probe.style.width = 'max-content';
    probe.style.maxWidth = 'none';
    probe.style.position = 'absolute';
    probe.style.visibility = 'hidden';
    el.parentElement!.append(probe);
    const needed = probe.getBoundingClientRect().width;
    probe.remove();
    const r = el.getBoundingClientRect();
    const box = el.closest(within)!.getBoundingClientRect();
    return { width: r.width, needed, inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 };
  }, container);
}

export async function runPolishScenario(t: TestContext, browser: Browser, d: PolishDeployment): Promise<void> {
  await mkdir(d.shots, { recursive: true });
  const home = `/${d.zone}/home/${d.user}`;
  const visited: string[] = [];

  // A signed-out load logs no error, and signing in from a fresh browser is two screens.
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.base });
  const page = await context.newPage();
  const errors: string[] = [];
  const scriptErrors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => scriptErrors.push(e.message));
  await page.goto(`${d.base}/`);
  await page.getByRole('link', { name: 'Sign in' }).waitFor();
  await page.waitForLoadState('networkidle');
  assert.deepEqual([...errors, ...scriptErrors], [], 'a signed-out load logs nothing in the console');
  await checkPage(page, d.shots, 'signed-out', visited);

  const screens: string[] = [];
  page.on('load', () => screens.push(new URL(page.url()).pathname));
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill(d.user);
  await page.getByLabel('Password').fill(d.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'My files' }).waitFor();
  assert.equal(screens.length, 2, `the provider's page, then the app: ${screens.join(' → ')}`);
  assert.match(screens[0]!, /^\/oidc\/interaction\//, 'the password page');
  assert.equal(screens[1], '/', 'then the app, with no consent page between');
  t.diagnostic(`screens from the app's Sign in to the app: ${['/ (Sign in)', ...screens].join(' → ')}`);

  // Breadcrumbs and words: "My files", folders and files.
  assert.deepEqual(await crumbs(page), ['My files']);
  await page.getByRole('button', { name: 'New folder' }).waitFor();
  await page.getByRole('link', { name: `${d.folder} (folder)` }).waitFor();
  assert.equal(await page.getByText(/\bcollection\b|data object/i).count(), 0, 'no API words in the listing');
  await checkPage(page, d.shots, 'my-files', visited);

  // The name field says the rule, refuses a name as it is typed, and the server's rule decides.
  await page.getByRole('button', { name: 'New folder' }).click();
  const dialog = page.getByRole('dialog', { name: 'New folder' });
  const name = dialog.getByLabel('Name');
  assert.match(await dialog.locator('#new-folder-hint').innerText(), /up to 255 bytes.*"\.".*"\.\.".*"\/"/);
  const create = dialog.getByRole('button', { name: 'Create' });
  for (const [typed, says] of [['a/b', /must not contain '\/'/], ['..', /'\.\.' is not allowed/], ['x'.repeat(256), /at most 255 bytes/], ['bad\u202Ename', /U\+202E RIGHT-TO-LEFT OVERRIDE/]] as const) {
    await name.fill(typed);
    await dialog.locator('#new-folder-error').waitFor();
    assert.match(await dialog.locator('#new-folder-error').innerText(), says, typed);
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    assert.ok(await create.isDisabled(), `Create is off for ${JSON.stringify(typed)}`);
  }
  await checkPage(page, d.shots, 'name-refused', visited);
  await name.fill('field notes');
  assert.equal(await dialog.locator('#new-folder-error').count(), 0, 'a good name is not refused');
  assert.match((await name.getAttribute('aria-describedby')) ?? '', /new-folder-hint/, 'the rule is read with the field');
  await create.click();
  await page.getByRole('link', { name: 'field notes (folder)' }).waitFor();
  // A name the server refuses is said in the app's words, never as API advice.
  await page.getByRole('button', { name: 'New folder' }).click();
  await dialog.getByLabel('Name').fill('field notes');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await dialog.getByText('A folder or file named “field notes” already exists here. Choose another name.').waitFor();
  assert.equal(await dialog.getByText(/force/).count(), 0, 'no API advice');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // A 10-row folder: its last row in sight without a scrolling box of its own.
  await page.getByRole('link', { name: `${d.folder} (folder)` }).click();
  await page.getByRole('heading', { level: 1, name: d.folder }).waitFor();
  assert.deepEqual(await crumbs(page), ['My files', d.folder]);
  const rows = page.locator('.entries tbody tr:not(.spacer)');
  await rows.nth(9).waitFor();
  assert.equal(await rows.count(), 10);
  const box = await page.locator('.table-scroll').evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, bottom: el.getBoundingClientRect().bottom }));
  const lastRow = await rows.last().evaluate((el) => el.getBoundingClientRect().bottom);
  assert.ok(box.scroll <= box.client + 1, `the listing does not scroll inside its box (${box.scroll} px in ${box.client})`);
  assert.ok(lastRow <= box.bottom + 0.5, `the last row lies inside the listing's box (${lastRow} ≤ ${box.bottom})`);
  await rows.last().scrollIntoViewIfNeeded();
  assert.ok(await rows.last().isVisible());
  t.diagnostic(`10-row folder at desktop: listing box ${box.client} px high, content ${box.scroll} px`);
  await checkPage(page, d.shots, 'ten-rows', visited);

  // A folder's details: its kind in people's words, the API's in brackets; the kind select whole.
  await page.goto(`${d.base}/#/item${home}/${d.folder}`);
  await page.getByRole('heading', { level: 1, name: d.folder }).waitFor();
  assert.equal((await page.locator('p.kind').innerText()).trim(), 'Folder (a collection in the API)');
  const kindSelect = page.getByLabel('Kind');
  await kindSelect.waitFor();
  for (const viewport of [DESKTOP, { width: 800, height: 900 }, PHONE]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(100);
    for (const choice of ['read', 'upload']) {
      await kindSelect.selectOption(choice);
      const fit = await selectFit(kindSelect, 'section.card');
      assert.ok(fit.width + 0.5 >= fit.needed, `the kind select shows its choice whole at ${viewport.width} px (${fit.width} of ${fit.needed} px)`);
      assert.ok(fit.inside, `the kind select lies inside its card at ${viewport.width} px`);
    }
  }
  await kindSelect.selectOption('read');
  await page.setViewportSize(DESKTOP);
  await checkPage(page, d.shots, 'details-folder', visited);

  // A file's details: a new link is shown once, with Copy and Create another.
  await page.goto(`${d.base}/#/item${home}/${d.file}`);
  await page.getByRole('heading', { level: 1, name: d.file }).waitFor();
  assert.equal((await page.locator('p.kind').innerText()).trim(), 'File (a data object in the API)');
  assert.deepEqual(await crumbs(page), ['My files', d.file]);
  await page.getByLabel('Uses (optional)').fill('');
  await page.getByRole('button', { name: 'Create link' }).click();
  const created = page.locator('#new-link');
  await created.waitFor();
  const firstUrl = await created.innerText();
  await page.getByText('Copy it now: it is shown only this once.').waitFor();
  await page.getByRole('button', { name: 'Copy link' }).waitFor();
  await checkPage(page, d.shots, 'link-created', visited);
  await page.getByRole('button', { name: 'Create another' }).click();
  // NOTE: polled here: the page's CSP lets no test code be evaluated as a string in it.
  let secondUrl = firstUrl;
  for (let i = 0; i < 100 && secondUrl === firstUrl; i++) {
    await page.waitForTimeout(100);
    secondUrl = await created.innerText();
  }
  assert.notEqual(secondUrl, firstUrl, 'another link');
  const links = page.locator('ul.links li');
  await links.nth(1).waitFor();
  assert.equal(await links.count(), 2);

  // Change the first link's uses: one in all. Whoever has it gets it once, then 410.
  await links.first().getByRole('button', { name: /^Change the read link/ }).click();
  const change = page.getByRole('dialog', { name: 'Change read link' });
  await change.getByLabel('Uses in all').fill('1');
  await change.getByLabel('Expires after (days from now)').fill('2');
  await checkPage(page, d.shots, 'link-change', visited);
  await change.getByRole('button', { name: 'Save' }).click();
  await links.first().getByText(/ · 0 uses of 1/).waitFor();
  const expires = await links.first().innerText();
  assert.match(expires, /expires /, 'an expiry shown');
  assert.equal((await fetch(firstUrl)).status, 200, 'its one use');
  const refused = await fetch(firstUrl);
  assert.equal(refused.status, 410, 'past its uses, refused');
  await page.reload();
  await links.first().getByText(/used up/).waitFor();
  // No limit again: it works again; the other link was never touched.
  await links.first().getByRole('button', { name: /^Change the read link/ }).click();
  await change.getByLabel('Uses in all').fill('');
  await change.getByRole('button', { name: 'Save' }).click();
  await links.first().getByText(/ · 1 use( ·|$)/).waitFor();
  assert.equal((await fetch(firstUrl)).status, 200, 'works again without a limit');
  assert.equal((await fetch(secondUrl)).status, 200);

  // A PID in the metadata table: at most two lines on a phone.
  await page.setViewportSize(PHONE);
  const pidCell = page.locator('table.meta td', { hasText: d.pid });
  await pidCell.waitFor();
  const pidLines = await pidCell.evaluate((el) => {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    return Math.round(range.getBoundingClientRect().height / parseFloat(el.ownerDocument.defaultView!.getComputedStyle(el).lineHeight));
  });
  assert.ok(pidLines <= 2, `the PID takes ${pidLines} lines on a phone`);
  t.diagnostic(`a PID in the metadata table at 390 px: ${pidLines} line(s)`);
  await page.setViewportSize(DESKTOP);
  await checkPage(page, d.shots, 'details-file', visited);

  // The same pages in dark mode.
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const [shot, hash, heading] of [['my-files-dark', `#/browse${home}`, 'My files'], ['details-file-dark', `#/item${home}/${d.file}`, d.file]] as const) {
    await page.goto(`${d.base}/${hash}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await page.waitForLoadState('networkidle');
    await checkPage(page, d.shots, shot, visited);
  }
  assert.deepEqual(scriptErrors, [], 'no script error');
  await context.close();

  // The provider's page in dark mode, in a fresh browser.
  const dark = await browser.newContext({ viewport: DESKTOP, colorScheme: 'dark' });
  const provider = await dark.newPage();
  await provider.goto(`${d.base}/auth/signin?next=%2F`);
  await provider.getByLabel('User name').waitFor();
  const background = (await provider.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
  const card = (await provider.evaluate("getComputedStyle(document.querySelector('main')).backgroundColor")) as string;
  assert.equal(background, 'rgb(16, 22, 29)', 'the page is dark');
  assert.equal(card, 'rgb(24, 33, 43)', 'and so is its card');
  await checkPage(provider, d.shots, 'provider-sign-in-dark', visited);
  await provider.getByLabel('User name').fill(d.user);
  await provider.getByLabel('Password').fill('wrong');
  await provider.getByRole('button', { name: 'Sign in' }).click();
  await provider.getByRole('alert').waitFor();
  await checkPage(provider, d.shots, 'provider-error-dark', visited);
  await dark.close();

  // Shared with another user: "Shared with me", then whose files, then the folder.
  const theirs = await browser.newContext({ viewport: DESKTOP });
  const other = await theirs.newPage();
  await signIn(other, { base: d.base, user: d.other.user, password: d.other.password });
  await other.getByRole('link', { name: 'Shared with me' }).click();
  const sharedRow = other.getByRole('row', { name: new RegExp(d.folder) });
  await sharedRow.waitFor();
  assert.equal((await sharedRow.locator('.entry-path').innerText()).trim(), `in ${d.user}'s files`);
  await sharedRow.getByRole('link', { name: `${d.folder} (folder)` }).click();
  await other.getByRole('heading', { level: 1, name: d.folder }).waitFor();
  assert.deepEqual(await crumbs(other), ['Shared with me', `${d.user}'s files`, d.folder]);
  assert.equal(await other.getByRole('navigation', { name: 'Breadcrumb' }).getByText(`/${d.zone}`).count(), 0, 'no zone path');
  await checkPage(other, d.shots, 'shared-folder', visited);
  await theirs.close();

  t.diagnostic(`pages checked with axe-core and photographed into ${d.shots}: ${visited.join(', ')}`);
}
