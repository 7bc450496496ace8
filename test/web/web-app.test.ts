/**
 * The web app end to end on the embedded defaults (SQLite catalog, files on disk, the embedded
 * identity provider and PID service): one `lading serve`, restarted with kill -9 on the same
 * data directory while a 200 MiB upload is in flight (see `scenario.ts` for what the user
 * does). Screenshots go to $LADING_SCREENSHOT_DIR/embedded (default test-artifacts/web).
 * Skips locally without Chromium; never in CI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { cleanEnv } from '../cli/run-lading.ts';
import { freePort, startNode, stopProcess } from '../helpers/cluster.ts';
import { lading } from '../helpers/process.ts';
import { Relay } from '../e2e/tus-support.ts';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { runMoveCopyScenario, runPublicScenario, runReconnectScenario, runReloadScenario, runUploadsPanelScenario, runScenario, runTrashScenario, screenshotDir, signIn } from './scenario.ts';

const ZONE = 'tz';
const PREFIX = '21.T66666';
const OTHER = { user: 'bob', password: 'bob has a password too' };

describe('the web app on one node with the embedded defaults', { skip, timeout: 900_000 }, () => {
  let dir: string;
  let data: string;
  let env: NodeJS.ProcessEnv;
  let node: ChildProcess | undefined;
  let relay: Relay;
  let base: string;
  let s3Port: number;
  let browser: Browser;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-web-'));
    data = join(dir, 'data');
    await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/** pid.register\nobject.renamed /${ZONE}/home/** pid.update\n`);
    // NOTE: the relay's port is the public URL, so links, the login issuer and the cookie's
    // origin are the relay's; the node behind it may change port when restarted.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    s3Port = await freePort();
    env = cleanEnv({
      LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn', LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PREFIX: PREFIX,
      LADING_PUBLIC_URL: base, LADING_UPLOADS_LEASE: '3', LADING_RESOURCE_FSYNC: 'false', LADING_S3_LISTEN: `127.0.0.1:${s3Port}`,
    });
    lading(['init', '--data', data], env);
    lading(['user', 'add', 'alice', '--data', data], env, 'correct horse battery staple\n');
    lading(['user', 'add', OTHER.user, '--data', data], env, `${OTHER.password}\n`);
    const started = await startNode(data, env);
    node = started.proc;
    relay = new Relay(started.url);
    await relay.listen(port);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await relay?.close();
    if (node) await stopProcess(node, 'SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs in, uploads through a restart, checks, downloads, renames, shares, revokes and signs out', async (t) => {
    await runScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), s3Endpoint: `http://127.0.0.1:${s3Port}`,
      restart: async () => {
        await stopProcess(node, 'SIGKILL');
        const again = await startNode(data, env);
        node = again.proc;
        relay.switchTo(again.url);
        t.diagnostic(`lading serve killed and started again at ${again.url}`);
      },
    });
  });

  it('goes on with an upload after a page reload, once the same file is picked again', async () => {
    await runReloadScenario(browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    });
  });

  it('moves and copies with the dialogs and by dragging rows, replaces on request, and downloads a collection as ZIP', async (t) => {
    await runMoveCopyScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    });
  });

  it('moves to the trash with undo, restores (under another name where the place is taken) and empties the trash', async (t) => {
    await runTrashScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    });
  });

  it('shows published data as pages to anyone, and a PID\'s landing page offers sign-in to download what is not public', async (t) => {
    await runPublicScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    });
  });

  it('keeps a folder\'s listing with "Reconnecting…" and an upload waiting while the server is gone, and both go on once it is back', async (t) => {
    await runReconnectScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    }, {
      stop: async () => { await stopProcess(node, 'SIGKILL'); },
      start: async () => {
        const again = await startNode(data, env);
        node = again.proc;
        relay.switchTo(again.url);
      },
    });
  });

  it('lists uploads started elsewhere under Transfers, keeps a paused upload in reach, and says where each went and when', async (t) => {
    await runUploadsPanelScenario(t, browser, {
      base, relay, dir, user: 'alice', password: 'correct horse battery staple', other: OTHER, zone: ZONE, pidPrefix: PREFIX,
      shots: screenshotDir('embedded'), restart: async () => {},
    });
  });

  it('lists an unfinished upload however soon after the page the server answers for it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, { base, user: 'alice', password: 'correct horse battery staple' });
    // NOTE: a test double for the uploads endpoint's list, inside the page: it answers without
    // the network, before the page's first frame, which is when a view that subscribes late
    // misses the change.
    const id = '0b5d6c1e-4a8f-4f00-9c55-2f1e0d3c7a10';
    const list = JSON.stringify({
      Meta: { data_type: "<class 'list'>", elements: 1, errors: 0, status: 200 },
      Response: { data: [{ id, url: `${base}/api/uploads/${id}`, state: 'open', offset: 5 * 1024 * 1024, length: 12_582_912, path: `/${ZONE}/home/alice/early.bin`, created: new Date().toISOString() }], errors: null },
    });
    await page.addInitScript(`{
      const fetched = window.fetch.bind(window);
      window.fetch = (input, init) => String(input).endsWith('/api/uploads') && (init?.method ?? 'GET') === 'GET'
        ? Promise.resolve(new Response(${JSON.stringify(list)}, { headers: { 'content-type': 'application/json' } }))
        : fetched(input, init);
    }`);
    await page.evaluate(({ key, value }) => localStorage.setItem(key, value), {
      key: `tus::lading|alice|/${ZONE}/home/alice/early.bin|12582912|1::1`,
      value: JSON.stringify({
        size: 12_582_912, metadata: { path: `/${ZONE}/home/alice/early.bin`, label: 'early.bin' }, creationTime: new Date().toString(),
        uploadUrl: `${base}/api/uploads/${id}`,
      }),
    });
    for (let i = 0; i < 10; i++) {
      await page.reload();
      await page.getByRole('link', { name: '1 unfinished upload' }).waitFor({ timeout: 5000 });
    }
    assert.equal(await page.getByRole('complementary', { name: 'Uploads in progress' }).count(), 0, 'no panel over the listing for uploads no page sends');
    await page.screenshot({ path: join(screenshotDir('embedded'), 'unfinished-after-reload.png') });
    await page.getByRole('link', { name: '1 unfinished upload' }).click();
    await page.getByRole('region', { name: 'Unfinished uploads' }).getByText('early.bin').waitFor();
    await context.close();
  });
});
