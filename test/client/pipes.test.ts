/**
 * `lading` in pipes, as a Unix tool: a reader that goes away (`| head`) ends the command
 * quietly — no message, no stack trace, the exit status a shell shows for a tool ended by
 * SIGPIPE (141) — and `-` is standard output for `get` and standard input for `put`, a stream
 * of unknown length going up through the deferred-length resumable upload. The real CLI in a
 * real shell pipeline against a real `lading serve`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { cleanEnv } from '../cli/run-lading.ts';
import { CLIENT_BIN } from '../helpers/process.ts';
import { type Node, makeTree, runCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;

/** Runs `script` in bash with `lading` on hand as "$L"; resolves with its outputs and its code. */
function shell(script: string, env: Record<string, string>, input?: Buffer): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn('bash', ['-c', `set -o pipefail; ${script}`], { env: cleanEnv({ ...env, L: CLIENT_BIN }), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => out.push(c));
    proc.stderr.on('data', (c) => { stderr += String(c); });
    proc.stdin.on('error', () => {});
    proc.stdin.end(input ?? Buffer.alloc(0));
    proc.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('lading in pipes', { timeout: 180_000 }, () => {
  let node: Node;

  before(async () => {
    node = await startNode();
    await makeTree(join(node.dir, 'many'), 700, 64);
    const up = await runCli(['put', '-r', '-q', join(node.dir, 'many'), 'many'], node.env);
    assert.equal(up.code, 0, up.stderr);
  });
  after(async () => {
    await node?.stop();
  });

  it('ls -l | head and get -r --json | head end quietly: no message, status 141 as for SIGPIPE', async () => {
    // NOTE: several times, since whether the reader has gone before the first write is a race.
    for (let i = 0; i < 3; i++) {
      const ls = await shell('"$L" ls -l many/d1 | head -n 1; echo "status ${PIPESTATUS[0]}" >&2', node.env);
      assert.equal(ls.stdout.toString().split('\n').length, 2, ls.stdout.toString());
      assert.match(ls.stderr, /^status (0|141)\n$/, ls.stderr);
    }
    // A listing longer than a pipe holds: the writer meets the closed pipe for certain.
    const big = await shell('for i in 1 2 3 4 5 6 7; do "$L" ls -l many/d$((i - 1)); done | head -n 1; echo "status ${PIPESTATUS[0]}" >&2', node.env);
    assert.equal(big.stderr, 'status 141\n', 'a later ls meets the closed pipe and ends quietly');
    const get = await shell(`"$L" get -r --json many ${join(node.dir, 'back')} | head -n 3; echo "status \${PIPESTATUS[0]}" >&2`, node.env);
    assert.equal(get.stdout.toString().trim().split('\n').length, 3);
    assert.equal(get.stderr, 'status 141\n', 'the get ends at once, quietly, when its reader has gone');
  });

  it('- is standard input for put and standard output for get, both verified', async () => {
    const hi = await shell('cd "$D" && echo hi | "$L" put - hi.txt && "$L" get hi.txt - && ls', { ...node.env, D: node.dir });
    assert.equal(hi.code, 0, hi.stderr);
    assert.equal(hi.stdout.toString().split('\n')[0], 'hi', hi.stdout.toString());
    assert.doesNotMatch(hi.stdout.toString(), /^-$/m, 'no file named -');
    assert.match(hi.stderr, /^lading: sent standard input as \/tz\/home\/alice\/hi\.txt \(3 B, sha256 [0-9a-f]{64}\)$/m);

    // Longer than a block (1 MiB here), of a length the client learns only at its end: the
    // deferred-length resumable upload; once not a multiple of the block, once exactly two.
    for (const [name, bytes] of [['odd.bin', randomBytes(5 * MIB + 17)], ['even.bin', randomBytes(2 * MIB)]] as const) {
      const up = await shell(`cat | "$L" put --chunk-size 1 - ${name}`, node.env, bytes);
      assert.equal(up.code, 0, up.stderr);
      const res = await fetch(`${node.url}/api/registered${node.home}/${name}?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
      assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(bytes), `${name} is stored whole`);
      const down = await shell(`"$L" get ${name} - | cat`, node.env);
      assert.equal(down.code, 0, down.stderr);
      assert.equal(down.stderr, '');
      assert.equal(sha(down.stdout), sha(bytes), `${name} comes back whole on standard output`);
    }
    const empty = await shell('"$L" put - empty.bin < /dev/null && "$L" get empty.bin - | wc -c', node.env);
    assert.equal(empty.code, 0, empty.stderr);
    assert.equal(empty.stdout.toString().trim(), '0');
    const exists = await shell('echo again | "$L" put - hi.txt', node.env);
    assert.equal(exists.code, 5, exists.stderr);
    assert.match(exists.stderr, /^lading: .*exists/);
  });

  it('--bwlimit holds a stream to its rate both ways, and a share link\'s download too', async () => {
    const bytes = randomBytes(3 * MIB);
    let t0 = Date.now();
    const up = await shell('cat | "$L" put --bwlimit 1M - limited.bin', node.env, bytes);
    const upMs = Date.now() - t0;
    assert.equal(up.code, 0, up.stderr);
    // 3 MiB at 1 MiB/s, less the first burst: at least 2.5 s.
    assert.ok(upMs >= 2500, `3 MiB of standard input went up in ${upMs} ms at 1 MiB/s`);
    t0 = Date.now();
    const down = await shell('"$L" get --bwlimit 2M limited.bin - | cat', node.env);
    const downMs = Date.now() - t0;
    assert.equal(down.code, 0, down.stderr);
    assert.equal(sha(down.stdout), sha(bytes));
    assert.ok(downMs >= 1200, `3 MiB came out on standard output in ${downMs} ms at 2 MiB/s`);
    const created = await runCli(['share', 'create', 'limited.bin'], node.env);
    assert.equal(created.code, 0, created.stderr);
    const link = created.stdout.split('\n')[0]!;
    t0 = Date.now();
    const shared = await shell(`"$L" get --bwlimit 2M '${link}' - | cat`, { HOME: node.dir, XDG_CONFIG_HOME: join(node.dir, 'nobody') });
    const sharedMs = Date.now() - t0;
    assert.equal(shared.code, 0, shared.stderr);
    assert.equal(sha(shared.stdout), sha(bytes));
    assert.ok(sharedMs >= 1200, `3 MiB came from the link in ${sharedMs} ms at 2 MiB/s`);
  });
});
