/**
 * `lading put` and `lading get` as a user runs them — the real CLI as a subprocess against a
 * real `lading serve`: a tree of 1,000 files in nested directories goes up and comes back
 * bit-identical (with a manifest of every file); running the same command again, or with
 * `--sync`, sends nothing; a file that differs is a conflict unless `--sync` replaces it; a
 * stored object damaged on the server's disk is refused on download (exit 6) and no file is
 * left under its name.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile, open } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, events, makeTree, readTree, runCli, startNode } from './transfer-support.ts';

describe('lading put and get of a tree of 1,000 files', { timeout: 300_000 }, () => {
  let node: Node;
  let tree: Map<string, string>;
  let src: string;

  before(async () => {
    node = await startNode();
    src = join(node.dir, 'src');
    tree = await makeTree(src, 1000, 8192);
  });
  after(async () => {
    await node?.stop();
  });

  it('goes up and comes back bit-identical, with a manifest of every file', async () => {
    const manifest = join(node.dir, 'manifest.jsonl');
    const up = await runCli(['put', '-r', src, 'run-1', '--manifest', manifest], node.env);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stderr, /sent 1000 files/);
    const lines = (await readFile(manifest, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { path: string; size: number; sha256: string; pid: null; status: string });
    assert.equal(lines.length, 1000);
    for (const l of lines) {
      const rel = l.path.slice(`${node.home}/run-1/`.length);
      assert.equal(l.sha256, tree.get(rel), l.path);
      assert.equal(l.status, 'sent');
      assert.ok('pid' in l && 'size' in l);
    }

    const back = join(node.dir, 'back');
    const down = await runCli(['get', '-r', `${node.home}/run-1`, back], node.env);
    assert.equal(down.code, 0, down.stderr);
    const got = await readTree(back);
    assert.deepEqual(new Map([...got.files].sort()), new Map([...tree].sort()));
    assert.ok(got.dirs.includes(join('empty', 'dir')), 'the empty directory came back too');
    assert.deepEqual(got.dirs.filter((d) => d.endsWith('.lading-part')), []);
  });

  it('running it again, or with --sync, sends nothing', async () => {
    const again = await runCli(['put', '-r', '--json', src, `${node.home}/run-1`], node.env);
    assert.equal(again.code, 0, again.stderr);
    const summary = events(again).find((e) => e.event === 'summary')!;
    assert.deepEqual({ identical: summary.identical, transferred: summary.transferred, failed: summary.failed }, { identical: 1000, transferred: 0, failed: 0 });

    const sync = await runCli(['put', '-r', '--sync', '--json', src, 'run-1'], node.env);
    assert.equal(sync.code, 0, sync.stderr);
    const done = events(sync).filter((e) => e.event === 'done');
    assert.equal(done.length, 1000);
    assert.deepEqual(done.filter((e) => e.status !== 'identical' || e.transferred !== 0), []);

    const getSync = await runCli(['get', '-r', '--sync', '--json', `${node.home}/run-1`, join(node.dir, 'back')], node.env);
    assert.equal(getSync.code, 0, getSync.stderr);
    assert.equal(events(getSync).find((e) => e.event === 'summary')!.transferred, 0);
  });

  it('a file that changed is a conflict (exit 5) unless --sync replaces it, alone', async () => {
    const changed = [...tree.keys()].find((k) => k.startsWith('d3/'))!;
    await writeFile(join(src, changed), 'changed\n');
    const plain = await runCli(['put', '-r', '-q', src, 'run-1'], node.env);
    assert.equal(plain.code, 5, plain.stderr);
    assert.match(plain.stderr, /^lading: .*already exists.*--sync/m);
    assert.equal(plain.stderr.trim().split('\n').length, 1, plain.stderr);

    const sync = await runCli(['put', '-r', '--sync', '--json', src, 'run-1'], node.env);
    assert.equal(sync.code, 0, sync.stderr);
    const sent = events(sync).filter((e) => e.event === 'done' && e.status === 'sent');
    assert.deepEqual(sent.map((e) => [e.path, e.transferred]), [[`${node.home}/run-1/${changed}`, 8]]);

    const res = await fetch(`${node.url}/api/registered${node.home}/run-1/${changed}?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
    assert.equal(await res.text(), 'changed\n');
  });

  it('a damaged object is refused on download: exit 6, nothing left under its name', async () => {
    const file = join(node.dir, 'precious.bin');
    const bytes = createHash('sha256').update('seed').digest();
    await writeFile(file, Buffer.concat(Array.from({ length: 4096 }, () => bytes)));
    const up = await runCli(['put', file, `${node.home}/precious.bin`], node.env);
    assert.equal(up.code, 0, up.stderr);
    // The newest blob on the server's disk is that object's: flip one byte of it.
    const blobs = join(node.data, 'resource', 'blobs');
    let newest = { path: '', at: 0 };
    for (const e of await readdir(blobs, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const p = join(e.parentPath, e.name);
      const s = await stat(p);
      if (s.size === 32 * 4096 && s.mtimeMs >= newest.at) newest = { path: p, at: s.mtimeMs };
    }
    assert.ok(newest.path, 'the blob was found');
    const handle = await open(newest.path, 'r+');
    await handle.write(Buffer.from([bytes[0]! ^ 0xff]), 0, 1, 1000);
    await handle.close();

    const target = join(node.dir, 'fetched.bin');
    const down = await runCli(['get', `${node.home}/precious.bin`, target], node.env);
    assert.equal(down.code, 6, down.stderr);
    assert.match(down.stderr, /^lading: .*refused/m);
    await assert.rejects(stat(target), { code: 'ENOENT' });
    await assert.rejects(stat(`${target}.lading-part`), { code: 'ENOENT' });
  });

  it('a mistake found before anything is sent is said alone, without a summary of nothing sent', async () => {
    for (const [args, code, line] of [
      [['put', join(node.dir, 'precious.bin')], 2, 'lading: put needs a local file or directory and a remote destination'],
      [['put', join(node.dir, 'no-such.bin'), `${node.home}/x`], 4, `lading: ${join(node.dir, 'no-such.bin')}: no such file or directory`],
      [['get', `${node.home}/no-such.bin`, join(node.dir, 'x')], 4, null],
    ] as const) {
      for (const json of [false, true]) {
        const ran = await runCli(json ? [args[0], '--json', ...args.slice(1)] : [...args], node.env);
        assert.equal(ran.code, code, ran.stderr);
        if (line) assert.equal(ran.stderr, `${line}\n`);
        assert.doesNotMatch(ran.stderr, /sent|received/);
        assert.doesNotMatch(ran.stdout, /summary/);
      }
    }
  });
});
