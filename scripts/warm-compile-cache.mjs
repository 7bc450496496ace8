/**
 * Run by `npm install` and `npm ci` (the `postinstall` script, after the TypeBox bundle): fills
 * the compile cache that `bin/lading` uses, `node_modules/.cache/lading/compile-cache`, with
 * every module of lading's server and command line, type-stripped and compiled, so that the
 * first `lading serve` after an install starts as fast and as small as the later ones. Without
 * it that start also loaded Node's type stripper and kept it for the process's life: ~0.25 s
 * more to the first answer and ~14 MiB more held (bench/README.md).
 *
 * It runs `bin/lading --help` once with `compile-all.mjs` preloaded: the cache is keyed by
 * Node's version and the V8 flags a process starts with, so it must be filled by a process
 * started the way `bin/lading` starts one. Plain JavaScript, so that any Node.js runs it.
 * Never fails the install: when the cache cannot be filled it says so in one line, and the
 * first start fills it as before.
 *
 * Usage: node scripts/warm-compile-cache.mjs [cache-dir]   (the tests name another directory)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.argv[2] || join(root, 'node_modules', '.cache', 'lading', 'compile-cache');
const preload = pathToFileURL(join(root, 'scripts', 'compile-all.mjs')).href;

try {
  mkdirSync(cache, { recursive: true });
  const env = { ...process.env, NODE_COMPILE_CACHE: cache, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${preload}`.trim() };
  delete env.NODE_DISABLE_COMPILE_CACHE;
  const run = spawnSync(join(root, 'bin', 'lading'), ['--help'], { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error((run.stderr || `exit ${run.status}`).trim().split('\n')[0]);
} catch (err) {
  console.warn(`lading: could not fill the compile cache (${err instanceof Error ? err.message : String(err)}); the first start fills it instead, ~0.25 s slower.`);
}
