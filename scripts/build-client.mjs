// Builds the client in one file: `dist/lading`, a Node.js 24 single executable application
// that runs on a machine with no Node at all and does every client command (login, ls, put,
// get, share, …). The client's code is bundled by esbuild into one CommonJS script (what
// Node 24's single executable applications run), which Node turns into a blob
// (`--experimental-sea-config`) and postject injects into a copy of the Node 24 binary this
// project installs. The server and the admin commands stay out: the composition root is
// replaced by a module that is never loaded, and `lading` built this way registers only the
// client commands (see LADING_BUILD in src/wiring/version.ts).
//
// Usage: npm run build:client            (writes dist/lading)
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const bundle = join(dist, 'lading-client.cjs');
const blob = join(dist, 'lading-client.blob');
const output = join(dist, 'lading');

const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
let commit = process.env.LADING_BUILD_COMMIT || null;
if (!commit) {
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    // NOTE: built outside a checkout: --version then names no commit.
  }
}

// NOTE: the Node that runs this script is the one injected into: the blob must come from the
// same Node version as the binary that carries it.
if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(`build-client: Node.js 24 is needed, this is ${process.version}: run it with node_modules/.bin/node`);
  process.exit(1);
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

/** Replaces the server's composition root, which the client commands never load. */
const noServer = {
  name: 'no-server',
  setup(build) {
    build.onResolve({ filter: /[\\/]wiring[\\/]index\.ts$/ }, (args) => ({ path: args.path, namespace: 'no-server' }));
    build.onLoad({ filter: /.*/, namespace: 'no-server' }, () => ({
      contents: 'throw new Error("this single-file lading holds the client commands only: install the lading package to run the server and its administration");',
      loader: 'js',
    }));
  },
};

const built = await esbuild.build({
  entryPoints: [join(root, 'src', 'cli', 'main.ts')],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  outfile: bundle,
  minify: true,
  legalComments: 'none',
  define: { LADING_BUILD: JSON.stringify({ version, commit, clientOnly: true }) },
  plugins: [noServer],
  logLevel: 'warning',
  metafile: true,
});
const server = Object.keys(built.metafile.inputs).filter((f) => /src\/(wiring\/(server|deps|drivers)|http|drivers|identity)\//.test(f));
if (server.length > 0) {
  console.error(`build-client: the client bundle would hold server code: ${server.slice(0, 5).join(', ')}`);
  process.exit(1);
}

const config = join(dist, 'sea-config.json');
writeFileSync(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });

copyFileSync(process.execPath, output);
chmodSync(output, 0o755);
execFileSync(join(root, 'node_modules', '.bin', 'postject'), [
  output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
], { stdio: ['ignore', 'ignore', 'inherit'] });
rmSync(blob);
rmSync(config);

const mib = (statSync(output).size / 1024 / 1024).toFixed(1);
console.log(`built ${output} (${mib} MiB; lading ${version}${commit ? ` at ${commit.slice(0, 12)}` : ''}; client bundle ${(statSync(bundle).size / 1024).toFixed(0)} KiB)`);
