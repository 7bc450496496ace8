/**
 * Search and Recent in the web app, driven in Chromium against a whole lading node: see
 * `runSearchScenario`. Skips locally without Chromium; never in CI.
 */
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { runSearchScenario } from './scenario-search.ts';
import { screenshotDir } from './scenario.ts';

describe('search and recent uploads in the web app', { skip, timeout: 600_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  const tokens: Record<string, string> = {};

  before(async () => {
    s = await startTestServer({ 'resource.fsync': false });
    tokens.user = await s.bearer('alice');
    tokens.other = await s.bearer('bob');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  it('finds by name in a folder and everywhere, by metadata, opens a result from the keyboard, and lists recent uploads', async (t) => {
    await runSearchScenario(t, browser, {
      base: s.url, zone: s.zone, user: 'alice', password: 'pw-alice', other: 'bob', shots: screenshotDir('search'),
      api: async (as, method, path, body) => {
        const json = body !== undefined && !path.startsWith('/api/registered/');
        const res = await fetch(`${s.url}${path}`, {
          method,
          headers: { authorization: tokens[as]!, 'content-type': json ? 'application/json' : 'application/octet-stream' },
          body: body === undefined ? undefined : json ? JSON.stringify(body) : String(body),
        });
        await res.arrayBuffer();
        return res.status;
      },
    });
  });
});
