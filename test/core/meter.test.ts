/** The upload meter: digests and size in one pass, and the size limit. */
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
});
