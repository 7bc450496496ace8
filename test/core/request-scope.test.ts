/**
 * The request scope: a mark taken when a request arrives, seen by everything the request calls
 * (across awaits and timers), greater than every mark taken before it, and absent outside a
 * request or once the request's work has run past `REQUEST_SCOPE_MS`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { REQUEST_SCOPE_MS, nextMark, requestMark, runAsRequest } from '../../src/core/request-scope.ts';

describe('request scope', () => {
  it('gives what a request calls its mark, later than every mark before it', async () => {
    assert.equal(requestMark(), undefined, 'no mark outside a request');
    const before = nextMark();
    const seen = await runAsRequest(async () => {
      const first = requestMark();
      await delay(5);
      const inner = await new Promise<number | undefined>((resolve) => setImmediate(() => resolve(requestMark())));
      return [first, requestMark(), inner];
    });
    assert.ok(typeof seen[0] === 'number' && seen[0] > before, 'taken when the request arrived');
    assert.deepEqual(seen, [seen[0], seen[0], seen[0]], 'the same mark after awaits and in callbacks');
    assert.ok(nextMark() > seen[0]!, 'later marks are greater');
    const other = await runAsRequest(async () => requestMark());
    assert.ok(other! > seen[0]!, 'each request has a mark of its own');
  });

  it('has no mark in work a request left running past the scope', async () => {
    const late = await runAsRequest(async () => {
      await delay(REQUEST_SCOPE_MS + 50);
      return requestMark();
    });
    assert.equal(late, undefined);
  });
});
