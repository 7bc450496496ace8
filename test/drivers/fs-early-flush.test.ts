/**
 * The fs resource flushes a large object to disk while it is being written (every 2 MiB, one
 * flush at a time), as well as at the end: the stored bytes are exactly the source's, nothing
 * is left in `tmp/`, a source that fails after a flush has started stores nothing, and a
 * failed flush fails the write.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { onDatasync } from '../helpers/datasync.ts';

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

  it('flushes a small file once, whole, before the write resolves', async (t) => {
    const r = await createFsResource({ root: join(dir, 'c'), fsync: true });
    const flushed: { path: string; size: number }[] = [];
    await onDatasync(t, async (path, original) => {
      await original();
      flushed.push({ path, size: (await stat(path)).size });
    });
    await r.write('key-flush-0003', source(block, 100_000));
    const ofTemporary = flushed.filter((f) => f.path.startsWith(join(dir, 'c', 'tmp', 'key-flush-0003.')));
    assert.deepEqual(ofTemporary.map((f) => f.size), [100_000]);
  });

  it('flushes a large file while it arrives, one flush at a time', async (t) => {
    const r = await createFsResource({ root: join(dir, 'c2'), fsync: true });
    const flushed: string[] = [];
    let started = 0;
    let running = 0;
    let overlapped = false;
    await onDatasync(t, async (path, original) => {
      started++;
      if (++running > 1) overlapped = true;
      try {
        await original();
      } finally {
        running--;
      }
      flushed.push(path);
    });
    // NOTE: a source no faster than the disk, as a client over a network is: after every 4 MiB
    // it waits until a flush has started since the last 4 MiB and none runs. 20 MiB from
    // memory can arrive in the time the disk takes for one flush, and then one early flush
    // is right (they never wait for each other), but shows nothing.
    const total = 20 * MiB + 5;
    async function* paced(): AsyncGenerator<Buffer> {
      let seen = 0;
      for (let sent = 0; sent < total;) {
        const n = Math.min(block.length, total - sent);
        yield block.subarray(0, n);
        sent += n;
        if (sent % (4 * MiB) !== 0) continue;
        for (let waited = 0; (started === seen || running > 0) && waited < 2_000; waited += 2) await sleep(2);
        seen = started;
      }
    }
    await r.write('key-flush-0013', Readable.from(paced()));
    const ofTemporary = flushed.filter((p) => p.startsWith(join(dir, 'c2', 'tmp', 'key-flush-0013.')));
    // 20 MiB in 2 MiB steps: at most ten early flushes and the final one; with this source at
    // least one early flush in each 4 MiB, five in all.
    assert.ok(ofTemporary.length >= 6 && ofTemporary.length <= 11, `${ofTemporary.length} flushes of the file`);
    assert.equal(overlapped, false, 'two flushes of the file ran at once');
  });

  it('fails the write, storing nothing, when an early flush fails', async (t) => {
    const r = await createFsResource({ root: join(dir, 'd'), fsync: true });
    let calls = 0;
    await onDatasync(t, async (path, original) => {
      if (path.includes('key-flush-0004') && ++calls === 1) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      return original();
    });
    await assert.rejects(r.write('key-flush-0004', source(block, 30 * MiB)), /EIO/);
    assert.equal(calls, 1, 'no flush after the failed one decides the write');
    assert.equal(await r.size('key-flush-0004'), null);
    assert.deepEqual(await readdir(join(dir, 'd', 'tmp')), []);
  });

  it('stores what an object-mode source gives as strings and typed arrays, skipping empty chunks', async () => {
    const r = await createFsResource({ root: join(dir, 'e'), fsync: true });
    const bytes = new Uint8Array([0x21, 0x0a]);
    const { size } = await r.write('key-flush-0005', Readable.from(['héllo', Buffer.alloc(0), ' ', bytes.subarray(0, 1), bytes.subarray(1)]));
    assert.equal(size, 9);
    const chunks: Buffer[] = [];
    for await (const chunk of await r.read('key-flush-0005')) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'héllo !\n');
  });
});
