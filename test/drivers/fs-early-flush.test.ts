/**
 * The fs resource flushes a large object to disk while it is being written (every 64 MiB), as
 * well as at the end: the stored bytes are exactly the source's, nothing is left in `tmp/`,
 * and a source that fails after a flush has started stores nothing.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createFsResource } from '../../src/drivers/resource/fs.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-fs-flush-'));
after(() => rm(dir, { recursive: true, force: true }));

const MiB = 1024 * 1024;

/** `total` bytes in 64 KiB chunks, like a socket delivers them; optionally failing at `failAt`. */
function source(block: Buffer, total: number, failAt?: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (failAt !== undefined && sent >= failAt) {
        this.destroy(new Error('client gone'));
        return;
      }
      if (sent >= total) {
        this.push(null);
        return;
      }
      const n = Math.min(block.length, total - sent);
      sent += n;
      this.push(block.subarray(0, n));
    },
  });
}

describe('fs resource early flush', () => {
  const block = randomBytes(64 * 1024);
  const total = 150 * MiB + 12345; // two early flushes and a partial tail

  it('stores a large object byte for byte with fsync on', async () => {
    const r = await createFsResource({ root: join(dir, 'a'), fsync: true });
    const { size } = await r.write('key-flush-0001', source(block, total));
    assert.equal(size, total);
    const expected = createHash('sha256');
    for (let n = 0; n < total; n += block.length) expected.update(block.subarray(0, Math.min(block.length, total - n)));
    const got = createHash('sha256');
    for await (const chunk of await r.read('key-flush-0001')) got.update(chunk as Buffer);
    assert.equal(got.digest('hex'), expected.digest('hex'));
    assert.deepEqual(await readdir(join(dir, 'a', 'tmp')), []);
  });

  it('stores nothing when the source fails after a flush started', async () => {
    const r = await createFsResource({ root: join(dir, 'b'), fsync: true });
    await assert.rejects(r.write('key-flush-0002', source(block, total, 70 * MiB)), /client gone/);
    assert.equal(await r.size('key-flush-0002'), null);
    assert.deepEqual(await readdir(join(dir, 'b', 'tmp')), []);
  });
});
