/**
 * Logs a person can read and a machine can parse: `lading serve` writes JSON lines when its
 * output is not a terminal (the banner included), readable lines on a terminal or with
 * `log.format=pretty`, one line per request, and refusals whose reason survives `jq`.
 * pino-pretty is loaded only when readable lines are chosen.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LADING_BIN, stopProcess } from '../helpers/process.ts';
import { loadConfig } from '../../src/wiring/config.ts';
import { createLogger, loggerOptions } from '../../src/wiring/logger.ts';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { cleanEnv, startServe } from './run-lading.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/**
 * Serves a fresh data directory with `env`, sends a request that succeeds and one that is
 * refused, stops, and resolves with everything the process wrote (standard output and error).
 */
async function serveTwoRequests(env: Record<string, string>): Promise<string> {
  const data = await mkdtemp(join(tmpdir(), 'lading-logs-'));
  dirs.push(data);
  const { proc, output } = startServe(['--data', data, '--listen', '127.0.0.1:0'], env);
  for (let i = 0; i < 200 && !/listening on http:/.test(output()); i++) await sleep(50);
  const url = /listening on (http:\/\/[\d.:]+)/.exec(output())?.[1];
  assert.ok(url, output());
  await (await fetch(`${url}/api/status`)).text();
  await (await fetch(`${url}/api/registered/lading/home`)).text();
  await sleep(200);
  await stopProcess(proc);
  return output();
}

describe('logs', () => {
  it('loads pino-pretty only for readable lines', async () => {
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/pino-pretty/'));
    await createLogger(loadConfig({ env: {}, flags: { 'log.format': 'json' } }).log);
    await createLogger(loadConfig({ env: {} }).log, { isTTY: false });
    assert.equal(loaded(), false);
    await createLogger(loadConfig({ env: {} }).log, { isTTY: true });
    assert.equal(loaded(), true);
  });

  it('are JSON lines when standard output is no terminal, one a request, reasons kept', async () => {
    const lines = (await serveTwoRequests({})).trim().split('\n');
    const records = lines.map((l) => JSON.parse(l) as Record<string, any>);
    assert.ok(records.every((r) => typeof r.msg === 'string' && typeof r.time === 'number'));
    assert.ok(records.some((r) => /^lading \S+ listening on http:\/\/127\.0\.0\.1:\d+ \(data directory .*, zone \/lading\)$/.test(r.msg)), 'the banner is JSON too');
    assert.equal(records.filter((r) => /incoming request|request completed/.test(r.msg)).length, 0);
    const status = records.filter((r) => r.req?.url === '/api/status');
    assert.equal(status.length, 1, 'one line for the request');
    assert.match(status[0]!.msg, /^GET \/api\/status 200 in \d+ ms$/);
    assert.equal(status[0]!.req.method, 'GET');
    assert.equal(status[0]!.res.statusCode, 200);
    assert.equal(typeof status[0]!.responseTime, 'number');
    assert.equal(typeof status[0]!.reqId, 'string');
    const refusedLine = lines.find((l) => l.includes('"request refused"'))!;
    assert.equal(refusedLine.match(/"msg":/g)?.length, 1, 'one msg key');
    const refused = JSON.parse(refusedLine) as Record<string, string>;
    assert.equal(refused.code, 'UNAUTHENTICATED');
    assert.match(refused.reason!, /Authorization: Bearer/);
    const refusedRequest = records.find((r) => r.req?.url === '/api/registered/lading/home');
    assert.equal(typeof refused.reqId, 'string');
    assert.equal(refused.reqId, refusedRequest?.reqId, 'the refusal and its request line share the request id');
  });

  it('write a request\'s JSON line within a moment, while the server keeps running', async (t) => {
    const data = await mkdtemp(join(tmpdir(), 'lading-logs-'));
    dirs.push(data);
    const { proc, output } = startServe(['--data', data, '--listen', '127.0.0.1:0'], {});
    t.after(() => stopProcess(proc));
    for (let i = 0; i < 200 && !/listening on http:/.test(output()); i++) await sleep(50);
    const url = /listening on (http:\/\/[\d.:]+)/.exec(output())?.[1];
    assert.ok(url, output());
    await (await fetch(`${url}/api/status?probe=1`)).text();
    // Lines are gathered into larger writes, but none waits for the buffer to fill or for the
    // process to end.
    for (let i = 0; i < 40 && !output().includes('/api/status?probe=1'); i++) await sleep(50);
    assert.match(output(), /GET \/api\/status\?probe=1 200 in \d+ ms/);
  });

  it('are readable lines with log.format=pretty', async () => {
    const out = await serveTwoRequests({ LADING_LOG_FORMAT: 'pretty' });
    assert.match(out, /^\[\d\d:\d\d:\d\d\] INFO: lading \S+ listening on http:\/\/127\.0\.0\.1:\d+ \(data directory .*, zone \/lading\)$/m);
    assert.match(out, /^\[\d\d:\d\d:\d\d\] INFO: GET \/api\/status 200 in \d+ ms$/m);
    assert.match(out, /^\[\d\d:\d\d:\d\d\] INFO: request refused \{"code":"UNAUTHENTICATED","reason":"Send the header/m);
    assert.doesNotMatch(out, /^\{/m);
  });

  it('are readable lines on a terminal', async (t) => {
    try {
      execFileSync('tmux', ['-V'], { stdio: 'pipe' });
    } catch {
      if (process.env.CI) assert.fail('tmux is missing: apt-get install tmux');
      return t.skip('tmux is missing: apt-get install tmux');
    }
    const data = await mkdtemp(join(tmpdir(), 'lading-logs-tty-'));
    dirs.push(data);
    const session = `lading-logs-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
    const env = Object.entries(cleanEnv()).filter(([k]) => /^(PATH|HOME)$/.test(k)).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '20', `env -i ${env.join(' ')} ${LADING_BIN} serve --data ${data} --listen 127.0.0.1:0`);
    try {
      let screen = '';
      for (let i = 0; i < 200 && !/listening on (http:\S+)/.test(screen); i++) {
        await sleep(50);
        screen = tmux('capture-pane', '-t', session, '-p', '-J');
      }
      const url = /listening on (http:\S+)/.exec(screen)?.[1];
      assert.ok(url, screen);
      await (await fetch(`${url}/api/status`)).text();
      for (let i = 0; i < 100 && !screen.includes('/api/status'); i++) {
        await sleep(50);
        screen = tmux('capture-pane', '-t', session, '-p', '-J');
      }
      assert.match(screen, /^\[\d\d:\d\d:\d\d\] INFO: GET \/api\/status 200 in \d+ ms$/m);
      assert.doesNotMatch(screen, /"level":/);
    } finally {
      try { tmux('kill-session', '-t', session); } catch { /* already gone */ }
    }
  });
  it('never hold a credential: headers, passwords, tokens and secrets in URLs are cut out', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const log = pino(loggerOptions('info'), sink);
    const headers = { authorization: 'Bearer s3cret-bearer', cookie: 'sid=s3cret-cookie', host: 'example.org' };
    const req = { method: 'GET', url: '/auth/callback?code=s3cret-code&lang=en', host: 'example.org', ip: '192.0.2.1', socket: { remotePort: 4242 }, headers, auth: null };
    log.info({ req, res: { statusCode: 200 } }, 'a request');
    log.info({ headers }, 'headers on their own');
    log.info({ password: 's3cret-password', token: 's3cret-token' }, 'fields');
    const text = lines.join('');
    assert.doesNotMatch(text, /s3cret/, text);
    const [request, alone, fields] = lines.map((l) => JSON.parse(l));
    assert.deepEqual(request.req, { method: 'GET', url: '/auth/callback?code=%5Bredacted%5D&lang=en', host: 'example.org', remoteAddress: '192.0.2.1', remotePort: 4242 });
    assert.equal(alone.headers.authorization, '[redacted]');
    assert.equal(alone.headers.cookie, '[redacted]');
    assert.equal(alone.headers.host, 'example.org');
    assert.equal(fields.password, '[redacted]');
    assert.equal(fields.token, '[redacted]');
  });
});
