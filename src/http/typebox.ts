/**
 * TypeBox (`@sinclair/typebox`), the schema builder of the routes and the configuration: its
 * values (`Type`, `KindGuard`) come from here, its types straight from the package (`import
 * type`). They are loaded from the one-file bundle that `npm install` and `npm ci` make
 * (`scripts/bundle-typebox.mjs`) at `node_modules/.cache/lading/typebox-<version>.mjs` when it
 * is there for the installed version, else from the package itself.
 *
 * NOTE: the package's ES build is some 200 modules, and resolving and linking them took ~90 ms
 * of a server's ~450 ms start; the bundle of the same code loads in ~5 ms. The schemas either
 * builds are the same plain objects, marked with TypeBox's global symbols, so Fastify, Ajv and
 * TypeBox's own value checker (loaded from the package) take them alike.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as TypeBox from '@sinclair/typebox';

/** lading's own directory, whose `node_modules/.cache/lading/` holds the bundle. */
const ROOT = join(import.meta.dirname, '..', '..');

/** The installed TypeBox's version, from the package.json above its entry point. */
function installedVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('@sinclair/typebox')));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === '@sinclair/typebox' && manifest.version) return manifest.version;
    }
    if (dirname(dir) === dir) throw new Error('no package.json of @sinclair/typebox');
    dir = dirname(dir);
  }
}

/** Where the bundle of the installed TypeBox is, whether or not it was made. */
export function bundlePath(): string {
  return join(ROOT, 'node_modules', '.cache', 'lading', `typebox-${installedVersion()}.mjs`);
}

async function load(): Promise<{ lib: typeof TypeBox; source: 'bundle' | 'package' }> {
  try {
    return { lib: (await import(pathToFileURL(bundlePath()).href)) as typeof TypeBox, source: 'bundle' };
  } catch {
    // NOTE: no bundle (installed with --ignore-scripts, or another TypeBox version since).
    return { lib: await import('@sinclair/typebox'), source: 'package' };
  }
}

const loaded = await load();

/** Where TypeBox was loaded from: the bundle, or the package when there is none. */
export const TYPEBOX_SOURCE = loaded.source;
export const Type: typeof TypeBox.Type = loaded.lib.Type;
export const KindGuard: typeof TypeBox.KindGuard = loaded.lib.KindGuard;
