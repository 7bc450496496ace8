/**
 * A large `lading put` killed halfway resumes when run again: the real CLI uploads 512 MiB to a
 * real `lading serve` through the resumable endpoint, is killed with SIGKILL once the server
 * has acknowledged at least one request of it, and the same command run again sends exactly
 * the bytes the server had not acknowledged (its `--json` done event counts them) and ends with
 * the file's SHA-256 on the server. A download killed halfway continues its part file likewise.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateFile } from '../e2e/tus-support.ts';
import { type Node, events, runCli, startCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;
const SIZE = 512 * MIB;

describe('lading put of 512 MiB killed halfway', { timeout: 300_000 }, () => {
  let node: Node;
  let file: string;
  let sha256: string;

  before(async () => {
    node = await startNode();
    file = join(node.dir, 'big.bin');
    sha256 = Buffer.from(await generateFile(file, SIZE), 'base64').toString('hex');
  });
  after(async () => {
    await node?.stop();
  });

  /** The URL of the upload the CLI remembered, or null before it began. */
  async function remembered(): Promise<string | null> {
    const dir = join(node.env.XDG_STATE_HOME!, 'lading', 'uploads');
    const records = await readdir(dir).catch(() => [] as string[]);
    const name = records.find((r) => r.endsWith('.json'));
    if (!name) return null;
    return (JSON.parse(await readFile(join(dir, name), 'utf8')) as { url: string }).url;
  }

  /** The offset the server acknowledged for the upload the CLI remembered, or null before it began. */
  async function acknowledged(): Promise<number | null> {
    const url = await remembered();
    if (!url) return null;
    const res = await fetch(url, { method: 'HEAD', headers: { authorization: `Bearer ${node.token}`, 'tus-resumable': '1.0.0' } });
    return res.status === 200 ? Number(res.headers.get('upload-offset')) : null;
  }

  /**
   * The offset once no request holds the upload any more: an empty PATCH at the acknowledged
   * offset is taken (204) only then, else refused with 409.
   */
  async function settled(): Promise<number | null> {
    const url = await remembered();
    for (let i = 0; url && i < 600; i++) {
      const offset = await acknowledged();
      if (offset === null) return null;
      const res = await fetch(url, {
        method: 'PATCH', body: '',
        headers: { authorization: `Bearer ${node.token}`, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
      });
      await res.arrayBuffer();
      if (res.status === 204) return offset;
      await sleep(100);
    }
    return null;
  }

  it('resumes on the next run without sending again what the server acknowledged', async () => {
    const args = ['put', '--json', file, 'big.bin'];
    const first = startCli(args, node.env);
    let offset: number | null = null;
    while ((offset === null || offset === 0) && first.proc.exitCode === null) {
      await sleep(20);
      offset = await acknowledged();
    }
    first.proc.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `the first run ended before it was killed: ${killed.stderr}`);
    // What the server kept once the killed request is gone: what arrived up to its end.
    const kept = await settled();
    assert.ok(kept !== null && kept > 0 && kept < SIZE, `acknowledged ${kept} of ${SIZE}`);

    const second = await runCli(args, node.env);
    assert.equal(second.code, 0, second.stderr);
    const done = events(second).find((e) => e.event === 'done')!;
    assert.equal(done.status, 'sent');
    assert.equal(done.resumed_from, kept);
    assert.equal(done.transferred, SIZE - kept);
    assert.equal(done.sha256, sha256);
    // The state directory forgets a finished upload.
    assert.deepEqual((await readdir(join(node.env.XDG_STATE_HOME!, 'lading', 'uploads'))).filter((f) => f.endsWith('.json')), []);

    const stat = await runCli(['put', '--json', file, 'big.bin'], node.env);
    assert.equal(stat.code, 0, stat.stderr);
    assert.equal(events(stat).find((e) => e.event === 'done')!.status, 'identical');
  });

  it('a download killed halfway continues its part file', async () => {
    const target = join(node.dir, 'back.bin');
    const args = ['get', '--json', `${node.home}/big.bin`, target];
    const first = startCli(args, node.env);
    const part = `${target}.lading-part`;
    let have = 0;
    while (have < 64 * MIB && first.proc.exitCode === null) {
      await sleep(10);
      have = (await stat(part).catch(() => null))?.size ?? 0;
    }
    first.proc.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `the first run ended before it was killed: ${killed.stderr}`);
    const kept = (await stat(part)).size;
    assert.ok(kept > 0 && kept < SIZE, `kept ${kept}`);

    const second = await runCli(args, node.env);
    assert.equal(second.code, 0, second.stderr);
    const done = events(second).find((e) => e.event === 'done')!;
    assert.equal(done.resumed_from, kept);
    assert.equal(done.transferred, SIZE - kept);
    assert.equal(done.sha256, sha256);
    assert.equal((await stat(target)).size, SIZE);
    await assert.rejects(stat(part), { code: 'ENOENT' });
  });
});
