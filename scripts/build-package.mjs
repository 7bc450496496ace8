// Run before `npm pack` (the `prepack` script): Node does not strip the types of modules under
// `node_modules`, which is where an installed lading lives, so the package carries lading's
// modules compiled to JavaScript in `lib/` (same layout as `src/`, imports rewritten to `.js`),
// the web app's browser sources beside them (esbuild bundles those at the first visit, as from
// a checkout), and `build-info.json` with the commit it was built from (`lading --version`).
// `--remove` deletes what it made, after packing (the `postpack` script).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const lib = join(root, 'lib');
const info = join(root, 'build-info.json');
rmSync(lib, { recursive: true, force: true });
rmSync(info, { force: true });
if (!process.argv.includes('--remove')) {
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'tsconfig.pack.json')], { stdio: 'inherit' });
  cpSync(join(root, 'src', 'web', 'app'), join(lib, 'web', 'app'), { recursive: true });
  // NOTE: the app imports the name rule from the core as TypeScript, which esbuild bundles with it.
  cpSync(join(root, 'src', 'core', 'name-rule.ts'), join(lib, 'core', 'name-rule.ts'));
  // NOTE: LADING_BUILD_COMMIT names it for a build from a copy of the tree outside git.
  let commit = process.env.LADING_BUILD_COMMIT || null;
  if (!commit) try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    // NOTE: packing outside a checkout leaves the commit unknown; --version then shows none.
  }
  writeFileSync(info, `${JSON.stringify({ commit })}\n`);
}
