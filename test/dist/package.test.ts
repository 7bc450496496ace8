/**
 * The package to install from: `npm pack` gives a tarball with only what lading needs, and
 * `npm install -g` of it into a fresh prefix gives a `lading` on PATH that says its version and
 * commit, and whose client commands work against a server. The tarball is built from a copy of
 * the tree, so the `lib/` that packing compiles never appears in the checkout other tests run.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { checkoutCommit, VERSION } from '../../src/wiring/version.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
/** The Node 24 that runs this test: the one a machine installing lading would have. */
const NODE_DIR = dirname(process.execPath);

describe('the npm package', { timeout: 600_000 }, () => {
  let work: string;
  let tarball: string;
  let prefix: string;
  let files: string[];
  const commit = checkoutCommit(ROOT) ?? 'f'.repeat(40);

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'lading-pack-'));
    const tree = join(work, 'tree');
    for (const entry of ['bin', 'src', 'scripts', 'examples', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.pack.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) {
      await cp(join(ROOT, entry), join(tree, entry), { recursive: true });
    }
    await symlink(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    const env = { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH}`, LADING_BUILD_COMMIT: commit };
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: tree, env, maxBuffer: 64 * 1024 * 1024 });
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info[0]!.filename);
    files = info[0]!.files.map((f) => f.path);
    prefix = join(work, 'prefix');
    await mkdir(prefix);
    // NOTE: from npm's cache where it can (the registry otherwise): the same packages npm ci took.
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], {
      cwd: work, env: { ...process.env, PATH: `${NODE_DIR}${delimiter}${process.env.PATH}` }, maxBuffer: 64 * 1024 * 1024, timeout: 480_000,
    });
  });
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('holds lading compiled, its licence and changelog, and no tests, benchmarks or TypeScript sources', () => {
    for (const wanted of ['bin/lading', 'lib/cli/main.js', 'lib/wiring/server.js', 'lib/web/app/main.tsx', 'lib/core/name-rule.ts', 'LICENSE', 'CHANGELOG.md', 'README.md', 'build-info.json', 'examples/lading.service']) {
      assert.ok(files.includes(wanted), `${wanted} is in the package`);
    }
    const stray = files.filter((f) => /^(test|bench|src|\.ci)\//.test(f) || f.endsWith('.test.ts'));
    assert.deepEqual(stray, []);
  });

  it('installs a `lading` on PATH that says its version and the commit it was built from', async () => {
    const bin = join(prefix, 'bin', 'lading');
    const { stdout } = await run(bin, ['--version'], { env: { PATH: `${join(prefix, 'bin')}${delimiter}${NODE_DIR}${delimiter}/usr/bin:/bin` } });
    assert.equal(stdout.trim(), `${VERSION} (commit ${commit.slice(0, 12)})`);
  });

  describe('against a server', () => {
    let server: TestServer;
    before(async () => { server = await startTestServer(); });
    after(async () => { await server.stop(); });

    it('its client commands log in, upload and list', async () => {
      await server.addUser('alice', 'pw-alice');
      const home = join(work, 'home');
      await mkdir(home, { recursive: true });
      const env = { HOME: home, PATH: `${join(prefix, 'bin')}${delimiter}${NODE_DIR}${delimiter}/usr/bin:/bin` };
      const bin = join(prefix, 'bin', 'lading');
      const login = execFile(bin, ['login', server.url, '--user', 'alice', '--password-stdin'], { env });
      login.stdin!.end('pw-alice\n');
      const code = await new Promise((resolve) => login.on('exit', resolve));
      assert.equal(code, 0, 'lading login succeeds');
      await writeFile(join(work, 'hello.txt'), 'hello from the package\n');
      await run(bin, ['put', join(work, 'hello.txt'), 'hello.txt'], { env });
      const listed = await run(bin, ['ls'], { env });
      assert.match(listed.stdout, /hello\.txt/);
      const res = await fetch(server.home('alice', 'hello.txt') + '?download=true', { headers: { authorization: `Bearer ${await server.login('alice')}` } });
      assert.equal(await res.text(), 'hello from the package\n');
      assert.deepEqual((await readdir(join(prefix, 'lib', 'node_modules', 'lading'))).includes('src'), false, 'runs the compiled lib/, not sources');
    });
  });
});
