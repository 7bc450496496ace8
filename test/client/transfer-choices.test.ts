/**
 * What rclone, aws-cli and icommands users reach for, with the real CLI against a real `lading
 * serve`: `--dry-run` says what would go and sends nothing; entries a tree cannot send (a link
 * to a directory, a broken link, a FIFO) are each named in a warning, and `-L` follows the
 * directory link; `--include`/`--exclude` choose files by glob; `get` gives files the
 * server's modification time; `--bwlimit` holds the transfers to a rate; `ls -R` and `ls -lh`
 * list as ls does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, runCli, startNode } from './transfer-support.ts';

async function exists(node: Node, path: string): Promise<boolean> {
  const res = await fetch(`${node.url}/api/registered${path}`, { headers: { authorization: `Bearer ${node.token}` } });
  await res.body?.cancel();
  return res.status === 200;
}

describe('lading put and get: dry runs, skipped entries, filters, times, listings', { timeout: 120_000 }, () => {
  let node: Node;
  let src: string;

  before(async () => {
    node = await startNode();
    src = join(node.dir, 'src');
    await mkdir(join(src, 'raw'), { recursive: true });
    await mkdir(join(node.dir, 'elsewhere'));
    await writeFile(join(src, 'a.h5'), 'a'.repeat(3000));
    await writeFile(join(src, 'b.txt'), 'b');
    await writeFile(join(src, 'raw', 'c.h5'), 'c');
    await writeFile(join(node.dir, 'elsewhere', 'linked.txt'), 'l');
    await symlink(join(node.dir, 'elsewhere'), join(src, 'dirlink'));
    await symlink(join(src, 'b.txt'), join(src, 'filelink.txt'));
    await symlink(join(node.dir, 'gone'), join(src, 'broken'));
    execFileSync('mkfifo', [join(src, 'pipe')]);
  });
  after(async () => {
    await node?.stop();
  });

  it('--dry-run lists what would go and sends nothing', async () => {
    const ran = await runCli(['put', '-r', '--dry-run', src, 'dry'], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(ran.stdout.trim().split('\n').map((l) => l.split(' -> ')[1]).sort(),
      ['a.h5', 'b.txt', 'filelink.txt', 'raw/c.h5'].map((f) => `${node.home}/dry/${f}`));
    assert.match(ran.stderr, /^lading: dry run: would send 4 files \(2\.93 KiB\); nothing was transferred$/m);
    assert.equal(await exists(node, `${node.home}/dry`), false, 'not even the collection was made');
  });

  it('each skipped entry is named; -L follows a link to a directory', async () => {
    const ran = await runCli(['put', '-r', '-q', src, 'tree'], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    const warnings = ran.stderr.split('\n').filter((l) => l !== '').sort();
    assert.deepEqual(warnings, [
      `lading: warning: skipped ${join(src, 'broken')}: a broken symbolic link`,
      `lading: warning: skipped ${join(src, 'dirlink')}: a symbolic link to a directory (-L follows it)`,
      `lading: warning: skipped ${join(src, 'pipe')}: a FIFO`,
    ]);
    assert.equal(await exists(node, `${node.home}/tree/filelink.txt`), true);
    assert.equal(await exists(node, `${node.home}/tree/dirlink/linked.txt`), false);
    const followed = await runCli(['put', '-r', '-q', '-L', src, 'tree'], node.env);
    assert.equal(followed.code, 0, followed.stderr);
    assert.equal(await exists(node, `${node.home}/tree/dirlink/linked.txt`), true);
  });

  it('--include and --exclude choose files by glob, both ways', async () => {
    const up = await runCli(['put', '-r', '-q', '--include', '*.h5', '--exclude', 'raw/**', src, 'chosen'], node.env);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(await exists(node, `${node.home}/chosen/a.h5`), true);
    assert.equal(await exists(node, `${node.home}/chosen/b.txt`), false);
    assert.equal(await exists(node, `${node.home}/chosen/raw/c.h5`), false);
    const back = join(node.dir, 'back');
    const down = await runCli(['get', '-r', '-q', '--include', 'raw/*', 'tree', back], node.env);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(execFileSync('find', [back, '-type', 'f']).toString().trim().split('\n'), [join(back, 'raw', 'c.h5')]);
  });

  it('get gives each file the server\'s modification time', async () => {
    const listed = await runCli(['ls', '--json', 'tree'], node.env);
    const a = listed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { name: string; modified: string }).find((e) => e.name === 'a.h5')!;
    assert.ok(a.modified, 'the listing has a modified time');
    const local = join(node.dir, 'a-back.h5');
    await new Promise((r) => setTimeout(r, 1100));
    const ran = await runCli(['get', 'tree/a.h5', local], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    assert.ok(Math.abs((await stat(local)).mtimeMs - Date.parse(a.modified)) < 1000, `${(await stat(local)).mtime.toISOString()} vs ${a.modified}`);
  });

  it('--bwlimit holds all transfers together to the rate, both ways', async () => {
    const dir = join(node.dir, 'limited');
    await mkdir(dir);
    for (let i = 0; i < 3; i++) await writeFile(join(dir, `f${i}.bin`), Buffer.alloc(1024 * 1024, i));
    let t0 = Date.now();
    const up = await runCli(['put', '-r', '-q', '-j', '3', '--bwlimit', '1M', dir, 'limited'], node.env);
    const upMs = Date.now() - t0;
    assert.equal(up.code, 0, up.stderr);
    // 3 MiB at 1 MiB/s, less the first burst: at least 2.5 s.
    assert.ok(upMs >= 2500, `3 MiB went up in ${upMs} ms at 1 MiB/s`);
    t0 = Date.now();
    const down = await runCli(['get', '-r', '-q', '-j', '3', '--bwlimit', '2M', 'limited', join(node.dir, 'limited-back')], node.env);
    const downMs = Date.now() - t0;
    assert.equal(down.code, 0, down.stderr);
    assert.ok(downMs >= 1200, `3 MiB came down in ${downMs} ms at 2 MiB/s`);
    const bad = await runCli(['put', '--bwlimit', 'fast', dir, 'x'], node.env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^lading: .*--bwlimit.*512K/);
  });

  it('ls -R lists every collection under its path; ls -lh sizes for people', async () => {
    const rec = await runCli(['ls', '-R', 'tree'], node.env);
    assert.equal(rec.code, 0, rec.stderr);
    assert.match(rec.stdout, new RegExp(`^${node.home}/tree:\\na\\.h5\\nb\\.txt\\ndirlink/\\nfilelink\\.txt\\nraw/\\n\\n${node.home}/tree/dirlink:\\nlinked\\.txt\\n\\n${node.home}/tree/raw:\\nc\\.h5\\n$`));
    const long = await runCli(['ls', '-lh', 'tree'], node.env);
    assert.equal(long.code, 0, long.stderr);
    assert.match(long.stdout, /^- +2\.93 KiB \S+ \S+ +a\.h5 /m);
    assert.match(long.stdout, /^- +1 B \S+ \S+ +b\.txt /m);
  });
});
