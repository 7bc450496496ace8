/**
 * Outages and revocations, as a batch job meets them — the real CLI against a real `lading
 * serve`: a server killed in the middle of a tree and back 40 s later costs one status line
 * and the tree arrives complete; `--retries 0` gives up at once; a revoked token stops the run
 * with one line that counts what was not attempted (exit 3).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { Relay } from '../e2e/tus-support.ts';
import { type Node, makeTree, readTree, runCli, startNode } from './transfer-support.ts';

const OUTAGE_MS = 40_000;

describe('lading put through an outage', { timeout: 240_000 }, () => {
  let node: Node;
  let relay: Relay;
  let tree: Map<string, string>;
  let src: string;

  before(async () => {
    node = await startNode();
    relay = new Relay(node.url);
    src = join(node.dir, 'src');
    tree = await makeTree(src, 300, 256 * 1024);
  });
  after(async () => {
    await relay?.close();
    await node?.stop();
  });

  it('a server away for 40 s mid-tree: one status line, and the tree arrives complete', async () => {
    const url = await relay.listen();
    let outage: Promise<void> = Promise.resolve();
    // Once a tenth of the tree went through, the server is killed and comes back 40 s later.
    relay.triggers.push({
      at: 4 * 1024 * 1024,
      action: () => {
        outage = (async () => {
          await node.kill();
          await sleep(OUTAGE_MS);
          await node.restart();
        })();
      },
    });
    const started = Date.now();
    const ran = await runCli(['put', '-r', '--progress-interval', '600', src, 'through'], { ...node.env, LADING_URL: url });
    await outage;
    assert.equal(ran.code, 0, ran.stderr);
    assert.ok(Date.now() - started >= OUTAGE_MS, 'the run outlasted the outage');
    const retries = ran.stderr.split('\n').filter((l) => /trying again/.test(l));
    assert.equal(retries.length, 1, `one status line for the outage:\n${ran.stderr}`);
    assert.match(retries[0]!, /^lading: cannot reach http:\/\/127\.0\.0\.1:\d+: \S+; trying again in [\d.]+ s/);
    assert.match(ran.stderr, /^lading: sent \d+ files .*$/m);
    assert.doesNotMatch(ran.stderr, /failed/);

    const back = join(node.dir, 'back');
    const down = await runCli(['get', '-r', 'through', back], node.env);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(new Map([...(await readTree(back)).files].sort()), new Map([...tree].sort()), 'every file, bit-identical');
  });

  it('--retries 0 gives up at the first failure; a revoked token stops the run, counting what was not attempted', async () => {
    const gone = await runCli(['put', '-r', '--retries', '0', src, 'never'], { ...node.env, LADING_URL: 'http://127.0.0.1:9' });
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.split('\n').filter((l) => l !== '').length, 1, gone.stderr);
    assert.match(gone.stderr, /^lading: cannot reach http:\/\/127\.0\.0\.1:9/);

    // A token of its own, revoked (logged out) once 2 MiB of the tree went through.
    const login = await fetch(`${node.url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
    const token = ((await login.json()) as { Response: { data: { token: string } } }).Response.data.token;
    const revoker = new Relay(node.url);
    const url = await revoker.listen();
    revoker.triggers.push({
      at: 2 * 1024 * 1024,
      action: async () => {
        const out = await fetch(`${node.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
        await out.body?.cancel();
      },
    });
    try {
      const revoked = await runCli(['put', '-r', '-j', '2', src, 'revoked'], { ...node.env, LADING_URL: url, LADING_TOKEN: token });
      assert.equal(revoked.code, 3, revoked.stderr);
      const lines = revoked.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, revoked.stderr);
      const m = /^lading: .*; stopped: sent (\d+) files? .*; 1 failed(; \d+ cut off)?; (\d+) not attempted$/.exec(lines[0]!);
      assert.ok(m, lines[0]);
      assert.ok(Number(m[1]) > 0 && Number(m[3]) > 0, lines[0]);
    } finally {
      await revoker.close();
    }
  });
});
