/**
 * The reclaimer gives the C heap's free pages back when the server falls idle and after a full
 * collection, never more often than asked; and `malloc_trim` is really bound on Linux with glibc.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startReclaimer } from '../../src/wiring/reclaimer.ts';
import { mallocTrim } from '../../src/wiring/malloc-trim.ts';

// NOTE: as the reclaimer does, so that the suite needs no --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options: { type: 'major' }) => void;

async function listening(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => { res.end('ok'); });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/` };
}

describe('reclaimer', () => {
  it('trims once the server falls idle, at most once per trimEveryMs', async () => {
    const { server, url } = await listening();
    let trims = 0;
    const stop = startReclaimer(server, { everyMs: 2, trim: () => trims++, trimEveryMs: 300 });
    try {
      assert.equal(trims, 0, 'nothing before the first request');
      await (await fetch(url)).text();
      await sleep(50);
      assert.equal(trims, 1, 'one trim when the server fell idle');
      for (let i = 0; i < 5; i++) await (await fetch(url)).text();
      await sleep(50);
      assert.equal(trims, 1, 'no second trim within trimEveryMs');
      await sleep(300);
      await (await fetch(url)).text();
      await sleep(50);
      assert.equal(trims, 2, 'a trim again once trimEveryMs has passed');
    } finally {
      stop();
      server.close();
    }
  });

  it('trims after a full collection, also while idle', async () => {
    const { server } = await listening();
    let trims = 0;
    const stop = startReclaimer(server, { trim: () => trims++, trimEveryMs: 0 });
    try {
      gc({ type: 'major' });
      for (let i = 0; i < 50 && trims === 0; i++) await sleep(10);
      assert.ok(trims >= 1, 'a trim followed the full collection');
      stop();
      const after = trims;
      gc({ type: 'major' });
      await sleep(100);
      assert.equal(trims, after, 'none once stopped');
    } finally {
      stop();
      server.close();
    }
  });
});

describe('reclaimer, full collections', () => {
  it('runs one when garbage outside or inside the heap has grown by majorStepBytes, busy or idle, at most once per majorEveryMs', async () => {
    const MiB = 1024 * 1024;
    const figures = { external_memory: 2 * MiB, used_heap_size: 10 * MiB };
    const calls: string[] = [];
    // NOTE: a collector that frees what a collection of its kind would: a young one nothing
    // here (the buffers have been promoted), a full one everything over the live size.
    const spy = (o?: { type?: 'minor' | 'major' }) => {
      calls.push(o?.type ?? 'major');
      if (o?.type === 'major') Object.assign(figures, { external_memory: 2 * MiB, used_heap_size: 10 * MiB });
    };
    let release: () => void = () => {};
    const server = createServer((_req, res) => { release = () => res.end('ok'); });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const stop = startReclaimer(server, { everyMs: 2, gc: spy, heap: () => ({ ...figures }), majorStepBytes: 16 * MiB, majorEveryMs: 1000 });
    const until = async (done: () => boolean) => { for (let i = 0; i < 400 && !done(); i++) await sleep(5); };
    const answer = fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
    try {
      for (let i = 0; i < 100 && calls.length === 0 && figures.used_heap_size === 10 * MiB; i++) await sleep(5);
      await sleep(30);
      assert.deepEqual(calls, [], 'nothing while nothing grows');
      figures.used_heap_size += 15 * MiB;
      await sleep(30);
      assert.deepEqual(calls, [], 'nothing below the step');
      figures.used_heap_size += 2 * MiB;
      await until(() => calls.length > 0);
      assert.deepEqual(calls, ['major'], 'a full collection once the heap in use grew by the step');
      figures.external_memory += 20 * MiB;
      await until(() => calls.length > 1);
      await sleep(30);
      assert.deepEqual(calls, ['major', 'minor'], 'a young collection first, and no second full one within majorEveryMs');
      await until(() => calls.length > 2);
      assert.equal(calls.at(-1), 'major', 'a full collection once majorEveryMs has passed, as the young one freed nothing');
      assert.equal(calls.filter((c) => c === 'major').length, 2);
      figures.used_heap_size += 20 * MiB;
      await sleep(30);
      assert.equal(calls.filter((c) => c === 'major').length, 2, 'not again within majorEveryMs');
      release();
      await answer;
      await until(() => calls.filter((c) => c === 'major').length > 2);
      assert.equal(calls.filter((c) => c === 'major').length, 3, 'and when the server has fallen idle');
    } finally {
      release();
      await answer;
      stop();
      server.close();
    }
  });
});

describe('malloc_trim', () => {
  const glibc = process.platform === 'linux' && (() => {
    try { return /libc\.so\.6/.test(readFileSync('/proc/self/maps', 'utf8')); } catch { return false; }
  })();

  it('binds once: where there is nothing to bind, every call answers false without trying again', () => {
    let binds = 0;
    const trim = mallocTrim(() => { binds++; return null; });
    assert.deepEqual([trim(), trim(), trim()], [false, false, false]);
    assert.equal(binds, 1);
    const pads: number[] = [];
    const bound = mallocTrim(() => (pad) => { pads.push(pad); return pads.length === 1 ? 1 : 0; });
    assert.deepEqual([bound(), bound()], [true, false]);
    assert.deepEqual(pads, [0, 0], 'malloc_trim(0): no padding kept');
  });

  it('is bound where the C library is glibc: it gives back memory freed below a live block', { skip: glibc ? false : 'not Linux with glibc' }, async () => {
    const trim = mallocTrim();
    trim();
    // NOTE: 16 KiB blocks come from the C heap (not mmap); once the first 16 MiB of them are
    // freed, the live ones after them keep the heap's top from shrinking, so only
    // malloc_trim can return those pages, and it answers true (1) when it did.
    let blocks: Buffer[] | null = Array.from({ length: 1024 }, () => Buffer.allocUnsafeSlow(16 * 1024).fill(1));
    const keep = Array.from({ length: 64 }, () => Buffer.allocUnsafeSlow(16 * 1024).fill(2));
    blocks = null;
    gc({ type: 'major' });
    await sleep(100);
    assert.equal(trim(), true);
    assert.ok(keep.every((b) => b[0] === 2 && b[b.length - 1] === 2), 'live memory is untouched');
    assert.equal(blocks, null);
  });
});
