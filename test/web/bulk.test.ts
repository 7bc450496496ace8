/**
 * Selection and bulk actions in the web app (see `scenario-bulk.ts`): one `lading serve` with
 * the embedded defaults, started in the test. Screenshots go to $LADING_SCREENSHOT_DIR/bulk
 * (default test-artifacts/web/bulk). Skips locally without Chromium; never in CI.
 */
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { screenshotDir } from './scenario.ts';
import { runBulkScenario } from './scenario-bulk.ts';

describe('selecting rows and acting on them together', { skip, timeout: 600_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-bulk-'));
    s = await startTestServer({ 'resource.fsync': false });
    await s.addUser('alice', 'correct horse battery staple');
    await s.addUser('bob');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('marks rows, selects by click, Shift and keyboard, downloads one ZIP, copies, moves and trashes with one Undo', async (t) => {
    await runBulkScenario(t, browser, {
      base: s.url, user: 'alice', password: 'correct horse battery staple', zone: s.zone, other: 'bob', dir, shots: screenshotDir('bulk'),
    });
  });
});
