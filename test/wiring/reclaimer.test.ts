/**
 * The reclaimer gives the C heap's free pages back when the server falls idle and after a full
 * collection, never more often than asked; it collects fully when buffers or the heap have
 * piled up, and once the server has settled, with V8's collector, gives the heap's free pages
 * back too; and `malloc_trim` is really bound on Linux with glibc.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { getHeapStatistics } from 'node:v8';
import { gc } from '../helpers/gc.ts';
import { startReclaimer } from '../../src/wiring/reclaimer.ts';
import { mallocTrim } from '../../src/wiring/malloc-trim.ts';

/** A server on a free port answering with `handle` (default: at once). */
async function listening(handle: (res: ServerResponse) => void = (res) => res.end('ok')): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => handle(res));
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
      for (let i = 0; i < 200 && trims === 0; i++) await sleep(10);
      assert.ok(trims >= 1, 'a trim followed the full collection');
      stop();
      const after = trims;
      gc({ type: 'major' });
      await sleep(1100); // a trim after a full collection waits 1 s
      assert.equal(trims, after, 'none once stopped');
    } finally {
      stop();
      server.close();
    }
  });

  it('trims 1 s after a full collection of its own, once V8 has freed the buffers it found dead', async () => {
    const MiB = 1024 * 1024;
    const figures = { external_memory: 2 * MiB, used_heap_size: 10 * MiB };
    const calls: string[] = [];
    const at: Record<string, number> = {};
    const spy = (o?: { type?: 'minor' | 'major' }) => {
      calls.push(`gc ${o?.type}`);
      at[`gc ${o?.type}`] = performance.now();
      if (o?.type === 'major') figures.used_heap_size = 10 * MiB;
    };
    // NOTE: the heap grows once the first looks (every 2 ms) have seen its floor.
    const { server, url } = await listening((res) => setTimeout(() => { figures.used_heap_size += 20 * MiB; res.end('ok'); }, 20));
    const stop = startReclaimer(server, { everyMs: 2, gc: spy, heap: () => ({ ...figures }), trim: () => { calls.push('trim'); at.trim = performance.now(); }, idleHeapAfterMs: 0 });
    try {
      await (await fetch(url)).text();
      for (let i = 0; i < 100 && !calls.includes('gc major'); i++) await sleep(2);
      assert.deepEqual(calls, ['gc major'], 'no trim at once, which would take the turn trimEveryMs gives');
      for (let i = 0; i < 400 && calls.length < 2; i++) await sleep(5);
      assert.deepEqual(calls, ['gc major', 'trim'], 'one after the collection');
      assert.ok(at.trim! - at['gc major']! >= 990, 'not before 1 s');
    } finally {
      stop();
      server.close();
    }
  });

  it('watches V8\'s own full collections only while idle: under load Node would build an entry for every young one', async () => {
    const held: { release?: () => void } = {};
    const { server, url } = await listening((res) => { held.release = () => res.end('ok'); });
    let trims = 0;
    const stop = startReclaimer(server, { everyMs: 2, trim: () => trims++, trimEveryMs: 0, gc: () => {} });
    const answer = fetch(url).then((r) => r.text());
    try {
      for (let i = 0; i < 100 && !held.release; i++) await sleep(5);
      const before = trims;
      await sleep(20);
      gc({ type: 'major' });
      await sleep(1100); // a trim after a full collection waits 1 s
      assert.equal(trims, before, 'no trim for a full collection while a request is in flight');
      held.release?.();
      await answer;
      await sleep(50);
      const idle = trims;
      assert.ok(idle > before, 'a trim when the server fell idle');
      gc({ type: 'major' });
      for (let i = 0; i < 200 && trims === idle; i++) await sleep(10);
      assert.equal(trims, idle + 1, 'and one after a full collection while idle');
    } finally {
      held.release?.();
      await answer;
      stop();
      server.close();
    }
  });
});

describe('reclaimer, full collections', () => {
  const MiB = 1024 * 1024;
  /** A server whose requests wait for `releaseAll`, watched with a spy for a collector. */
  async function watched(options: { majorEveryMs: number; everyMs?: number; idleHeapAfterMs?: number }) {
    const figures = { external_memory: 2 * MiB, used_heap_size: 10 * MiB };
    const calls: string[] = [];
    /** The flavor of each full collection, in order. */
    const flavors: string[] = [];
    // NOTE: a collector that frees what a collection of its kind would: a young one nothing
    // here (the buffers have been promoted), a full one everything over the live size.
    const spy = (o?: { type?: 'minor' | 'major'; flavor?: string }) => {
      calls.push(o?.type ?? 'major');
      if (o?.type !== 'minor') flavors.push(o?.flavor ?? 'regular');
      if (o?.type === 'major') Object.assign(figures, { external_memory: 2 * MiB, used_heap_size: 10 * MiB });
    };
    const releases: (() => void)[] = [];
    const { server, url } = await listening((res) => { releases.push(() => res.end('ok')); });
    const stop = startReclaimer(server, { everyMs: 2, gc: spy, heap: () => ({ ...figures }), majorStepBytes: 16 * MiB, idleHeapAfterMs: 0, ...options });
    const request = () => fetch(url).then((r) => r.text());
    const until = async (done: () => boolean) => { for (let i = 0; i < 400 && !done(); i++) await sleep(5); };
    const releaseAll = () => { for (const r of releases.splice(0)) r(); };
    const close = () => { releaseAll(); stop(); server.close(); };
    return { figures, calls, flavors, request, until, releaseAll, close, arrived: () => releases.length };
  }

  it('runs one when the buffers outside the heap have grown by majorStepBytes while busy, at most once per majorEveryMs', async () => {
    const w = await watched({ majorEveryMs: 300 });
    const answer = w.request();
    try {
      await w.until(() => w.arrived() === 1);
      await sleep(30);
      assert.deepEqual(w.calls, [], 'nothing while nothing grows');
      w.figures.external_memory += 15 * MiB;
      await w.until(() => w.calls.length > 0);
      await sleep(30);
      assert.deepEqual(w.calls, ['minor'], 'a young collection, which freed nothing, and no full one below the step');
      w.figures.external_memory += 5 * MiB;
      await w.until(() => w.calls.includes('major'));
      assert.deepEqual(w.calls, ['minor', 'minor', 'major'], 'a full collection once what the young ones left grew by the step');
      w.figures.external_memory += 20 * MiB;
      await w.until(() => w.calls.length > 3);
      await sleep(30);
      assert.deepEqual(w.calls, ['minor', 'minor', 'major', 'minor'], 'a young collection first, and no second full one within majorEveryMs');
      await w.until(() => w.calls.length > 4);
      assert.equal(w.calls.at(-1), 'major', 'a full collection once majorEveryMs has passed, as the young one freed nothing');
      assert.deepEqual(w.flavors, ['regular', 'regular'], 'regular ones while busy: the pages stay for the requests in flight');
    } finally {
      w.close();
      await answer;
    }
  });

  it('collects a heap that grew by majorStepBytes only once the server is idle, never while requests keep coming', async () => {
    const w = await watched({ everyMs: 50, majorEveryMs: 0 });
    try {
      // NOTE: one request after another, each answered before the next arrives, as a client on
      // a keep-alive connection sends them: between two of them nothing is in flight, but within
      // every look (50 ms) some arrive. The heap grows once the first looks have seen its floor.
      const started = performance.now();
      let grown = false;
      while (performance.now() - started < 500) {
        if (!grown && performance.now() - started > 200) {
          w.figures.used_heap_size += 20 * MiB;
          grown = true;
        }
        const answer = w.request();
        await w.until(() => w.arrived() === 1);
        w.releaseAll();
        await answer;
      }
      assert.deepEqual(w.calls.filter((c) => c === 'major'), [], 'no full collection while requests kept coming');
      await w.until(() => w.calls.includes('major'));
      assert.deepEqual(w.calls.filter((c) => c === 'major'), ['major'], 'one once the server fell idle');
      assert.equal(w.figures.used_heap_size, 10 * MiB);
      await sleep(150);
      assert.equal(w.calls.filter((c) => c === 'major').length, 1, 'and nothing more while idle');
    } finally {
      w.close();
    }
  });

  it('collects a grown heap only once the server has been idle for idleHeapAfterMs, not at every lull between requests', async () => {
    const w = await watched({ majorEveryMs: 0, idleHeapAfterMs: 300 });
    try {
      let answer = w.request();
      await w.until(() => w.arrived() === 1);
      await sleep(20); // the first looks (every 2 ms) see the heap's floor
      w.figures.used_heap_size += 40 * MiB;
      w.releaseAll();
      await answer;
      await sleep(150);
      assert.deepEqual(w.calls, [], 'no full collection 150 ms into the lull');
      // NOTE: a request after the lull; the next lull counts from its end.
      answer = w.request();
      await w.until(() => w.arrived() === 1);
      // NOTE: taken before the answer is released: the server may fall idle before the client
      // has read it.
      const lull = performance.now();
      w.releaseAll();
      await answer;
      await sleep(200);
      assert.deepEqual(w.calls, [], 'none 200 ms into the next lull, though the first began 350 ms ago');
      await w.until(() => w.calls.length > 0);
      assert.deepEqual(w.calls, ['major'], 'one once the server had been idle for idleHeapAfterMs');
      assert.ok(performance.now() - lull >= 300, 'not before');
      assert.deepEqual(w.flavors, ['last-resort'], 'one that gives the pages back');
      assert.equal(w.figures.used_heap_size, 10 * MiB);
    } finally {
      w.close();
    }
  });

  it('collects buffers that grew by stepBytes, less than majorStepBytes, once the server has been idle for idleHeapAfterMs', async () => {
    const w = await watched({ majorEveryMs: 0, idleHeapAfterMs: 300 });
    const answer = w.request();
    try {
      await w.until(() => w.arrived() === 1);
      await sleep(20); // the first looks (every 2 ms) see the buffers' floor
      w.figures.external_memory += 6 * MiB;
      await w.until(() => w.calls.length > 0);
      assert.deepEqual(w.calls, ['minor'], 'a young collection while busy, which freed nothing');
      const lull = performance.now(); // before the release, as above
      w.releaseAll();
      await answer;
      await sleep(150);
      assert.deepEqual(w.calls, ['minor'], 'no full collection 150 ms into the lull: the growth is below majorStepBytes');
      await w.until(() => w.calls.length > 1);
      assert.deepEqual(w.calls, ['minor', 'major'], 'one once the server had been idle for idleHeapAfterMs');
      assert.deepEqual(w.flavors, ['last-resort'], 'one that gives the pages back');
      assert.ok(performance.now() - lull >= 300, 'not before');
      assert.equal(w.figures.external_memory, 2 * MiB);
    } finally {
      w.close();
      await answer;
    }
  });

  it('does not collect the heap while a request is in flight, however much it grew', async () => {
    const w = await watched({ majorEveryMs: 0 });
    const answer = w.request();
    try {
      await w.until(() => w.arrived() === 1);
      await sleep(20); // the first looks (every 2 ms) see the heap's floor
      w.figures.used_heap_size += 40 * MiB;
      await sleep(60);
      assert.deepEqual(w.calls, [], 'no collection while busy');
      w.releaseAll();
      await answer;
      await w.until(() => w.calls.length > 0);
      assert.deepEqual(w.calls, ['major'], 'one when it fell idle');
    } finally {
      w.close();
      await answer;
    }
  });
});

describe('reclaimer, with V8\'s own collector', () => {
  it('gives the heap\'s pages back once the server has been idle for idleHeapAfterMs, as a regular full collection does not', async () => {
    const MiB = 1024 * 1024;
    const total = () => getHeapStatistics().total_heap_size;
    gc({ type: 'major' });
    const before = total();
    // NOTE: the garbage stays reachable until the answer, so that no collection frees it
    // before the server falls idle; after it, nothing allocates and V8 has no reason to.
    let junk: unknown[] | null = null;
    const { server, url } = await listening((res) => setTimeout(() => {
      junk = Array.from({ length: 400_000 }, (_, i) => ({ i, s: `x${i}`, a: [i, i + 1] }));
      res.end(String(junk.length));
      junk = null;
    }, 20));
    const flavors: string[] = [];
    const stop = startReclaimer(server, { everyMs: 2, idleHeapAfterMs: 100, gc: (o) => { flavors.push(o?.flavor ?? 'regular'); gc(o as never); } });
    try {
      assert.equal(await (await fetch(url)).text(), '400000');
      const grown = total();
      assert.ok(grown - before >= 32 * MiB, `the request grew the heap (${before} → ${grown})`);
      for (let i = 0; i < 200 && flavors.length === 0; i++) await sleep(10);
      assert.deepEqual(flavors, ['last-resort']);
      // NOTE: a regular full collection left ~70 of ~127 MiB in a probe of the same garbage.
      assert.ok(total() - before < 16 * MiB, `the pages were given back (${before} → ${grown} → ${total()})`);
    } finally {
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
