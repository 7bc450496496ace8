/**
 * The web app in people's words (see `scenario-polish.ts`) on one node with the embedded
 * defaults and PID rules: alice's folder of ten files, shared with bob to read, and a file
 * whose PID the rules register. Screenshots go to $LADING_SCREENSHOT_DIR/polish (default
 * test-artifacts/web/polish). Skips locally without Chromium; never in CI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { screenshotDir } from './scenario.ts';
import { runPolishScenario } from './scenario-polish.ts';

const PREFIX = '21.T55555';

describe('the web app in people\'s words', { skip, timeout: 300_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let pid = '';
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-polish-'));
    const rules = join(dir, 'rules.txt');
    await writeFile(rules, 'object.created /tz/home/** pid.register\n');
    s = await startTestServer({ 'resource.fsync': false, 'pid.prefix': PREFIX, 'pid.rules': rules });
    const alice = await s.bearer('alice');
    await s.addUser('bob');
    const json = { authorization: alice, 'content-type': 'application/json' };
    assert.equal((await fetch(`${s.url}/api/registered`, { method: 'POST', headers: json, body: JSON.stringify({ path: '/tz/home/alice/tenrows' }) })).status, 200);
    for (let i = 1; i <= 10; i++) {
      const put = await fetch(s.home('alice', `tenrows/station-${String(i).padStart(2, '0')}.csv`), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: `station,${i}\n` });
      assert.equal(put.status, 200);
    }
    assert.equal((await fetch(s.home('alice', 'report.csv'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'a,b\n1,2\n' })).status, 200);
    assert.equal((await fetch(`${s.url}/api/acl/tz/home/alice/tenrows`, { method: 'PUT', headers: json, body: JSON.stringify({ principal: 'bob', level: 'read' }) })).status, 200);
    // NOTE: the rules register the PID in a job: wait until the metadata has it.
    for (let i = 0; i < 100 && !pid; i++) {
      const avus = (await (await fetch(`${s.url}/api/metadata/tz/home/alice/report.csv`, { headers: { authorization: alice } })).json()) as { Response: { data: { attribute: string; value: string }[] } };
      pid = avus.Response.data.find((a) => a.attribute === 'PID')?.value ?? '';
      if (!pid) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(pid, new RegExp(`^${PREFIX.replace('.', '\\.')}/`), 'the rules gave report.csv a PID');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs in with no consent page and no console error, says folder and file, checks names as typed, shows and changes share links, and fits a phone', async (t) => {
    await runPolishScenario(t, browser, {
      base: s.url, user: 'alice', password: 'pw-alice', other: { user: 'bob', password: 'pw-bob' }, zone: s.zone,
      shots: screenshotDir('polish'), folder: 'tenrows', file: 'report.csv', pid,
    });
  });
});
