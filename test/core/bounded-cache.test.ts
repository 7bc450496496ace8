/**
 * The least-recently-used map behind the catalog's memory: it keeps at most `max` entries,
 * drops the least recently used first, and `deleteWhere` drops exactly the entries it is told
 * to, however many, while the others stay.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache } from '../../src/core/bounded-cache.ts';

describe('BoundedCache', () => {
  it('keeps at most max entries, dropping the least recently used', () => {
    const c = new BoundedCache<string, number>(2);
    c.set('a', 1);
    c.set('b', 2);
    assert.equal(c.get('a'), 1);
    c.set('c', 3);
    assert.deepEqual([c.get('a'), c.get('b'), c.get('c'), c.size], [1, undefined, 3, 2]);
    assert.throws(() => new BoundedCache(0), RangeError);
  });

  it('deletes every entry a predicate picks, adjacent ones included, and keeps the rest', () => {
    const c = new BoundedCache<string, number>(100);
    for (let i = 0; i < 50; i++) c.set(`/z/home/u${i % 5}/f${i}`, i);
    c.deleteWhere((k) => k.startsWith('/z/home/u1/') || k.startsWith('/z/home/u2/'));
    assert.equal(c.size, 30);
    for (let i = 0; i < 50; i++) assert.equal(c.get(`/z/home/u${i % 5}/f${i}`), i % 5 === 1 || i % 5 === 2 ? undefined : i, `entry ${i}`);
    c.deleteWhere(() => true);
    assert.equal(c.size, 0);
  });
});
