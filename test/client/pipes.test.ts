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
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanEnv } from '../cli/run-lading.ts';
import { LADING_BIN } from '../helpers/process.ts';
import { type Node, makeTree, runCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;

/** Runs `script` in bash with `lading` on hand as "$L"; resolves with its outputs and its code. */
function shell(script: string, env: Record<string, string>, input?: Buffer): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn('bash', ['-c', `set -o pipefail; ${script}`], { env: cleanEnv({ ...env, L: LADING_BIN }), stdio: ['pipe', 'pipe', 'pipe'] });
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
});
