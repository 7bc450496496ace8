/**
 * The quota arithmetic the catalog drivers share: which quotas a change touches and by how
 * much, the refusal's message (the limit, the usage, the need), and sizes as operators type
 * and read them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePath } from '../../src/core/path.ts';
import { type QuotaRecord, formatBytes, parseSize, quotaDeltas, quotaPathsOf } from '../../src/core/quotas.ts';

const p = parsePath;
const quota = (path: string, maxBytes: number | null, bytes: number, extra: Partial<QuotaRecord> = {}): QuotaRecord =>
  ({ path: p(path), user: null, maxBytes, maxObjects: null, bytes, objects: 0, ...extra });

describe('quota arithmetic', () => {
  it('charges the quotas over the paths a change adds to and takes from, and leaves a move inside one alone', () => {
    const quotas = [quota('/z/a', 100, 10), quota('/z/b', 100, 10), quota('/z', null, 20)];
    const moved = quotaDeltas(quotas, [{ removed: p('/z/a/x'), added: p('/z/b/x'), amount: { bytes: 5, objects: 1 } }]);
    assert.deepEqual([...moved], [['/z/a', { bytes: -5, objects: -1 }], ['/z/b', { bytes: 5, objects: 1 }]]);
    assert.deepEqual([...quotaDeltas(quotas, [{ removed: p('/z/a/x'), added: p('/z/a/y'), amount: { bytes: 5, objects: 1 } }])], []);
    assert.deepEqual([...quotaDeltas([quota('/z/a', 1, 100)], [{ removed: p('/z/a'), added: p('/z/c'), moves: true, amount: { bytes: 100, objects: 0 } }])], [], 'a quota on what moves goes with it');
    assert.deepEqual(quotaPathsOf([{ removed: p('/z/a'), added: null }]), ['/', '/z', '/z/a']);
  });

  it('refuses what adds past a bound, with the limit, the usage and the need; never what adds nothing', () => {
    assert.throws(() => quotaDeltas([quota('/lading/home/alice', 1024 ** 3, Math.round(0.98 * 1024 ** 3), { user: 'alice' })], [{ removed: null, added: p('/lading/home/alice/f'), amount: { bytes: 50 * 1024 ** 2, objects: 1 } }]), {
      code: 'QUOTA_EXCEEDED',
      message: /^Over the quota of alice \(\/lading\/home\/alice\): 1\.00 GiB allowed, 1004 MiB used, this write needs 50\.0 MiB; nothing was stored\./,
    });
    assert.throws(() => quotaDeltas([quota('/z', null, 0, { maxObjects: 2, objects: 2 })], [{ removed: null, added: p('/z/f'), amount: { bytes: 0, objects: 1 } }]), {
      code: 'QUOTA_EXCEEDED', message: /the collection \/z: 2 data objects allowed, 2 held, this write adds 1/,
    });
    assert.deepEqual([...quotaDeltas([quota('/z', 10, 50)], [{ removed: null, added: p('/z/f'), amount: { bytes: -5, objects: 0 } }])], [['/z', { bytes: -5, objects: 0 }]]);
  });

  it('reads and writes sizes', () => {
    assert.equal(parseSize('10GiB'), 10 * 1024 ** 3);
    assert.equal(parseSize('500 MB'), 500e6);
    assert.equal(parseSize('1.5K'), 1536);
    assert.equal(parseSize('42'), 42);
    for (const bad of ['', 'lots', '-1', '1XB', '1e400']) assert.throws(() => parseSize(bad), { code: 'BAD_REQUEST' }, bad);
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(1536), '1.50 KiB');
    assert.equal(formatBytes(10 * 1024 ** 3), '10.0 GiB');
  });
});
