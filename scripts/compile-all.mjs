/**
 * Preloaded by `warm-compile-cache.mjs` into one `bin/lading --help`: imports every module under
 * `src/` (or `lib/` in an installed package) but the command line's entry point (which that run loads itself) and the web app's
 * browser code, so that Node compiles each into its compile cache, then writes the cache. A
 * module that fails to load (an optional dependency left out) is skipped: its first use
 * compiles it as before. lading's modules do nothing when imported but define.
 */
import { existsSync, readdirSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// NOTE: an installed package runs lading compiled to JavaScript in lib/ (build-package.mjs).
const [base, ext] = existsSync(join(root, 'lib', 'cli', 'main.js')) ? ['lib', '.js'] : ['src', '.ts'];
const skipped = new Set([join(base, 'cli', `main${ext}`), join(base, 'web', 'app')]);
const modules = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (skipped.has(relative(root, path))) continue;
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith(ext) && !entry.name.endsWith('.d.ts')) modules.push(path);
  }
};
walk(join(root, base));
for (const path of modules.sort()) {
  await import(pathToFileURL(path).href).catch(() => {});
}
flushCompileCache();
