/**
 * `lading get --zip` and `--bag`: a collection as one archive file, as a user runs them — the
 * real CLI against a real `lading serve`. The archive holds the tree bit-identical (read back
 * by Python's zipfile); a bag has its BagIt files; a member damaged on the server's disk cuts
 * the transfer, and nothing is left under the archive's name.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Node, makeTree, runCli, startNode } from './transfer-support.ts';

const run = promisify(execFile);

/** Every file member of a ZIP with its SHA-256, by name, as Python's zipfile reads them. */
async function zipMembers(file: string): Promise<Map<string, string>> {
  const { stdout } = await run('python3', ['-c', `
import hashlib, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    print(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist() if not i.is_dir()}))
`, file]);
  return new Map(Object.entries(JSON.parse(stdout) as Record<string, string>));
}

describe('lading get --zip and --bag', { timeout: 300_000 }, () => {
  let node: Node;
  let tree: Map<string, string>;

  before(async () => {
    node = await startNode();
    tree = await makeTree(join(node.dir, 'src'), 40, 200_000);
    const up = await runCli(['put', '-r', join(node.dir, 'src'), 'set'], node.env);
    assert.equal(up.code, 0, up.stderr);
  });
  after(async () => {
    await node?.stop();
  });

  it('--zip writes the collection as <name>.zip into a directory, the tree bit-identical', async () => {
    const ran = await runCli(['get', '--zip', 'set', node.dir], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    const members = await zipMembers(join(node.dir, 'set.zip'));
    assert.deepEqual(new Map([...members].map(([name, sha]): [string, string] => [name.slice('set/'.length), sha]).sort()), new Map([...tree].sort()));
    const again = await runCli(['get', '--zip', 'set', node.dir], node.env);
    assert.equal(again.code, 5, 'an existing file is not replaced without --force');
  });

  it('--bag writes a BagIt bag: the payload under data/ and its manifests', async () => {
    const file = join(node.dir, 'bag.zip');
    const ran = await runCli(['get', '--bag', `${node.home}/set`, file], node.env);
    assert.equal(ran.code, 0, ran.stderr);
    const members = await zipMembers(file);
    for (const tag of ['bagit.txt', 'bag-info.txt', 'manifest-sha256.txt', 'tagmanifest-sha256.txt']) assert.ok(members.has(`set/${tag}`), tag);
    for (const [rel, sha] of tree) assert.equal(members.get(`set/data/${rel}`), sha, rel);
  });

  it('a member damaged on the server: exit 1, and no file under the archive\'s name', async () => {
    // NOTE: the largest stored blob is a member's bytes on the fs resource (small ones live in the catalog).
    const blobs = join(node.data, 'resource', 'blobs');
    const files = (await readdir(blobs, { recursive: true, withFileTypes: true })).filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name));
    const sizes = await Promise.all(files.map(async (f) => ({ f, size: (await stat(f)).size })));
    const largest = sizes.sort((a, b) => b.size - a.size)[0];
    assert.ok(largest && largest.size > 65536, 'a member on the fs resource');
    await truncate(largest.f, 10);
    const file = join(node.dir, 'broken.zip');
    const ran = await runCli(['get', '--zip', 'set', file], node.env);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(ran.stderr, /broke off/);
    assert.deepEqual((await readdir(node.dir)).filter((n) => n.startsWith('broken.zip')), []);
  });
});
