/**
 * The upload meter: digests and size in one pass, the size limit, and `endAfter`, which holds
 * back the end of the body (so nothing is stored) until the blob's tracking is on disk.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Meter } from '../../src/core/meter.ts';
import { isLadingError } from '../../src/core/errors.ts';

/** A sink that records whether it saw the end of the stream. */
function sink(): Writable & { ended: boolean; bytes: number } {
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.bytes += chunk.length;
      cb();
    },
    final(cb) {
      out.ended = true;
      cb();
    },
  }) as Writable & { ended: boolean; bytes: number };
  out.ended = false;
  out.bytes = 0;
  return out;
}

describe('Meter', () => {
  it('counts and digests what flows through it', async () => {
    const body = Buffer.from('hello, meter');
    const meter = new Meter({ limit: 100, md5: true });
    const out = sink();
    await pipeline(Readable.from([body.subarray(0, 5), body.subarray(5)]), meter, out);
    assert.equal(meter.result.size, body.length);
    assert.deepEqual(meter.result.sha256, createHash('sha256').update(body).digest());
    assert.deepEqual(meter.result.md5, createHash('md5').update(body).digest());
    assert.equal(out.bytes, body.length);
  });

  it('fails with PAYLOAD_TOO_LARGE past its limit', async () => {
    const meter = new Meter({ limit: 4 });
    await assert.rejects(pipeline(Readable.from([Buffer.alloc(5)]), meter, sink()), (err) => isLadingError(err, 'PAYLOAD_TOO_LARGE'));
  });

  it('does not end before `endAfter` settles: the reader sees every byte but no end until then', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const meter = new Meter({ limit: 100, endAfter: gate });
    const out = sink();
    const done = pipeline(Readable.from([Buffer.from('abc')]), meter, out);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(out.bytes, 3, 'the bytes flowed meanwhile');
    assert.equal(out.ended, false, 'but the end was held back');
    release();
    await done;
    assert.equal(out.ended, true);
    assert.equal(meter.result.size, 3);
  });

  it('fails with the error of a rejected `endAfter`, and the reader never sees an end', async () => {
    const meter = new Meter({ limit: 100, endAfter: Promise.reject(new Error('catalog gone')) });
    const out = sink();
    await assert.rejects(pipeline(Readable.from([Buffer.from('abc')]), meter, out), /catalog gone/);
    assert.equal(out.ended, false);
  });
});
