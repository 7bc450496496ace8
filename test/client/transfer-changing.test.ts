/**
 * A file that changes while `lading put` sends it — appended to and rewritten, as a log or an
 * instrument's output is — is never committed cut short: the real CLI against a real `lading
 * serve`, over the resumable path (several tus requests) and over the single PUT, leaves no
 * data object and no open upload, says so in one line, and a run after the file settled
 * stores it whole (not "already exists").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Node, runCli, startCli, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;

/** Appends to `file` and rewrites its first bytes every few milliseconds until `stop` is called. */
function keepChanging(file: string): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      await appendFile(file, randomBytes(4096));
      if (i % 4 === 0) {
        const { open } = await import('node:fs/promises');
        const h = await open(file, 'r+');
        await h.write(randomBytes(512), 0, 512, 0);
        await h.close();
      }
      await new Promise((r) => setTimeout(r, 3));
    }
  })();
  return { async stop() { running = false; await loop; } };
}

async function objectStatus(node: Node, path: string): Promise<number> {
  const res = await fetch(`${node.url}/api/registered${path}?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
  await res.body?.cancel();
  return res.status;
}

describe('lading put of a file that changes meanwhile', { timeout: 120_000 }, () => {
  let node: Node;

  before(async () => {
    node = await startNode();
  });
  after(async () => {
    await node?.stop();
  });

  for (const [name, extra] of [['resumable, in 1-MiB requests', ['--resumable-above', '1', '--chunk-size', '1']], ['one PUT', []]] as const) {
    it(`commits nothing while it grows and is rewritten (${name}); a later run stores it whole`, async () => {
      const file = join(node.dir, `grow-${extra.length}.bin`);
      await writeFile(file, randomBytes(24 * MIB));
      const remote = `${node.home}/growing-${extra.length}.bin`;
      const run = startCli(['put', ...extra, file, remote], node.env);
      const changing = keepChanging(file);
      const ran = await run.done;
      await changing.stop();
      assert.equal(ran.code, 1, ran.stderr);
      assert.match(ran.stderr, /changed while it was being uploaded; nothing was stored/);
      assert.doesNotMatch(ran.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(await objectStatus(node, remote), 404, 'no data object was committed');
      const uploads = await fetch(`${node.url}/api/uploads`, { headers: { authorization: `Bearer ${node.token}` } });
      if (uploads.status === 200) {
        const body = await uploads.json() as { Response: { data: { state: string }[] } };
        assert.deepEqual(body.Response.data.filter((u) => u.state === 'open'), [], 'no open upload is left behind');
      } else {
        await uploads.body?.cancel();
      }

      const again = await runCli(['put', ...extra, file, remote], node.env);
      assert.equal(again.code, 0, again.stderr);
      const res = await fetch(`${node.url}/api/registered${remote}?download=true`, { headers: { authorization: `Bearer ${node.token}` } });
      const stored = Buffer.from(await res.arrayBuffer());
      assert.equal(createHash('sha256').update(stored).digest('hex'), createHash('sha256').update(await readFile(file)).digest('hex'), 'the settled file is stored whole');
    });
  }
});
