/**
 * Run by `npm install` and `npm ci` (the `postinstall` script): bundles TypeBox
 * (`@sinclair/typebox`, the schema builder of lading's routes and configuration) into one
 * ES module at `node_modules/.cache/lading/typebox-<version>.mjs`, which
 * `src/http/typebox.ts` loads instead of the package: the package's ES build is some 200
 * modules, and resolving and linking them took ~90 ms of a server's start, the bundle ~5 ms.
 *
 * Plain JavaScript, so that any Node.js runs it. Never fails the install: when the bundle
 * cannot be made it says so in one line, and lading loads the package itself (the same
 * schemas, a slower start).
 */
import { mkdir, readFile, rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The installed TypeBox's version, read from the package.json above its entry point. */
async function typeboxVersion() {
  let dir = dirname(createRequire(join(root, 'package.json')).resolve('@sinclair/typebox'));
  for (;;) {
    const manifest = await readFile(join(dir, 'package.json'), 'utf8').then(JSON.parse, () => null);
    if (manifest?.name === '@sinclair/typebox') return manifest.version;
    if (dirname(dir) === dir) throw new Error('no package.json of @sinclair/typebox above its entry point');
    dir = dirname(dir);
  }
}

try {
  const { build } = await import('esbuild');
  const out = join(root, 'node_modules', '.cache', 'lading', `typebox-${await typeboxVersion()}.mjs`);
  await mkdir(dirname(out), { recursive: true });
  // NOTE: written aside and renamed, so a start never loads half a file.
  await build({
    stdin: { contents: "export * from '@sinclair/typebox';", resolveDir: root, loader: 'js' },
    bundle: true, format: 'esm', platform: 'node', target: 'node20', outfile: `${out}.part`, logLevel: 'warning',
  });
  await rename(`${out}.part`, out);
} catch (err) {
  console.warn(`lading: could not bundle TypeBox (${err instanceof Error ? err.message : String(err)}); lading loads the package instead, which adds ~0.1 s to each start.`);
}
