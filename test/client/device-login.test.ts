/**
 * `lading login --device` end to end: the real command against a real `lading serve` with the
 * embedded provider, and Debian's headless Chromium (playwright-core) as the user, who opens
 * the verification URL the command prints, types the code, confirms it, signs in and allows
 * access. The command then stores a token and a refresh token, `lading ls` works, and an
 * expired login is renewed with the refresh token without the browser. Skips locally without
 * Chromium; never in CI.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { browserSkip as skip, launchBrowser } from '../helpers/browser.ts';
import { CLIENT_BIN, lading, spawnServe, stopProcess } from '../helpers/process.ts';
import { cleanEnv, runLading } from '../cli/run-lading.ts';
import type { ChildProcess } from 'node:child_process';

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'client');

let dir: string;
let server: { proc: ChildProcess; url: string };
let browser: Browser;
let env: Record<string, string>;

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'lading-device-'));
  const data = join(dir, 'data');
  const serverEnv = cleanEnv();
  lading(['init', '--data', data], serverEnv);
  lading(['user', 'add', 'mira', '--data', data], serverEnv, 'correct horse battery staple\n');
  server = await spawnServe(data, serverEnv);
  env = { XDG_CONFIG_HOME: join(dir, 'config'), DISPLAY: '', WAYLAND_DISPLAY: '' };
  browser = await launchBrowser();
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  if (server) await stopProcess(server.proc);
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('logs in with the device authorization grant, the code entered in Chromium, then lists and renews', { skip, timeout: 120_000 }, async () => {
  const login = spawn(CLIENT_BIN, ['login', server.url, '--device', '--name', 'here'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  login.stdout.on('data', (c) => { stdout += String(c); });
  login.stderr.on('data', (c) => { stderr += String(c); });
  const exited = new Promise<number>((resolve) => login.on('exit', (code) => resolve(code ?? 1)));

  const printed = await new Promise<RegExpExecArray>((resolve, reject) => {
    const check = (): void => {
      // NOTE: both lines, which may arrive in separate chunks.
      const m = /open (\S+) and enter the code (\S+)/.exec(stderr);
      if (m && /or open \S+ directly\)\n/.test(stderr)) resolve(m);
    };
    login.stderr.on('data', check);
    login.on('exit', () => reject(new Error(`lading login exited early: ${stderr}`)));
    check();
  });
  const [, verificationUri, userCode] = printed;
  assert.equal(new URL(verificationUri!).origin, server.url);
  assert.match(userCode!, /^[A-Z]{4}-[A-Z]{4}$/);
  assert.match(stderr, /or open \S+\?user_code=/, 'the complete verification URL is printed too');

  const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
  const page = await context.newPage();
  await page.goto(verificationUri!);
  await page.getByLabel('Code').waitFor();
  assert.match(await page.title(), /Connect a device/);
  await page.screenshot({ path: join(ARTIFACTS, 'device-code.png'), fullPage: true });
  // A wrong code first: the page says so.
  await page.getByLabel('Code').fill('BBBB-BBBB');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('alert').waitFor();
  assert.match(await page.getByRole('alert').innerText(), /not right/);

  await page.getByLabel('Code').fill(userCode!.toLowerCase());
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('#user-code').waitFor();
  assert.equal(await page.locator('#user-code').innerText(), userCode);
  assert.match(await page.locator('main').innerText(), /lading command line/);
  await page.screenshot({ path: join(ARTIFACTS, 'device-confirm.png'), fullPage: true });
  await page.getByRole('button', { name: 'Continue' }).click();

  await page.getByLabel('User name').fill('mira');
  await page.getByLabel('Password').fill('correct horse battery staple');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'device-done.png'), fullPage: true });
  await context.close();

  assert.equal(await exited, 0, stderr);
  assert.match(stdout, /logged in to \S+ as mira \(saved as 'here', the default/);
  const configFile = join(env.XDG_CONFIG_HOME!, 'lading', 'config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as { default: string; servers: Record<string, { token: string; refreshToken?: string; expiresAt?: string; user: string }> };
  assert.equal(config.default, 'here');
  assert.equal(config.servers.here!.user, 'mira');
  assert.ok(config.servers.here!.refreshToken, 'the provider\'s refresh token is kept to renew the login');

  const mk = await runLading(['mkdir', 'from-device'], { env });
  assert.equal(mk.code, 0, mk.stderr);
  const ls = await runLading(['ls'], { env });
  assert.equal(ls.code, 0, ls.stderr);
  assert.equal(ls.stdout, 'from-device/\n');

  // An expired login is renewed through the refresh token, without the browser.
  const before = config.servers.here!.token;
  config.servers.here!.expiresAt = new Date(Date.now() - 1000).toISOString();
  await writeFile(configFile, JSON.stringify(config));
  const again = await runLading(['ls', '--json'], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.equal((JSON.parse(again.stdout) as { name: string }).name, 'from-device');
  const renewed = JSON.parse(await readFile(configFile, 'utf8')) as typeof config;
  assert.notEqual(renewed.servers.here!.token, before, 'a new lading token');
  assert.ok(Date.parse(renewed.servers.here!.expiresAt!) > Date.now());

  // Logging out revokes the token on the server and forgets the server.
  const out = await runLading(['logout'], { env });
  assert.equal(out.code, 0, out.stderr);
  const refused = await fetch(`${server.url}/auth/b2safeproxy`, { headers: { authorization: `Bearer ${renewed.servers.here!.token}` } });
  assert.equal(refused.status, 401);
  // … and the provider's refresh token is revoked too.
  const refresh = await fetch(`${server.url}/oidc/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: renewed.servers.here!.refreshToken!, client_id: 'lading-cli' }),
  });
  assert.equal(((await refresh.json()) as { error?: string }).error, 'invalid_grant');
});
