/**
 * A local failure that no retry mends stops `lading get` at once with one line: a download
 * onto a small tmpfs that fills up (ENOSPC) says so once — with what was received and what
 * was not attempted — and leaves no `.lading-part` file behind; a destination that cannot be
 * written (EACCES) likewise. The real CLI against a real `lading serve`. Mounting needs
 * root (or CAP_SYS_ADMIN): where it is not allowed, the ENOSPC test is skipped, saying why.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, makeTree, runCli, startNode } from './transfer-support.ts';

/** Mounts a tmpfs of `size` on `dir`; null when allowed, else why not. */
function mountTmpfs(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `cannot mount a tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim() || 'mount failed'})`;
  }
}

async function partFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.lading-part'));
}

describe('lading get onto a local disk it cannot write', { timeout: 120_000 }, () => {
  let node: Node;

  before(async () => {
    node = await startNode();
    // 60 files of up to 200 KiB: about 6 MiB, three times the tmpfs.
    await makeTree(join(node.dir, 'src'), 60, 200 * 1024);
    const up = await runCli(['put', '-r', '-q', join(node.dir, 'src'), 'tree'], node.env);
    assert.equal(up.code, 0, up.stderr);
  });
  after(async () => {
    await node?.stop();
  });

  it('a full disk (ENOSPC): one line, exit 1, no part files', async (t) => {
    const mnt = join(node.dir, 'small');
    await mkdir(mnt);
    const why = mountTmpfs(mnt, '2m');
    if (why) {
      process.stdout.write(`# skipped: ${why}\n`);
      t.skip(why);
      return;
    }
    try {
      const ran = await runCli(['get', '-r', 'tree', join(mnt, 'tree')], node.env);
      assert.equal(ran.code, 1, ran.stderr);
      const lines = ran.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, `one line, not ${lines.length}: ${ran.stderr}`);
      assert.match(lines[0]!, /^lading: .*no space left on the device \(ENOSPC\); stopped: received \d+ files? .*; 1 failed(; \d+ cut off)?(; \d+ not attempted)?$/);
      assert.deepEqual(await partFiles(mnt), [], 'no part file is left behind');
    } finally {
      execFileSync('umount', [mnt]);
    }
  });

  it('a destination it may not write (EACCES): one line, exit 1, no part files', async (t) => {
    if (process.getuid?.() === 0) {
      // NOTE: root writes anywhere; a read-only tmpfs gives the same kind of failure (EROFS).
      const ro = join(node.dir, 'ro');
      await mkdir(ro);
      const why = mountTmpfs(ro, '4m');
      if (why) {
        t.skip(why);
        return;
      }
      try {
        execFileSync('mount', ['-o', 'remount,ro', ro]);
        const ran = await runCli(['get', '-r', 'tree', join(ro)], node.env);
        assert.equal(ran.code, 1, ran.stderr);
        assert.equal(ran.stderr.split('\n').filter((l) => l !== '').length, 1, ran.stderr);
        assert.match(ran.stderr, /read-only file system \(EROFS\)/);
      } finally {
        execFileSync('umount', [ro]);
      }
      return;
    }
    const locked = join(node.dir, 'locked');
    await mkdir(locked);
    await chmod(locked, 0o500);
    const ran = await runCli(['get', '-r', 'tree', locked], node.env);
    assert.equal(ran.code, 1, ran.stderr);
    assert.equal(ran.stderr.split('\n').filter((l) => l !== '').length, 1, ran.stderr);
    assert.match(ran.stderr, /permission denied \(EACCES\)/);
    assert.deepEqual(await partFiles(locked), []);
  });
});
