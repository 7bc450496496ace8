/**
 * The client commands' options, mistakes and signals, as the real CLI answers them against a
 * real `lading serve`: the client options go before the command as after it; `lading` alone
 * and an unknown command are one `lading:` line with exit 2; a name with a newline is quoted
 * on one line; `mkdir -p` of an existing collection says it exists; a failure names its path
 * once; SIGTERM (a batch system's cancel) stops a transfer as cleanly as Ctrl-C, with one line
 * and exit 143; logging in to a URL that is not lading says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Relay } from '../e2e/tus-support.ts';
import { type Node, runCli, startCli, startNode } from '../client/transfer-support.ts';
import { oneLineError } from './run-lading.ts';

describe('lading client options, mistakes and signals', { timeout: 120_000 }, () => {
  let node: Node;

  before(async () => {
    node = await startNode();
  });
  after(async () => {
    await node?.stop();
  });

  it('client options go before or after the command', async () => {
    assert.equal((await runCli(['mkdir', 'opts'], node.env)).code, 0);
    const before = await runCli(['--json', 'ls', node.home], node.env);
    const after = await runCli(['ls', '--json', node.home], node.env);
    assert.equal(before.code, 0, before.stderr);
    assert.equal(before.stdout, after.stdout);
    assert.match(before.stdout, /"name":"opts"/);
    const server = await runCli(['--server', 'http://127.0.0.1:9', 'ls'], node.env);
    assert.equal(server.code, 1, server.stderr);
    assert.match(server.stderr, /^lading: cannot reach http:\/\/127\.0\.0\.1:9/, 'the --server before the command was taken');
  });

  it('lading alone, an unknown command: one line, exit 2', async () => {
    const bare = await runCli([], node.env);
    assert.equal(oneLineError({ ...bare, code: bare.code ?? -1 }, 2, /^lading: which command\? lading --help lists them/), null);
    const unknown = await runCli(['frob'], node.env);
    assert.equal(oneLineError({ ...unknown, code: unknown.code ?? -1 }, 2, /^lading: unknown command 'frob'/), null);
  });

  it('a refused name is quoted on one line; mkdir -p of an existing collection says it exists', async () => {
    const bad = await runCli(['mkdir', 'bad\nname'], node.env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^lading: U\+000A LINE FEED is not allowed in a name\.\n$/);
    const missing = await runCli(['put', join(node.dir, 'no\nsuch'), 'x'], node.env);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /^lading: \S*no\\nsuch: no such file or directory\n$/, 'the newline is shown escaped, on one line');
    const first = await runCli(['mkdir', '-p', 'again/below'], node.env);
    assert.match(first.stdout, /^created .*\/again\/below$/m);
    const second = await runCli(['mkdir', '-p', 'again/below'], node.env);
    assert.equal(second.code, 0);
    assert.match(second.stdout, /^\/tz\/home\/alice\/again\/below exists$/m);
  });

  it('logging in to a URL that is not lading says so', async () => {
    const other = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>Not Found</body></html>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const ran = await runCli(['login', url, '--user', 'alice', '--password-stdin'], { HOME: node.dir, XDG_CONFIG_HOME: join(node.dir, 'cfg') });
      assert.equal(oneLineError({ ...ran, code: ran.code ?? -1 }, 1, /^lading: http:\/\/127\.0\.0\.1:\d+ is not a lading server: GET \/api\/status answered 404 \(text\/html\)/), null);
    } finally {
      other.close();
    }
  });

  it('a failed file is named once', async () => {
    const file = join(node.dir, 'once.bin');
    await writeFile(file, 'x');
    assert.equal((await runCli(['put', file, 'once.bin'], node.env)).code, 0);
    await writeFile(file, 'y');
    const again = await runCli(['put', file, 'once.bin'], node.env);
    assert.equal(again.code, 5);
    const line = again.stderr.split('\n')[0]!;
    assert.equal(line.split('/tz/home/alice/once.bin').length - 1, 1, line);
  });

  it('SIGTERM stops a transfer as Ctrl-C does: one line, exit 143, and it resumes', async () => {
    const relay = new Relay(node.url);
    const url = await relay.listen();
    let release = (): void => {};
    relay.triggers.push({ at: 2 * 1024 * 1024, action: () => new Promise<void>((r) => { release = r; }) });
    try {
      const file = join(node.dir, 'term.bin');
      await writeFile(file, randomBytes(8 * 1024 * 1024));
      const run = startCli(['put', '--resumable-above', '1', '--chunk-size', '1', file, 'term.bin'], { ...node.env, LADING_URL: url });
      while (relay.sent < 2 * 1024 * 1024) await sleep(50);
      await sleep(300);
      run.proc.kill('SIGTERM');
      const ran = await run.done;
      assert.equal(ran.code, 143, ran.stderr);
      assert.doesNotMatch(ran.stderr, /\n\s+at /);
      assert.match(ran.stderr, /^lading: stopped by SIGTERM: run the same command again to resume\n$/m);
      release();
      const again = await runCli(['put', '--json', '--resumable-above', '1', '--chunk-size', '1', file, 'term.bin'], { ...node.env, LADING_URL: url });
      assert.equal(again.code, 0, again.stderr);
      const done = again.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { event: string; resumed_from?: number }).find((e) => e.event === 'done');
      assert.ok(done && done.resumed_from! > 0, 'the next run continued the upload');
    } finally {
      release();
      await relay.close();
    }
  });
});
