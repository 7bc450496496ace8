/** The WebDAV lock contract: locks as every catalog driver must keep them, shared by every node. */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { Path } from '../../src/core/path.ts';
import type { DavLock } from '../../src/core/types.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const later = (s: number) => new Date(t0.getTime() + s * 1000);

let n = 0;
function lock(path: string, over: Partial<DavLock> = {}): DavLock {
  return {
    token: `urn:uuid:00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, path: path as Path, depth: 'infinity', scope: 'exclusive',
    owner: 'alice', ownerXml: '<D:href xmlns:D="DAV:">mailto:alice@example.org</D:href>', timeoutSeconds: 600, createdAt: t0, expiresAt: later(600), ...over,
  };
}

const tokens = (locks: DavLock[]) => locks.map((l) => l.token).sort();

export const locksContract: ContractSuite = ({ name, create }) => {
  describe(`catalog locks contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('records a lock and gives it back as it was recorded', async () => {
      const l = lock('/z/home/alice/a.txt', { depth: 'zero' });
      assert.deepEqual(await c.putLock(l, t0), []);
      assert.deepEqual(await c.getLock(l.token, t0), l);
      assert.deepEqual(await c.locksAt(l.path, t0), [l]);
      assert.equal(await c.getLock('urn:uuid:none', t0), null);
    });

    it('refuses an exclusive lock beside any other, and shared locks beside shared ones only', async () => {
      const first = lock('/z/c/a', { scope: 'shared', depth: 'zero' });
      const second = lock('/z/c/a', { scope: 'shared', depth: 'zero', owner: 'bob' });
      assert.deepEqual(await c.putLock(first, t0), []);
      assert.deepEqual(await c.putLock(second, t0), []);
      const exclusive = lock('/z/c/a', { depth: 'zero' });
      assert.deepEqual(tokens(await c.putLock(exclusive, t0)), tokens([first, second]));
      assert.equal(await c.getLock(exclusive.token, t0), null);
    });

    it('sees a depth-infinity lock on an ancestor, and one below a new depth-infinity lock, as conflicts', async () => {
      const tree = lock('/z/c');
      assert.deepEqual(await c.putLock(tree, t0), []);
      assert.deepEqual(tokens(await c.putLock(lock('/z/c/d/e'), t0)), [tree.token]);
      // A lock of depth 0 covers only its root: a sibling and a child are free.
      const leaf = lock('/z/x/y', { depth: 'zero' });
      assert.deepEqual(await c.putLock(leaf, t0), []);
      const child = lock('/z/x/y/child', { depth: 'zero' });
      assert.deepEqual(await c.putLock(child, t0), []);
      assert.deepEqual(tokens(await c.putLock(lock('/z/x'), t0)), tokens([leaf, child]));
      // A name that only starts like the locked path is not below it.
      assert.deepEqual(await c.putLock(lock('/z/cc'), t0), []);
    });

    it('lists the locks covering a path, and with below those under it too', async () => {
      const top = lock('/z/a');
      const deep = lock('/z/q/r/s', { depth: 'zero' });
      const zeroAbove = lock('/z/q', { depth: 'zero' });
      for (const l of [top, zeroAbove, deep]) assert.deepEqual(await c.putLock(l, t0), []);
      assert.deepEqual(tokens(await c.locksAt('/z/a/b/c' as Path, t0)), [top.token]);
      assert.deepEqual(tokens(await c.locksAt('/z/q/r' as Path, t0)), [], 'a depth-0 lock of a parent does not cover its child');
      assert.deepEqual(tokens(await c.locksAt('/z/q' as Path, t0, { below: true })), tokens([zeroAbove, deep]));
      assert.deepEqual(tokens(await c.locksAt('/' as Path, t0, { below: true })), tokens([top, zeroAbove, deep]));
    });

    it('forgets expired locks, refreshes live ones and removes them by token or by subtree', async () => {
      const a = lock('/z/a', { expiresAt: later(10), timeoutSeconds: 10 });
      const b = lock('/z/b/c', { depth: 'zero' });
      const other = lock('/z/bb');
      for (const l of [a, b, other]) assert.deepEqual(await c.putLock(l, t0), []);
      assert.equal(await c.getLock(a.token, later(10)), null, 'expired at its end');
      assert.equal(await c.refreshLock(a.token, 60, later(70), later(11)), null, 'an expired lock cannot be refreshed');
      assert.deepEqual(await c.putLock(lock('/z/a'), later(11)), [], 'an expired lock conflicts with nothing');
      const refreshed = await c.refreshLock(b.token, 3600, later(3600), later(1));
      assert.deepEqual(refreshed, { ...b, timeoutSeconds: 3600, expiresAt: later(3600) });
      assert.equal(await c.deleteLocksWithin('/z/b' as Path), 1);
      assert.equal(await c.getLock(b.token, t0), null);
      assert.ok(await c.getLock(other.token, t0), 'a sibling whose name starts alike keeps its lock');
      assert.equal(await c.deleteLock(other.token), true);
      assert.equal(await c.deleteLock(other.token), false);
    });
  });
};
