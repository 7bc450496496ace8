/**
 * The compile cache `npm install` fills (`scripts/warm-compile-cache.mjs`, its `postinstall`):
 * a first `lading serve` on it strips no module's types, as one on an empty cache strips every
 * module it loads. Node tells what its compile cache does with NODE_DEBUG_NATIVE=COMPILE_CACHE.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnServe, stopProcess } from '../helpers/process.ts';

const root = join(import.meta.dirname, '..', '..');
const dir = await mkdtemp(join(tmpdir(), 'lading-compile-cache-'));
after(() => rm(dir, { recursive: true, force: true }));

/** The src modules a first `lading serve` (to its first answer) had to type-strip with `cache`. */
async function strippedAtStart(cache: string): Promise<string[]> {
  const { proc, url, output } = await spawnServe(await mkdtemp(join(dir, 'data-')), {
    ...process.env, NODE_COMPILE_CACHE: cache, NODE_DEBUG_NATIVE: 'COMPILE_CACHE', NODE_OPTIONS: '',
  });
  try {
    assert.equal((await fetch(new URL('/api/status', url))).status, 200);
  } finally {
    await stopProcess(proc);
  }
  return [...output().matchAll(/no transpile cache for StrippedTypeScript (file:\S+\/src\/\S+)/g)].map((m) => m[1]!);
}

describe('the compile cache the install fills', () => {
  it('spares a first start every type-stripping, which an empty cache costs it for each module', async () => {
    const warmed = join(dir, 'warmed');
    await promisify(execFile)(process.execPath, [join(root, 'scripts', 'warm-compile-cache.mjs'), warmed]);
    const empty = join(dir, 'empty');
    await mkdir(empty);
    const cold = await strippedAtStart(empty);
    assert.ok(cold.length >= 50, `an empty cache: ${cold.length} modules stripped (the probe sees Node's cache at work)`);
    assert.deepEqual(await strippedAtStart(warmed), [], 'the filled cache: none');
  });
});
