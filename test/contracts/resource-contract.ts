/**
 * The resource contract: the behaviour every `Resource` driver must show. Each driver's test
 * file calls `resourceContract` with a factory returning a fresh, empty resource; the suite
 * reads the driver's declared capabilities (range reads, `copyTo`, reads that survive a delete,
 * `copy`).
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { text, buffer } from 'node:stream/consumers';
import type { Resource, ResourceStream } from '../../src/core/ports.ts';
import { rejectsWith } from './catalog-contract.ts';

/** A stream of `total` pseudo-random bytes produced chunk by chunk (never held whole). */
export function generated(total: number, seed = 1): Readable {
  let sent = 0;
  let state = seed;
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const n = Math.min(1 << 16, total - sent);
      const chunk = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) {
        state = (state * 1103515245 + 12345) & 0x7fffffff;
        chunk[i] = state & 0xff;
      }
      sent += n;
      this.push(chunk);
    },
  });
}

async function sha256(stream: Readable): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of stream) h.update(chunk as Buffer);
  return h.digest('hex');
}

function failingAfter(bytes: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytes) {
        this.destroy(new Error('client went away'));
        return;
      }
      sent += 1024;
      this.push(Buffer.alloc(1024, 7));
    },
  });
}

/** A writable collecting copies of what it gets; each write completes a turn later, like a busy socket. */
function sink(): { dest: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const dest = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _enc, cb) {
      chunks.push(Buffer.from(chunk)); // a copy: `copyTo` may reuse its buffer once the write completed
      setImmediate(cb);
    },
  });
  return { dest, bytes: () => Buffer.concat(chunks) };
}

/** Waits until the stream has let go of what it read from (a file, a connection). */
async function released(stream: ResourceStream): Promise<void> {
  assert.ok(stream.destroyed, 'the stream is destroyed once copyTo has settled');
  if (!stream.closed) await once(stream, 'close', { signal: AbortSignal.timeout(5000) });
}

/** The stream's `copyTo`, which a driver declaring the capability must give every stream. */
function copier(stream: ResourceStream): (dest: Writable) => Promise<void> {
  assert.equal(typeof stream.copyTo, 'function', 'a driver declaring copyTo gives every stream copyTo');
  return (dest) => stream.copyTo!(dest);
}

export function resourceContract(name: string, create: () => Promise<Resource>): void {
  describe(`resource contract: ${name}`, () => {
    let r: Resource;
    beforeEach(async () => {
      r = await create();
    });
    afterEach(async () => {
      await r.close();
    });
    const later = () => new Date(Date.now() + 3_600_000);

    it('stores and reads back an object, and reports its size', async () => {
      const { size } = await r.write('key-00000001', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
      assert.equal(size, 11);
      assert.equal(await r.size('key-00000001'), 11);
      assert.equal(await text(await r.read('key-00000001')), 'hello world');
    });

    it('answers a probe, and reports the free space of its file system where it has one', async () => {
      await r.probe();
      const space = await r.space?.();
      if (space) assert.ok(space.free > 0 && space.total >= space.free, JSON.stringify(space));
    });

    it('stores an empty object', async () => {
      await r.write('key-00000002', Readable.from([]));
      assert.equal(await r.size('key-00000002'), 0);
      assert.equal((await buffer(await r.read('key-00000002'))).length, 0);
    });

    it('streams a multi-megabyte object intact', async () => {
      const total = 12 * 1024 * 1024 + 17;
      await r.write('key-00000003', generated(total, 5));
      assert.equal(await r.size('key-00000003'), total);
      assert.equal(await sha256(await r.read('key-00000003')), await sha256(generated(total, 5)));
    });

    it('reads byte ranges', async () => {
      const data = randomBytes(100_000);
      await r.write('key-00000004', Readable.from([data]));
      assert.ok(r.capabilities.rangeRead, 'declares range reads');
      assert.deepEqual(await buffer(await r.read('key-00000004', { start: 10, end: 19 })), data.subarray(10, 20));
      assert.deepEqual(await buffer(await r.read('key-00000004', { start: 99_990, end: 99_999 })), data.subarray(99_990));
      assert.deepEqual(await buffer(await r.read('key-00000004', { start: 0, end: 0 })), data.subarray(0, 1));
    });

    it('rejects reads of missing keys with NOT_FOUND, and deletes idempotently', async () => {
      await rejectsWith(r.read('key-missing1'), 'NOT_FOUND');
      assert.equal(await r.size('key-missing1'), null);
      await r.write('key-00000005', Readable.from([Buffer.from('x')]));
      await r.delete('key-00000005');
      await r.delete('key-00000005');
      assert.equal(await r.size('key-00000005'), null);
      await rejectsWith(r.read('key-00000005'), 'NOT_FOUND');
    });

    it('leaves nothing behind when the source fails mid-write', async () => {
      await assert.rejects(r.write('key-00000006', failingAfter(300_000)));
      assert.equal(await r.size('key-00000006'), null);
      assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
    });

    it('rejects, leaving nothing, a source destroyed with an error just before the write began', async () => {
      const source = new Readable({ read() {} });
      source.destroy(new Error('the client went away'));
      await assert.rejects(r.write('key-00000033', source));
      // A source failing on the next tick, while the write is starting, the same.
      const later = new Readable({ read() {} });
      process.nextTick(() => later.destroy(new Error('the client went away')));
      await assert.rejects(r.write('key-00000034', later));
      assert.equal(await r.size('key-00000033'), null);
      assert.equal(await r.size('key-00000034'), null);
    });

    it('leaves nothing behind when the write is aborted', async () => {
      const controller = new AbortController();
      const source = generated(64 * 1024 * 1024);
      setTimeout(() => controller.abort(), 20);
      await assert.rejects(r.write('key-00000007', source, { signal: controller.signal }));
      assert.equal(await r.size('key-00000007'), null);
      assert.equal(await r.sweepTemporaries(later()), 0);
    });

    it('keeps a key invisible until its write completes', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      const source = new Readable({ read() {} });
      source.push(Buffer.alloc(1000, 1));
      const writing = r.write('key-00000008', source);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await r.size('key-00000008'), null, 'not visible mid-write');
      release();
      await gate;
      source.push(null);
      await writing;
      assert.equal(await r.size('key-00000008'), 1000);
    });

    // NOTE: bodies of 128 KiB, above what any driver keeps for the catalog's commit (64 KiB by
    // default), so that every driver stores bytes of its own and must call publishAfter.
    it('calls publishAfter once and publishes the key only once its promise resolves, having taken the whole body meanwhile', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => { release = resolve; });
      let calls = 0;
      let settled = false;
      let drained = false;
      const halves = [randomBytes(64 * 1024), randomBytes(64 * 1024)];
      const source = Readable.from(halves).on('end', () => { drained = true; });
      const writing = r.write('key-00000031', source, { publishAfter: () => { calls++; return gate; } }).finally(() => { settled = true; });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(calls, 1, 'publishAfter was called once');
      assert.equal(drained, true, 'the body was read while publishAfter was pending');
      assert.equal(settled, false, 'the write waits for publishAfter');
      assert.equal(await r.size('key-00000031'), null, 'not readable before publishAfter resolves');
      release();
      assert.equal((await writing).size, 128 * 1024);
      assert.deepEqual(await buffer(await r.read('key-00000031')), Buffer.concat(halves));
      assert.equal(calls, 1);
    });

    it('fails with the error of a rejected publishAfter, leaving nothing', async () => {
      const refused = new Error('the catalog refused');
      await assert.rejects(r.write('key-00000032', Readable.from([randomBytes(128 * 1024)]), { publishAfter: () => Promise.reject(refused) }), (err) => err === refused);
      assert.equal(await r.size('key-00000032'), null);
      assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
    });

    describe('copy (where the driver declares it)', () => {
      it('copies small and multi-megabyte objects under new keys, leaving the source as it was', async (t) => {
        if (!r.capabilities.copy) return t.skip('the driver does not declare copy');
        assert.equal(typeof r.copy, 'function', 'a driver declaring copy has copy');
        await r.write('key-00000041', Readable.from([Buffer.from('small')]));
        assert.deepEqual(await r.copy!('key-00000041', 'key-00000042'), { size: 5 });
        assert.equal(await text(await r.read('key-00000042')), 'small');
        const total = 3 * 1024 * 1024 + 17;
        await r.write('key-00000043', generated(total, 9));
        assert.deepEqual(await r.copy!('key-00000043', 'key-00000044'), { size: total });
        assert.equal(await r.size('key-00000044'), total);
        assert.equal(await sha256(await r.read('key-00000044')), await sha256(generated(total, 9)));
        await r.delete('key-00000043');
        assert.equal(await r.size('key-00000044'), total, 'the copy does not depend on its source');
        assert.equal(await text(await r.read('key-00000041')), 'small');
        assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
      });

      it('copies an empty object', async (t) => {
        if (!r.capabilities.copy) return t.skip('the driver does not declare copy');
        await r.write('key-00000045', Readable.from([]));
        assert.deepEqual(await r.copy!('key-00000045', 'key-00000046'), { size: 0 });
        assert.equal((await buffer(await r.read('key-00000046'))).length, 0);
      });

      it('rejects a copy of a missing key with NOT_FOUND, leaving nothing', async (t) => {
        if (!r.capabilities.copy) return t.skip('the driver does not declare copy');
        await rejectsWith(r.copy!('key-00000047', 'key-00000048'), 'NOT_FOUND');
        assert.equal(await r.size('key-00000048'), null);
        assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
      });

      it('calls publishAfter once and publishes the copy only once it resolves; a rejection leaves nothing', async (t) => {
        if (!r.capabilities.copy) return t.skip('the driver does not declare copy');
        const data = randomBytes(128 * 1024);
        await r.write('key-00000049', Readable.from([data]));
        let release!: () => void;
        const gate = new Promise<void>((resolve) => { release = resolve; });
        let calls = 0;
        let called!: () => void;
        const reached = new Promise<void>((resolve) => { called = resolve; });
        const copying = r.copy!('key-00000049', 'key-00000050', { publishAfter: () => { calls++; called(); return gate; } });
        // NOTE: waits for the call itself, not a fixed time: a store's HEAD or copy may take long on a busy machine.
        await reached;
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(calls, 1, 'publishAfter was called once');
        assert.equal(await r.size('key-00000050'), null, 'not readable before publishAfter resolves');
        release();
        assert.deepEqual(await copying, { size: data.length });
        assert.deepEqual(await buffer(await r.read('key-00000050')), data);
        const refused = new Error('the catalog refused');
        await assert.rejects(r.copy!('key-00000049', 'key-00000051', { publishAfter: () => Promise.reject(refused) }), (err) => err === refused);
        assert.equal(await r.size('key-00000051'), null);
        assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
      });
    });

    it('lets an opened read finish after the key is deleted (where the driver declares it)', async (t) => {
      if (!r.capabilities.deleteSparesOpenReads) return t.skip('the driver declares that deleting cuts open reads; the backend defers deletes');
      const data = randomBytes(3 * 1024 * 1024);
      await r.write('key-00000009', Readable.from([data]));
      const stream = await r.read('key-00000009');
      await r.delete('key-00000009');
      assert.deepEqual(await buffer(stream), data);
    });

    it('replacing one key by another never mixes their bytes', async (t) => {
      if (!r.capabilities.deleteSparesOpenReads) return t.skip('the driver declares that deleting cuts open reads; the backend defers deletes');
      await r.write('key-0000000a', Readable.from([Buffer.alloc(2 * 1024 * 1024, 1)]));
      const reader = await r.read('key-0000000a');
      await r.write('key-0000000b', Readable.from([Buffer.alloc(2 * 1024 * 1024, 2)]));
      await r.delete('key-0000000a');
      const got = await buffer(reader);
      assert.equal(got.length, 2 * 1024 * 1024);
      assert.ok(got.every((b) => b === 1));
    });

    it('gives streams copyTo exactly when the driver declares it', async () => {
      await r.write('key-0000000d', Readable.from([Buffer.from('declared')]));
      for (const range of [undefined, { start: 1, end: 3 }]) {
        const stream = await r.read('key-0000000d', range);
        assert.equal(typeof stream.copyTo === 'function', r.capabilities.copyTo, `range ${JSON.stringify(range)}`);
        stream.destroy();
      }
    });

    describe('copyTo (where the driver declares it)', () => {
      // Several of any driver's copy buffers long, and not a multiple of a power of two.
      const data = randomBytes(5 * 256 * 1024 + 12345);

      it('copies the whole object and ranges with the bytes read gives, and releases the stream', async (t) => {
        if (!r.capabilities.copyTo) return t.skip('the driver does not declare copyTo');
        await r.write('key-copy0001', Readable.from([data]));
        for (const range of [undefined, { start: 0, end: 0 }, { start: 1000, end: 700_000 }, { start: data.length - 5, end: data.length - 1 }]) {
          const stream = await r.read('key-copy0001', range);
          const { dest, bytes } = sink();
          await copier(stream)(dest);
          assert.ok(bytes().equals(await buffer(await r.read('key-copy0001', range))), `same bytes as read, range ${JSON.stringify(range)}`);
          assert.ok(bytes().equals(range ? data.subarray(range.start, range.end + 1) : data), `range ${JSON.stringify(range)}`);
          assert.equal(dest.writableEnded, false, 'copyTo never ends the destination');
          await released(stream);
        }
      });

      it('rejects with the destination\'s error, and releases the stream', async (t) => {
        if (!r.capabilities.copyTo) return t.skip('the driver does not declare copyTo');
        await r.write('key-copy0002', Readable.from([data]));
        const stream = await r.read('key-copy0002');
        let writes = 0;
        const dest = new Writable({
          write(_chunk, _enc, cb) {
            cb(++writes === 2 ? new Error('connection reset') : null);
          },
        });
        dest.on('error', () => {});
        await assert.rejects(copier(stream)(dest), /connection reset/);
        await released(stream);
      });

      it('rejects, without waiting, when the destination is destroyed mid-copy, and releases the stream', async (t) => {
        if (!r.capabilities.copyTo) return t.skip('the driver does not declare copyTo');
        await r.write('key-copy0003', Readable.from([data]));
        const stream = await r.read('key-copy0003');
        // A client gone mid-download: the first write never completes and the socket is destroyed.
        const dest = new Writable({
          write() {
            setImmediate(() => dest.destroy());
          },
        });
        await assert.rejects(Promise.race([
          copier(stream)(dest),
          new Promise((_resolve, reject) => setTimeout(() => reject(new Error('copyTo still waits on a destroyed destination')), 5000).unref()),
        ]), (err: Error) => !/still waits/.test(err.message));
        await released(stream);
      });
    });

    it('lists the keys stored whole with their sizes, and not writes under way, staged bytes or deleted keys', async () => {
      const before = Date.now() - 60_000;
      // NOTE: over the inline limit: bytes kept in the catalog are not the resource's to list.
      await r.write('key-list0001', Readable.from([Buffer.alloc(70_001, 1)]));
      await r.write('key-list0002', Readable.from([Buffer.alloc(70_000, 2)]));
      await r.write('key-list0003', Readable.from([Buffer.from('gone')]));
      await r.delete('key-list0003');
      const source = new Readable({ read() {} });
      source.push(Buffer.alloc(10));
      const writing = r.write('key-list0004', source);
      if (r.staging) {
        const state = await r.staging.begin('key-list0005');
        await r.staging.append('key-list0005', state, 0, (async function* () { yield Buffer.from('staged'); })(), { checkpointBytes: Infinity, onCheckpoint: async () => {} });
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      const listed = [];
      for await (const k of r.list()) listed.push(k);
      listed.sort((a, b) => a.key.localeCompare(b.key));
      assert.deepEqual(listed.map((k) => [k.key, k.size]), [['key-list0001', 70_001], ['key-list0002', 70_000]]);
      for (const k of listed) assert.ok(k.modifiedAt.getTime() >= before && k.modifiedAt.getTime() <= Date.now() + 60_000, `a plausible time: ${k.modifiedAt.toISOString()}`);
      source.push(null);
      await writing;
    });

    it('sweeps only temporaries older than the given time', async () => {
      const source = new Readable({ read() {} });
      source.push(Buffer.alloc(10));
      const writing = r.write('key-0000000c', source);
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(await r.sweepTemporaries(new Date(Date.now() - 3_600_000)), 0, 'a running write is younger');
      source.push(null);
      await writing;
      assert.equal(await r.size('key-0000000c'), 10);
    });

    it('keeps the temporaries of keys still being written, however old', async () => {
      const source = new Readable({ read() {} });
      // NOTE: more than one 8 MiB part, so that a multipart store has an unfinished upload too.
      const size = 9 * 1024 * 1024;
      source.push(Buffer.alloc(size, 7));
      const writing = r.write('key-0000000d', source);
      const seen: string[] = [];
      for (let i = 0; i < 40 && !seen.includes('key-0000000d'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const removed = await r.sweepTemporaries(new Date(Date.now() + 60_000), (key) => {
          seen.push(key);
          return key === 'key-0000000d';
        });
        assert.equal(removed, 0, 'nothing removed');
      }
      assert.ok(seen.includes('key-0000000d'), `keep was asked about the key (asked: ${seen.join(', ')})`);
      source.push(null);
      await writing;
      assert.equal(await r.size('key-0000000d'), size, 'the write completes');
    });

    describe('staged writes', () => {
      const MIB = 1024 * 1024;
      /** `total` generated bytes as chunks of `chunk` bytes, counting what was taken; fails after `failAfter` bytes when given. */
      const chunked = (data: Buffer, chunk: number, failAfter?: number) => {
        const taken = { bytes: 0 };
        async function* gen(): AsyncGenerator<Buffer> {
          for (let i = 0; i < data.length; i += chunk) {
            if (failAfter !== undefined && i >= failAfter) throw new Error('client went away');
            const piece = data.subarray(i, Math.min(i + chunk, data.length));
            taken.bytes += piece.length;
            yield piece;
          }
        }
        return { source: gen(), taken };
      };
      /** A recorder of checkpoints, as the catalog keeps them: each must cover exactly the chunks taken. */
      const recorder = (start: number, taken: { bytes: number }, refuse?: (offset: number) => boolean) => {
        const seen: number[] = [];
        return {
          seen,
          onCheckpoint: async (offset: number) => {
            assert.equal(offset, start + taken.bytes, 'a checkpoint covers every chunk taken, and no part of one');
            if (refuse?.(offset)) throw new Error('refused');
            seen.push(offset);
          },
        };
      };
      const staging = () => {
        assert.ok(r.staging, 'the driver supports staged writes');
        return r.staging;
      };

      it('appends in pieces, checkpointing as it goes, and completes into a readable object', async () => {
        const s = staging();
        const data = randomBytes(13 * MIB + 5);
        let state = await s.begin('stage-00000001');
        let offset = 0;
        for (const end of [1000, 7 * MIB, data.length]) {
          const { source, taken } = chunked(data.subarray(offset, end), 64 * 1024 + 3);
          const rec = recorder(offset, taken);
          const out = await s.append('stage-00000001', state, offset, source, { checkpointBytes: 1, onCheckpoint: rec.onCheckpoint });
          assert.equal(out.offset, end);
          assert.equal(rec.seen.at(-1), end, 'the end of the source is recorded');
          ({ state, offset } = out);
        }
        await rejectsWith(r.read('stage-00000001'), 'NOT_FOUND');
        await s.complete('stage-00000001', state, data.length);
        await s.complete('stage-00000001', state, data.length);
        assert.equal(await r.size('stage-00000001'), data.length);
        assert.deepEqual(await buffer(await r.read('stage-00000001')), data);
      });

      it('keeps what arrived before the source failed, and resumes there', async () => {
        const s = staging();
        const data = randomBytes(3 * MIB);
        const state0 = await s.begin('stage-00000002');
        const first = chunked(data, 100_000, 1_000_000);
        let recorded = { offset: 0, state: state0 };
        const rec = recorder(0, first.taken);
        await assert.rejects(s.append('stage-00000002', state0, 0, first.source, {
          checkpointBytes: Infinity,
          onCheckpoint: async (offset, state) => {
            await rec.onCheckpoint(offset);
            recorded = { offset, state };
          },
        }), /client went away/);
        assert.equal(recorded.offset, 1_000_000);
        if (s.readStaged) assert.deepEqual(await buffer(await s.readStaged('stage-00000002', recorded.state, recorded.offset)), data.subarray(0, 1_000_000));
        const rest = chunked(data.subarray(recorded.offset), 65_536);
        const out = await s.append('stage-00000002', recorded.state, recorded.offset, rest.source, { checkpointBytes: MIB, onCheckpoint: recorder(recorded.offset, rest.taken).onCheckpoint });
        await s.complete('stage-00000002', out.state, data.length);
        assert.deepEqual(await buffer(await r.read('stage-00000002')), data);
      });

      it('discards bytes past the last recorded checkpoint, re-sent after a refusal or a crash', async () => {
        const s = staging();
        const data = randomBytes(6 * MIB);
        const good = Buffer.from(data);
        const state0 = await s.begin('stage-00000003');
        // The first MiB is acknowledged; the next bytes are refused (a checksum mismatch, or
        // the node dies before the catalog records them) and then sent again, right this time.
        const a = chunked(data.subarray(0, MIB), 65_536);
        const one = await s.append('stage-00000003', state0, 0, a.source, { checkpointBytes: Infinity, onCheckpoint: recorder(0, a.taken).onCheckpoint });
        const corrupt = Buffer.from(data.subarray(MIB));
        corrupt.fill(0, 0, 4096);
        const b = chunked(corrupt, 65_536);
        await assert.rejects(s.append('stage-00000003', one.state, MIB, b.source, { checkpointBytes: Infinity, onCheckpoint: recorder(MIB, b.taken, () => true).onCheckpoint }), /refused/);
        const c = chunked(good.subarray(MIB), 65_536);
        const out = await s.append('stage-00000003', one.state, MIB, c.source, { checkpointBytes: Infinity, onCheckpoint: recorder(MIB, c.taken).onCheckpoint });
        assert.equal(out.offset, data.length);
        await s.complete('stage-00000003', out.state, data.length);
        assert.deepEqual(await buffer(await r.read('stage-00000003')), good);
      });

      it('refuses a second append to the same key while one runs, and the first finishes intact', async () => {
        const s = staging();
        const data = randomBytes(2 * MIB);
        const state0 = await s.begin('stage-00000004');
        let release = () => {};
        const held = new Promise<void>((resolve) => { release = resolve; });
        async function* slow(): AsyncGenerator<Buffer> {
          yield data.subarray(0, MIB);
          await held;
          yield data.subarray(MIB);
        }
        const first = s.append('stage-00000004', state0, 0, slow(), { checkpointBytes: Infinity, onCheckpoint: async () => {} });
        await new Promise((resolve) => setTimeout(resolve, 50));
        async function* other(): AsyncGenerator<Buffer> {
          yield Buffer.alloc(MIB, 1);
        }
        await rejectsWith(s.append('stage-00000004', state0, 0, other(), { checkpointBytes: Infinity, onCheckpoint: async () => {} }), 'CONFLICT');
        release();
        const out = await first;
        await s.complete('stage-00000004', out.state, data.length);
        assert.deepEqual(await buffer(await r.read('stage-00000004')), data);
      });

      it('completes an empty write, and abort leaves nothing, staged or completed', async () => {
        const s = staging();
        const empty = await s.begin('stage-00000005');
        await s.complete('stage-00000005', empty, 0);
        assert.equal(await r.size('stage-00000005'), 0);
        await s.abort('stage-00000005', empty);
        assert.equal(await r.size('stage-00000005'), null);

        const state0 = await s.begin('stage-00000006');
        const d = chunked(randomBytes(100_000), 30_000);
        const out = await s.append('stage-00000006', state0, 0, d.source, { checkpointBytes: Infinity, onCheckpoint: recorder(0, d.taken).onCheckpoint });
        await s.abort('stage-00000006', out.state);
        await s.abort('stage-00000006', out.state);
        assert.equal(await r.size('stage-00000006'), null);
        await rejectsWith(r.read('stage-00000006'), 'NOT_FOUND');
        if (s.readStaged) await rejectsWith(s.readStaged('stage-00000006', out.state, 10), 'NOT_FOUND');
        assert.equal(await r.sweepTemporaries(later()), 0, 'no temporary remains');
      });
    });
  });
}
