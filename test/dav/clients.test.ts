/**
 * Real WebDAV clients against `/dav` of a whole node: rclone's webdav backend (vendors
 * other, owncloud and nextcloud) copying, checking and syncing a 1,000-file tree both ways
 * bit-identical; cadaver driven by a script; and a davfs2 mount where FUSE mounting works
 * (skipped with the reason otherwise). Tokens travel in the environment or files, never argv.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Run {
  code: number | null;
  output: string;
}

/** Runs `command` with `args`, `env` added, `input` on its standard input; resolves with its exit code and output. */
function run(command: string, args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString('utf8'); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString('utf8'); });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    // NOTE: a command that reads no input may exit before taking it.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** SHA-256 of every file below `dir`, by relative path. */
async function digests(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = join(e.parentPath, e.name);
    out.set(relative(dir, file), createHash('sha256').update(await readFile(file)).digest('hex'));
  }
  return out;
}

/** A tree of `count` files in nested folders, sizes from 0 to 64 KiB, and two of 1 MiB. */
async function makeTree(dir: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const sub = join(dir, `d${i % 10}`, i % 3 === 0 ? `e${i % 7}` : '');
    await mkdir(sub, { recursive: true });
    const size = i < 2 ? 1024 * 1024 : (i * 7919) % 65536;
    await writeFile(join(sub, `f${i} ünï.bin`), randomBytes(size));
  }
}

describe('WebDAV clients against /dav', () => {
  let s: TestServer;
  let token: string;
  let work: string;
  let davUrl: string;
  before(async () => {
    s = await startTestServer();
    await s.addUser('carol');
    token = await s.login('carol');
    work = await mkdtemp(join(tmpdir(), 'lading-dav-clients-'));
    // NOTE: mount.davfs runs as the davfs2 user, which must reach its cache below this.
    await chmod(work, 0o755);
    davUrl = `${s.url}/dav/${s.zone}/home/carol`;
  });
  after(async () => {
    await s?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const vendor of ['other', 'owncloud', 'nextcloud']) {
    it(`rclone (vendor ${vendor}) copies, checks and syncs a 1,000-file tree both ways bit-identical`, { timeout: 600_000 }, async () => {
      const local = join(work, `tree-${vendor}`);
      await makeTree(local, 1000);
      const obscured = (await run('rclone', ['obscure', '-'], { input: token })).output.trim();
      // NOTE: other signs in with a bearer token, the others with Basic (user name and token).
      const env: Record<string, string> = {
        RCLONE_CONFIG: join(work, 'rclone.conf'), RCLONE_WEBDAV_URL: davUrl, RCLONE_WEBDAV_VENDOR: vendor,
        // Chunked uploads are Nextcloud's own API, not WebDAV.
        RCLONE_WEBDAV_NEXTCLOUD_CHUNK_SIZE: '0',
        ...(vendor === 'other' ? { RCLONE_WEBDAV_BEARER_TOKEN: token } : { RCLONE_WEBDAV_USER: 'carol', RCLONE_WEBDAV_PASS: obscured }),
      };
      const rclone = async (...args: string[]) => {
        const r = await run('rclone', [...args, '--transfers', '8', '--checkers', '16'], { env });
        assert.equal(r.code, 0, `rclone ${args.join(' ')}:\n${r.output}`);
        return r.output;
      };
      const remote = `:webdav:${vendor}`;
      await rclone('copy', local, remote);
      await rclone('check', local, remote);
      const back = join(work, `back-${vendor}`);
      await rclone('copy', remote, back);
      assert.deepEqual(await digests(back), await digests(local), 'the tree copied down is the one copied up');

      // Change the tree: remove, replace and add files, then sync it up and down again.
      const names = [...(await digests(local)).keys()].sort();
      for (const n of names.slice(0, 50)) await rm(join(local, n));
      for (const n of names.slice(50, 100)) await writeFile(join(local, n), randomBytes(1000));
      for (let i = 0; i < 50; i++) await writeFile(join(local, 'd0', `new${i}.txt`), `new ${i}\n`);
      await rclone('sync', local, remote);
      await rclone('check', '--download', local, remote);
      await rclone('sync', remote, back);
      assert.deepEqual(await digests(back), await digests(local), 'the synced tree copied down is the local one');
      const gone = await fetch(`${davUrl}/${encodeURIComponent(names[0]!.split('/')[0]!)}/${names[0]!.split('/').slice(1).map(encodeURIComponent).join('/')}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(gone.status, 404, 'a file sync removed is gone from its path');
      const trash = await fetch(`${s.url}/api/trash`, { headers: { authorization: `Bearer ${token}` } });
      assert.ok((await trash.text()).includes(names[0]!.split('/').at(-1)!), 'a file sync removed is in the trash');
    });
  }

  it('cadaver creates, uploads, lists, sets properties, locks, copies, moves, downloads and deletes', { timeout: 120_000 }, async () => {
    const home = join(work, 'cadaver-home');
    await mkdir(home, { recursive: true });
    await writeFile(join(home, '.netrc'), `machine 127.0.0.1\nlogin carol\npassword ${token}\n`);
    await chmod(join(home, '.netrc'), 0o600);
    await writeFile(join(home, 'hello.txt'), 'hello from cadaver\n');
    const script = [
      'mkcol cad', 'put hello.txt cad/hello.txt', 'ls cad', 'propset cad/hello.txt colour blue', 'propget cad/hello.txt colour',
      'lock cad/hello.txt', 'put hello.txt cad/hello.txt', 'unlock cad/hello.txt', 'copy cad/hello.txt cad/copy.txt',
      'move cad/copy.txt cad/moved.txt', 'get cad/moved.txt out.txt', 'rm cad/hello.txt', 'ls cad', 'quit',
    ].join('\n') + '\n';
    const r = await run('cadaver', ['-t', `${davUrl}/`], { env: { HOME: home }, input: script, cwd: home, timeoutMs: 60_000 });
    assert.doesNotMatch(r.output, /failed|error/i, r.output);
    assert.equal((r.output.match(/succeeded/g) ?? []).length, 12, r.output);
    assert.match(r.output, /Value of colour is: blue/);
    assert.equal(await readFile(join(home, 'out.txt'), 'utf8'), 'hello from cadaver\n');
    const listing = r.output.slice(r.output.lastIndexOf('Listing collection'));
    assert.match(listing, /moved\.txt/);
    assert.doesNotMatch(listing, /hello\.txt/);
    // The property is metadata of the data object, seen by the API.
    const meta = await fetch(`${s.url}/api/metadata/${s.zone}/home/carol/cad/moved.txt`, { headers: { authorization: `Bearer ${token}` } });
    assert.match(await meta.text(), /dav:\{http:\/\/webdav\.org\/cadaver\/custom-properties\/\}colour/);
  });

  it('davfs2 mounts /dav: writes, reads, renames, makes folders, deletes and (where FUSE can) lists through it', { timeout: 180_000 }, async (t) => {
    const fuse = await fuseProblem(work);
    if (fuse.mount) {
      console.log(`davfs2 test skipped: ${fuse.mount}`);
      t.skip(fuse.mount);
      return;
    }
    const mnt = join(work, 'mnt');
    await mkdir(mnt, { recursive: true });
    const conf = await davfsConf(work, 'lading', `${davUrl}/ carol ${token}`);
    const mount = await run('mount', ['-t', 'davfs', '-o', `conf=${conf}`, `${davUrl}/`, mnt], { timeoutMs: 60_000 });
    assert.equal(mount.code, 0, mount.output);
    const bytes = randomBytes(300_000);
    try {
      await mkdir(join(mnt, 'fuse'));
      await writeFile(join(mnt, 'fuse', 'via-fuse.bin'), bytes);
      await writeFile(join(mnt, 'fuse', 'gone.txt'), 'to be deleted\n');
      await rename(join(mnt, 'fuse', 'via-fuse.bin'), join(mnt, 'fuse', 'renamed.bin'));
      assert.equal((await stat(join(mnt, 'fuse', 'renamed.bin'))).size, bytes.length);
      assert.ok((await readFile(join(mnt, 'fuse', 'renamed.bin'))).equals(bytes));
      await rm(join(mnt, 'fuse', 'gone.txt'));
      if (fuse.listing) console.log(`davfs2 listing not checked: ${fuse.listing}`);
      else assert.deepEqual((await readdir(join(mnt, 'fuse'))).sort(), ['renamed.bin']);
    } finally {
      const umount = await run('umount', [mnt], { timeoutMs: 120_000 });
      assert.equal(umount.code, 0, umount.output);
    }
    // umount.davfs waits for davfs2 to upload what it cached.
    const res = await fetch(`${davUrl}/fuse/renamed.bin`, { headers: { authorization: `Bearer ${token}` } });
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), 'what was written through the mount is stored');
    assert.equal((await fetch(`${davUrl}/fuse/gone.txt`, { headers: { authorization: `Bearer ${token}` } })).status, 404);
  });
});

/** A davfs2 configuration with its own secrets file and cache directory; its path. */
async function davfsConf(work: string, name: string, secret: string): Promise<string> {
  const secrets = join(work, `${name}.secrets`);
  await writeFile(secrets, `${secret}\n`);
  await chmod(secrets, 0o600);
  const cache = join(work, `${name}-cache`);
  await mkdir(cache, { recursive: true });
  // NOTE: mount.davfs drops to the davfs2 user, which must be able to write its cache.
  await chmod(cache, 0o777);
  const conf = join(work, `${name}.conf`);
  await writeFile(conf, `secrets ${secrets}\ncache_dir ${cache}\n`);
  return conf;
}

/**
 * What keeps a davfs2 mount from being tested here: `mount`, why mounting cannot be tested (not
 * root, no /dev/fuse, no mount.davfs, or a davfs2 mount of another WebDAV server, `rclone
 * serve webdav`, fails), and `listing`, why listing a directory cannot (FUSE in some
 * virtual machines mounts but fails every readdir with EINVAL, for any server); null when it can.
 */
async function fuseProblem(work: string): Promise<{ mount: string | null; listing: string | null }> {
  if (process.getuid?.() !== 0) return { mount: 'mounting needs root', listing: null };
  try {
    await access('/dev/fuse');
  } catch {
    return { mount: '/dev/fuse does not exist', listing: null };
  }
  if ((await run('sh', ['-c', 'command -v mount.davfs'])).code !== 0) return { mount: 'mount.davfs (davfs2) is not installed', listing: null };
  const dir = join(work, 'canary');
  const mnt = join(work, 'canary-mnt');
  await mkdir(dir, { recursive: true });
  await mkdir(mnt, { recursive: true });
  await writeFile(join(dir, 'canary.txt'), 'canary\n');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const server = spawn('rclone', ['serve', 'webdav', dir, '--addr', `127.0.0.1:${port}`], { stdio: 'ignore', env: { ...process.env, RCLONE_CONFIG: join(work, 'rclone.conf') } });
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const conf = await davfsConf(work, 'canary', `http://127.0.0.1:${port}/ nobody nothing`);
    const mount = await run('mount', ['-t', 'davfs', '-o', `conf=${conf}`, `http://127.0.0.1:${port}/`, mnt], { timeoutMs: 60_000 });
    if (mount.code !== 0) return { mount: `davfs2 cannot mount another WebDAV server (rclone serve webdav) here: ${mount.output.trim()}`, listing: null };
    try {
      if ((await readFile(join(mnt, 'canary.txt'), 'utf8')) !== 'canary\n') return { mount: 'a davfs2 mount of rclone serve webdav does not read its file back here', listing: null };
      try {
        await readdir(mnt);
        return { mount: null, listing: null };
      } catch (err) {
        return { mount: null, listing: `a davfs2 mount of another WebDAV server (rclone serve webdav) cannot list a directory here either (${(err as Error).message})` };
      }
    } finally {
      await run('umount', [mnt], { timeoutMs: 60_000 });
    }
  } finally {
    server.kill();
  }
}
