/**
 * `bin/lading` on a machine without Node 24 (before `npm install`, or with only an older
 * system Node): one line saying what is needed and how to get it, never Node's
 * ERR_UNKNOWN_FILE_EXTENSION stack. The old Node is a test double: a script that answers the
 * version questions as Node 20 would.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LADING_BIN } from '../helpers/process.ts';

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lading-node-version-'));
  // A checkout without node_modules: bin/lading alone.
  await mkdir(join(dir, 'checkout', 'bin'), { recursive: true });
  await copyFile(LADING_BIN, join(dir, 'checkout', 'bin', 'lading'));
  await mkdir(join(dir, 'old-node'));
  const fake = join(dir, 'old-node', 'node');
  await writeFile(fake, '#!/bin/sh\nif [ "$1" = "-p" ]; then echo 20; else echo v20.11.1; fi\n');
  await chmod(fake, 0o755);
});

after(() => rm(dir, { recursive: true, force: true }));

describe('bin/lading without Node 24', () => {
  it('says in one line that Node 24 is needed and how to get it', async () => {
    const env = { PATH: `${join(dir, 'old-node')}:/usr/bin:/bin` };
    const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(join(dir, 'checkout', 'bin', 'lading'), ['serve'], { env }, (err, stdout, stderr) => {
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      });
    });
    assert.equal(res.code, 1);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^lading: Node\.js 24 or later is needed, found v20\.11\.1 at [^\n]+: run 'npm ci --omit=dev' in [^\n]+\n$/);
    assert.doesNotMatch(res.stderr, /ERR_UNKNOWN_FILE_EXTENSION|\n\s+at /);
  });
});
