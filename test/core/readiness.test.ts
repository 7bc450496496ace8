/**
 * Readiness: both dependencies asked at once, each bounded by the timeout, the answer shared by
 * concurrent checks and reused for `cacheMs`, and a refusal that names what failed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LadingError, isLadingError } from '../../src/core/errors.ts';
import { Readiness } from '../../src/core/readiness.ts';

describe('readiness', () => {
  it('asks each dependency once for concurrent checks and within cacheMs, and again after', async () => {
    let pings = 0;
    let probes = 0;
    const r = new Readiness({ catalog: { ping: async () => { pings++; } }, resource: { probe: async () => { probes++; } }, cacheMs: 100 });
    await Promise.all([r.check(), r.check(), r.check()]);
    await r.check();
    assert.deepEqual([pings, probes], [1, 1]);
    await sleep(150);
    await r.check();
    assert.deepEqual([pings, probes], [2, 2]);
  });

  it('refuses with UNAVAILABLE and Retry-After naming each dependency that failed or did not answer in time', async () => {
    const r = new Readiness({
      catalog: { ping: async () => { throw new LadingError('UNAVAILABLE', 'The catalog (PostgreSQL) cannot be reached right now; retry later.'); } },
      resource: { probe: () => new Promise<void>(() => {}) },
      timeoutMs: 50, cacheMs: 0,
    });
    const started = Date.now();
    const err = await r.check().then(() => null, (e: unknown) => e);
    assert.ok(Date.now() - started < 1000, 'bounded by the timeout');
    assert.ok(isLadingError(err, 'UNAVAILABLE'));
    assert.equal(err.details.retryAfter, 5);
    assert.match(err.message, /the catalog cannot be reached \(The catalog \(PostgreSQL\) cannot be reached right now; retry later\)/);
    assert.match(err.message, /the store did not answer within 0\.05 s/);
  });

  it('waits again for a probe still unanswered instead of sending another', async () => {
    let probes = 0;
    let answer: () => void = () => {};
    const r = new Readiness({
      catalog: { ping: async () => {} },
      resource: { probe: () => { probes++; return probes === 1 ? new Promise<void>((resolve) => { answer = resolve; }) : Promise.resolve(); } },
      timeoutMs: 30, cacheMs: 0,
    });
    await assert.rejects(r.check(), /the store did not answer/);
    await assert.rejects(r.check(), /the store did not answer/);
    assert.equal(probes, 1);
    answer();
    await sleep(5);
    await r.check();
    assert.equal(probes, 2, 'a new probe once the first has answered');
  });

  it('says nothing of an error that is not lading\'s own beyond that it failed', async () => {
    const r = new Readiness({ catalog: { ping: async () => {} }, resource: { probe: async () => { throw new Error('secret=hunter2'); } }, cacheMs: 0 });
    const err = await r.check().then(() => null, (e: unknown) => e);
    assert.ok(isLadingError(err, 'UNAVAILABLE'));
    assert.equal(err.message, 'Not ready: the store cannot be reached (error).');
  });
});
