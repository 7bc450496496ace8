/**
 * The fs resource's direct copy (`copyTo`) used by downloads: the exact bytes of the object or
 * of a range, across many copy buffers; the file closed afterwards; a destination that fails
 * rejects the copy; and a download cut by the client closes the file and leaves the server
 * serving.
 */
import { once } from 'node:events';
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { ResourceStream } from '../../src/core/ports.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { startTestServer } from '../helpers/server.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-fs-copy-'));
after(() => rm(dir, { recursive: true, force: true }));

/** A writable collecting what it gets; writes complete asynchronously, like a busy socket. */
function sink(): { dest: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const dest = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(Buffer.from(chunk)); // a copy: the source may reuse its buffer afterwards
      setImmediate(cb);
    },
  });
  return { dest, bytes: () => Buffer.concat(chunks) };
}

/** Waits for the stream (and so its file) to be closed. */
async function closed(stream: ResourceStream): Promise<void> {
  if (!stream.closed) await once(stream, 'close', { signal: AbortSignal.timeout(5000) });
}

const openFds = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

describe('fs resource copyTo', () => {
  // Not a multiple of the copy buffer (512 KiB), several buffers long.
  const data = randomBytes(3 * 1024 * 1024 + 12345);

  it('copies the whole object and ranges byte for byte, and closes the file', async (t) => {
    const r = await createFsResource({ root: join(dir, 'a') });
    t.after(() => r.close());
    await r.write('key-copy-0001', Readable.from([data]));
    const before = await openFds();
    for (const range of [undefined, { start: 0, end: 0 }, { start: 1000, end: 700_000 }, { start: 1000, end: 2_500_000 }, { start: data.length - 5, end: data.length - 1 }]) {
      const stream = await r.read('key-copy-0001', range);
      assert.equal(typeof stream.copyTo, 'function');
      const { dest, bytes } = sink();
      await stream.copyTo!(dest);
      const expected = range ? data.subarray(range.start, range.end + 1) : data;
      assert.ok(bytes().equals(expected), `range ${JSON.stringify(range)}`);
      await closed(stream);
    }
    assert.equal(await openFds(), before);
  });

  it('rejects when the destination fails, and still closes the file', async (t) => {
    const r = await createFsResource({ root: join(dir, 'b') });
    t.after(() => r.close());
    await r.write('key-copy-0002', Readable.from([data]));
    const before = await openFds();
    const stream = await r.read('key-copy-0002');
    let writes = 0;
    const dest = new Writable({
      write(_chunk, _enc, cb) {
        cb(++writes === 2 ? new Error('connection reset') : null);
      },
    });
    dest.on('error', () => {});
    assert.equal(typeof stream.copyTo, 'function');
    await assert.rejects(stream.copyTo!(dest), /connection reset/);
    await closed(stream);
    assert.equal(await openFds(), before);
  });
});

describe('download cut by the client', () => {
  it('closes the file and leaves the server serving the same object whole', async () => {
    const s = await startTestServer();
    try {
      const auth = await s.bearer('carol');
      const big = randomBytes(8 * 1024 * 1024);
      const url = s.home('carol', 'big.bin');
      const put = await fetch(url, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: big });
      assert.equal(put.status, 200);
      const before = await openFds();
      // Read a little of the body, then cut the connection.
      await new Promise<void>((resolve, reject) => {
        const req = request(`${url}?download=true`, { headers: { authorization: auth } }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(err)));
        req.end();
      });
      // The server must let go of the object's file once the client is gone.
      let now = await openFds();
      for (let i = 0; i < 60 && now > before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        now = await openFds();
      }
      assert.ok(now <= before, `${now - before} file descriptor(s) still open after the client left`);
      const again = await fetch(`${url}?download=true`, { headers: { authorization: auth } });
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('content-length'), String(big.length));
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(big));
    } finally {
      await s.stop();
    }
  });
});
