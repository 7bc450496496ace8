/**
 * Keeps a transfer's memory flat: every socket read of a request body is a fresh 64 KiB buffer
 * outside the JavaScript heap, and V8 collects those only once about 64 MiB of them have piled
 * up (its external-memory limit), so each upload in flight lifted the resident size by that
 * much. While the server has requests in flight, a timer watches the memory held outside the
 * heap and runs a young-generation collection, which frees the dead buffers, whenever it grew
 * by `stepBytes` since the last look. Buffers that outlived two young collections (a slow disk)
 * and garbage that requests left in the old generation are freed only by a full collection,
 * which V8 runs only once the old generation reaches its limit (64 MiB, `bin/lading`): when
 * the buffers have grown by `majorStepBytes` over their lowest point since the last one, or,
 * once the server has been idle for `idleHeapAfterMs`, the heap has (or the buffers have by
 * `stepBytes`), the reclaimer runs a full collection itself; the one once idle also gives the
 * heap's free pages back, as V8's memory reducer would some seconds later. It can also give the
 * C heap's free pages back (`trim`) when the server falls idle and 1 s after a full collection,
 * at most once per `trimEveryMs`.
 * It changes no answer; it only bounds how much garbage waits, and it sleeps while the server
 * is idle.
 */
import type { Server } from 'node:http';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's `gc` (its `v8/gc` extension). `flavor: 'last-resort'` collects fully until nothing more
 * dies, with the flag of V8's memory reducer (reduce the footprint): it gives back the heap's
 * free pages and shrinks the young generation, and frees the memory behind dead buffers before
 * it returns, where a regular one keeps the pages for the next burst and leaves the buffers to a
 * later sweep.
 */
type Gc = (options?: { type?: 'minor' | 'major'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

/** The process's `gc`, exposed on demand (Node offers it only behind a V8 flag). */
function exposeGc(): Gc | null {
  const existing = (globalThis as { gc?: Gc }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as Gc;
  } catch {
    return null;
  }
}

export interface ReclaimerOptions {
  /** How often to look while requests are in flight (default 5 ms: ~2 MB of a fast upload). */
  everyMs?: number;
  /**
   * Growth outside the heap that triggers a collection (default 4 MiB). NOTE: it must stay
   * well below V8's slack before its old-generation limit, which on a small heap can be as
   * little as ~10 MB: socket buffers that reach that slack before a young collection frees
   * them start a full mark-compact instead, and a server can settle into one per 10 MiB
   * upload (~30 ms of CPU each; bench/README.md). With 8 MiB looked at every 10 ms, about
   * half the starts did.
   */
  stepBytes?: number;
  /**
   * Called when the server falls idle (a whole look with no request in flight or arriving) and
   * 1 s after a full collection (which frees the C memory behind dead buffers: the reclaimer's
   * own, and V8's while the server is idle; that one then takes the place of the first), at
   * most once per `trimEveryMs` (default 1 s): for `malloc-trim.ts`, which takes ~1 ms of the
   * event loop.
   */
  trim?: (() => unknown) | null;
  trimEveryMs?: number;
  /**
   * Growth of the memory outside the heap after a young collection, or of the heap in use,
   * over its lowest point since the last full collection, that triggers a full collection
   * (default 16 MiB; ~10 ms each), looked at while requests are in flight (the memory outside
   * only) and when the server falls idle (both), at most once per `majorEveryMs` (default
   * 500 ms). NOTE: with 16 MiB a server held 113–123 MiB after rounds of small uploads instead
   * of 138–184, at no CPU cost per upload beyond this VM's noise; 8 MiB cost ~10%
   * (bench/README.md).
   */
  majorStepBytes?: number;
  majorEveryMs?: number;
  /**
   * How long the server must have been idle before the heap's growth by `majorStepBytes`, or
   * the buffers' by `stepBytes`, starts a full collection (default 5 s; buffers that grew by
   * `majorStepBytes` are collected as soon as it falls idle).
   *
   * NOTE: a full collection deoptimises the request path's code, which then runs slower until
   * it is optimised again; collected at every lull (one look without requests), a server
   * answering bursts of requests met a collection in every few pauses of a second or two, and
   * a dozen deopts at the start of the next burst (bench/README.md). And transfers leave dead
   * buffers in the old generation that no young collection frees: ten 10 MiB uploads and
   * downloads left 12 MiB of them for as long as the server stayed idle.
   */
  idleHeapAfterMs?: number;
  /** For tests: the collector and the heap's figures (default: V8's). */
  gc?: Gc;
  heap?: () => { external_memory: number; used_heap_size: number };
}

/**
 * Watches `server`'s requests; returns a function that stops watching. Does nothing when `gc`
 * cannot be exposed.
 */
export function startReclaimer(server: Server, options: ReclaimerOptions = {}): () => void {
  const gc = options.gc ?? exposeGc();
  if (!gc) return () => {};
  const step = options.stepBytes ?? 4 * 1024 * 1024;
  const everyMs = options.everyMs ?? 5;
  const majorStep = options.majorStepBytes ?? 16 * 1024 * 1024;
  const majorEveryMs = options.majorEveryMs ?? 500;
  const idleHeapAfterMs = options.idleHeapAfterMs ?? 5000;
  // NOTE: getHeapStatistics is ~2 µs, process.memoryUsage ~40 µs (it reads the RSS).
  const heap = options.heap ?? getHeapStatistics;
  const outside = (): number => heap().external_memory;
  let inFlight = 0;
  let arrived = false;
  let timer: NodeJS.Timeout | null = null;
  let last = 0;
  const trim = options.trim ?? null;
  const trimEveryMs = options.trimEveryMs ?? 1000;
  let trimmedAt = -Infinity;
  let majorAt = -Infinity;
  let outsideFloor = Infinity;
  let insideFloor = Infinity;
  let idleSince = 0;
  const trimNow = (): void => {
    const now = performance.now();
    if (trim && now - trimmedAt >= trimEveryMs) {
      trimmedAt = now;
      trim();
    }
  };
  // NOTE: V8 frees the memory behind the buffers a full collection found dead some time after
  // the collection returns: after a series of 10 MiB transfers, a trim at once or 100 ms later
  // gave back nothing of it, one 1 s later 11 MiB (bench/README.md).
  let trimLater: NodeJS.Timeout | null = null;
  const trimSoon = (): void => {
    if (!trim || trimLater) return;
    trimLater = setTimeout(() => {
      trimLater = null;
      trimNow();
    }, 1000);
    trimLater.unref();
  };
  // NOTE: V8's memory reducer runs its full collections seconds after a server falls idle,
  // when no request wakes the watch below; what they free would otherwise stay resident. Only
  // while idle: an observer of 'gc' makes Node build an entry for every young collection too
  // (~130 a second under a load of metadata GETs, 1.3% of the CPU), and while busy the
  // trim waits for the server to fall idle anyway.
  const fullCollections = trim ? new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)) trimSoon();
  }) : null;
  let observing = false;
  const watchCollections = (on: boolean): void => {
    if (!fullCollections || observing === on) return;
    observing = on;
    if (on) fullCollections.observe({ entryTypes: ['gc'] });
    else fullCollections.disconnect();
  };
  watchCollections(true);
  /** The heap in use grew by `majorStep`, or the memory outside it by `step`, over its floor. */
  const grown = (stats: { external_memory: number; used_heap_size: number }): boolean =>
    stats.used_heap_size - insideFloor >= majorStep || stats.external_memory - outsideFloor >= step;
  /**
   * A full collection when the memory outside the heap (as the last young collection left it)
   * has grown by `majorStep` over its lowest point since the last one, or, with `settled` (the
   * server has been idle for `idleHeapAfterMs`), the heap in use has, or the memory outside it by
   * `step` (`grown`); a settled one gives back the pages (`last-resort`). Returns 0 when it ran
   * or was not needed, else the milliseconds until `majorEveryMs` lets it.
   *
   * NOTE: not for the heap while busy: a full collection clears the objects that optimised
   * code holds weakly, which deoptimises that code (~70 functions a collection under a load
   * of metadata GETs) and compiles it again; collected every 16 MiB of the heap's growth, a
   * server answered 20-30% fewer GETs (bench/README.md). V8 bounds the heap itself (its own
   * full collections cost the same, but came less often: 1 in 14 s of GETs against 3), and its
   * memory reducer gives back the pages a burst left some seconds after the server falls idle.
   */
  const collectPiledUp = (settled: boolean): number => {
    const stats = heap();
    if (stats.external_memory < outsideFloor) outsideFloor = stats.external_memory;
    if (stats.used_heap_size < insideFloor) insideFloor = stats.used_heap_size;
    if (last - outsideFloor < majorStep && (!settled || !grown(stats))) return 0;
    const t = performance.now();
    if (t - majorAt < majorEveryMs) return majorAt + majorEveryMs - t;
    majorAt = t;
    // NOTE: once settled, the collection V8's memory reducer would run some seconds later
    // (`--gc-memory-reducer-start-delay-ms`, 8 s), now: a regular one left a server that had
    // just moved data at ~200 MiB until then, this one at ~110 (bench/README.md). It takes
    // 40–80 ms instead of 20–35, once per idle spell, so not while requests come in lulls.
    gc(settled ? { type: 'major', flavor: 'last-resort' } : { type: 'major' });
    const after = heap();
    last = outsideFloor = after.external_memory;
    insideFloor = after.used_heap_size;
    trimSoon();
    return 0;
  };
  // NOTE: a server that falls idle within `majorEveryMs` of a full collection looks again once
  // that has passed, and one whose heap grew looks again once it has been idle for
  // `idleHeapAfterMs`, unless a request came meanwhile (the look after that request's lull
  // then counts from there).
  let idleLook: NodeJS.Timeout | null = null;
  const lookLater = (ms: number): void => {
    idleLook = setTimeout(whenIdle, ms);
    idleLook.unref();
  };
  const whenIdle = (): void => {
    if (idleLook) clearTimeout(idleLook);
    idleLook = null;
    if (inFlight > 0 || timer) return;
    const quietFor = performance.now() - idleSince;
    const settled = quietFor >= idleHeapAfterMs;
    const wait = collectPiledUp(settled);
    if (wait > 0) return lookLater(wait);
    // NOTE: after a full collection, only its own trim, later: one now would take the turn
    // `trimEveryMs` gives it.
    if (!trimLater) trimNow();
    if (!settled && grown(heap())) lookLater(idleHeapAfterMs - quietFor);
  };
  const look = (): void => {
    // NOTE: the server is idle once a whole look passed with no request in flight and none
    // arriving: a server that answered all it had may be about to read the next request of a
    // client that sends one after another (at 16 connections, at many looks), and would be
    // collected under load. The timer thus outlives the last request by a tick or two, so that
    // a server answering request after request does not restart it for each of them.
    const quiet = !arrived;
    arrived = false;
    if (inFlight === 0 && quiet) {
      if (timer) clearInterval(timer);
      timer = null;
      idleSince = performance.now();
      watchCollections(true);
      // NOTE: then the collection delays no request in flight, and the trim after it returns
      // what it freed.
      whenIdle();
      return;
    }
    const now = outside();
    if (now - last >= step) {
      gc({ type: 'minor' });
      last = outside();
    } else if (now < last) {
      last = now;
    }
    collectPiledUp(false);
  };
  const onRequest = (_req: unknown, res: { once(event: 'close', f: () => void): void }): void => {
    inFlight++;
    arrived = true;
    if (!timer) {
      watchCollections(false);
      last = outside();
      timer = setInterval(look, everyMs);
      timer.unref();
    }
    res.once('close', () => {
      inFlight--;
    });
  };
  server.on('request', onRequest);
  return () => {
    server.off('request', onRequest);
    watchCollections(false);
    if (idleLook) clearTimeout(idleLook);
    if (trimLater) clearTimeout(trimLater);
    if (timer) clearInterval(timer);
    timer = null;
  };
}
