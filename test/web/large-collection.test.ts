/**
 * A collection of 100,000 data objects in the web app, in Chromium: the first entries show
 * while the rest are read page by page, the count reaches 100,000, the table holds only the
 * rows in view however far one scrolls (so the page never has 100,000 rows to lay out), the
 * last entry is reachable by scrolling, sorting and filtering work over all of them, and
 * axe-core finds no serious or critical violation. The objects are written straight into the
 * SQLite catalog, as `bench/listing.sh` does (creating them through the API would measure
 * uploads, not the app). Skips locally without Chromium; never in CI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser } from 'playwright-core';
import { type TestServer, startTestServer } from '../helpers/server.ts';
import { browserSkip as skip, launchBrowser, seriousViolations } from '../helpers/browser.ts';
import { signIn } from './scenario.ts';

const COUNT = 100_000;

describe('a collection of 100,000 entries in the web app', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let browser: Browser;

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    await s.addUser('mira', 'correct horse battery staple');
    const auth = `Bearer ${await s.login('mira', 'correct horse battery staple')}`;
    const made = await fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/mira/many` }),
    });
    assert.equal(made.status, 200);
    const db = new DatabaseSync(join(s.dataDir, 'catalog.sqlite'));
    const parent = `/${s.zone}/home/mira/many`;
    const now = Date.now();
    const insert = db.prepare(`INSERT INTO entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
      VALUES (?, ?, ?, ?, 'dataobject', 'mira', ?, 'sha2:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', ?, ?, ?)`);
    db.exec('BEGIN');
    for (let i = 0; i < COUNT; i++) {
      const name = `obs-${String(i).padStart(6, '0')}.nc`;
      insert.run(randomUUID(), `${parent}/${name}`, parent, name, i, randomUUID(), now, now);
    }
    db.exec('COMMIT');
    db.close();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('shows them a window at a time, scrolls to the last, sorts and filters', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, { base: s.url, user: 'mira', password: 'correct horse battery staple' });
    await page.evaluate(`location.hash = '#/browse/${s.zone}/home/mira/many'`);
    await page.getByRole('link', { name: 'obs-000000.nc', exact: true }).waitFor();
    await page.getByText('100,000 entries', { exact: true }).waitFor({ timeout: 120_000 });
    const rows = page.locator('tbody tr:not(.spacer)');
    assert.ok(await rows.count() < 200, `only the rows in view and a margin are drawn (${await rows.count()})`);

    await page.locator('.table-scroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await page.getByRole('link', { name: 'obs-099999.nc', exact: true }).waitFor();
    assert.ok(await rows.count() < 200, `still a window at the end (${await rows.count()})`);

    await page.getByRole('button', { name: 'Size' }).click();
    await page.getByRole('button', { name: 'Size' }).click();
    await page.locator('.table-scroll').evaluate((el) => { el.scrollTop = 0; });
    await page.getByRole('link', { name: 'obs-099999.nc', exact: true }).waitFor();
    assert.equal(await page.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort'), 'descending');

    await page.getByLabel('Filter by name').fill('obs-04242');
    await page.getByText('10 of 100,000 entries').waitFor();
    assert.equal(await rows.count(), 10);

    assert.deepEqual((await seriousViolations(page)).map((v) => v.id), []);
    await context.close();
  });
});
