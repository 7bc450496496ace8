/**
 * The share-link contract: links found by token hash and by id until revoked, listed by entity
 * and by creator, counted while active, used up atomically (racing uses never take more than
 * the link allows), a drop box's bytes reserved atomically (racing reservations never pass its
 * byte bound), purged once expired long enough, and an entity's marks (published, shared, with
 * live links) read in one go, as every catalog driver must show them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parsePath as p } from '../../src/core/path.ts';
import type { Catalog } from '../../src/core/ports.ts';
import type { ShareRecord } from '../../src/core/types.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

export const sharesContract: ContractSuite = ({ name, create }) => {
  describe(`catalog shares contract: ${name}`, () => {
    let c: Catalog;
    let n = 0;
    const share = (over: Partial<Omit<ShareRecord, 'uses' | 'bytesUsed'>> = {}): Omit<ShareRecord, 'uses' | 'bytesUsed'> => ({
      id: randomUUID(), tokenHash: `hash-${n++}`, entityId: 'entity-1', kind: 'read', creator: 'alice',
      createdAt: later(n), expiresAt: null, maxUses: null, maxBytes: null, passwordHash: null, ...over,
    });

    beforeEach(async () => {
      c = await create();
      for (const u of ['alice', 'bob']) await c.createUser({ name: u, kind: 'user', passwordHash: null, createdAt: t0 });
    });
    afterEach(async () => {
      await c.close();
    });

    it('marks entities published, shared and with live links, from their own entries and links, in one read', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      const made: Record<string, string> = {};
      for (const name of ['plain', 'public', 'team', 'linked', 'expired', 'used', 'all']) {
        made[name] = (await c.createCollection({ path: p(`/z/${name}`), owner: 'alice', now: t0 })).id;
      }
      await c.setAccess(p('/z/public'), 'anonymous', 'read');
      await c.setAccess(p('/z/team'), 'bob', 'read');
      await c.setAccess(p('/z/all'), 'public', 'read');
      await c.setAccess(p('/z/all'), 'anonymous', 'read');
      await c.createShare(share({ entityId: made.linked! }));
      await c.createShare(share({ entityId: made.all! }));
      await c.createShare(share({ entityId: made.expired!, expiresAt: later(1000) }));
      const used = await c.createShare(share({ entityId: made.used!, maxUses: 1 }));
      assert.equal(await c.consumeShareUse(used.id, later(10)), true);
      const marks = await c.marksOf([...Object.values(made), 'no-such-id'], { anonymous: 'anonymous', now: later(2000) });
      const byName = Object.fromEntries(Object.entries(made).map(([name, id]) => [name, marks.get(id) ?? null]));
      assert.deepEqual(byName, {
        plain: null,
        public: { published: true, shared: false, links: false },
        team: { published: false, shared: true, links: false },
        linked: { published: false, shared: false, links: true },
        expired: null,
        used: null,
        all: { published: true, shared: true, links: true },
      });
      assert.equal((await c.marksOf([made.expired!], { anonymous: 'anonymous', now: later(500) })).get(made.expired!)?.links, true, 'a link not yet expired');
      assert.deepEqual(await c.marksOf([], { anonymous: 'anonymous', now: t0 }), new Map());
      // Entries inherited from a collection above do not mark what is in it.
      await c.createCollection({ path: p('/z/team/inner'), owner: 'alice', now: t0 });
      const inner = (await c.getEntity(p('/z/team/inner')))!.id;
      assert.equal((await c.marksOf([inner], { anonymous: 'anonymous', now: t0 })).size, 0);
    });

    it('stores a link with no use and finds it by token hash and by id, every field as given', async () => {
      const given = share({ kind: 'upload', expiresAt: later(3_600_000), maxUses: 5, maxBytes: 5 * 1024 ** 4, passwordHash: 'scrypt$x' });
      assert.deepEqual(await c.createShare(given), { ...given, uses: 0, bytesUsed: 0 });
      assert.deepEqual(await c.getShareByToken(given.tokenHash), { ...given, uses: 0, bytesUsed: 0 });
      assert.deepEqual(await c.getShare(given.id), { ...given, uses: 0, bytesUsed: 0 });
      const plain = share();
      await c.createShare(plain);
      assert.deepEqual(await c.getShare(plain.id), { ...plain, uses: 0, bytesUsed: 0 }, 'no expiry, no limit, no byte bound, no password: nulls');
      assert.equal(await c.getShareByToken('unknown'), null);
      assert.equal(await c.getShare(randomUUID()), null);
    });

    it('refuses a taken id or token hash with CONFLICT, and a creator who is no user with NOT_FOUND', async () => {
      const first = share();
      await c.createShare(first);
      await rejectsWith(c.createShare(share({ id: first.id })), 'CONFLICT');
      await rejectsWith(c.createShare(share({ tokenHash: first.tokenHash })), 'CONFLICT');
      const orphan = share({ creator: 'nobody' });
      await rejectsWith(c.createShare(orphan), 'NOT_FOUND');
      assert.equal(await c.getShare(orphan.id), null);
    });

    it('lists the links of an entity and of a creator, oldest first, and no others', async () => {
      const a1 = await c.createShare(share({ createdAt: later(1) }));
      const b1 = await c.createShare(share({ creator: 'bob', createdAt: later(2) }));
      const a2 = await c.createShare(share({ entityId: 'entity-2', createdAt: later(3) }));
      const a3 = await c.createShare(share({ createdAt: later(4) }));
      assert.deepEqual((await c.listSharesOfEntity('entity-1')).map((s) => s.id), [a1.id, b1.id, a3.id]);
      assert.deepEqual((await c.listSharesOfEntity('entity-2')).map((s) => s.id), [a2.id]);
      assert.deepEqual((await c.listSharesOfCreator('alice')).map((s) => s.id), [a1.id, a2.id, a3.id]);
      assert.deepEqual((await c.listSharesOfCreator('bob')).map((s) => s.id), [b1.id]);
      assert.deepEqual(await c.listSharesOfEntity('entity-3'), []);
    });

    it('counts a creator\'s active links: not expired at now, not used up', async () => {
      await c.createShare(share());
      await c.createShare(share({ expiresAt: later(1000) }));
      await c.createShare(share({ expiresAt: later(2000) }));
      const once = await c.createShare(share({ maxUses: 1 }));
      await c.createShare(share({ creator: 'bob' }));
      assert.equal(await c.countActiveShares('alice', t0), 4);
      assert.equal(await c.countActiveShares('alice', later(1000)), 3, 'expired at its expiry');
      assert.equal(await c.consumeShareUse(once.id, t0), true);
      assert.equal(await c.countActiveShares('alice', later(1000)), 2, 'used up');
      assert.equal(await c.countActiveShares('bob', t0), 1);
      assert.equal(await c.countActiveShares('nobody', t0), 0);
    });

    it('changes a link\'s expiry and use limit, keeping what is not given and its uses; null for an unknown link', async () => {
      const s = await c.createShare(share({ expiresAt: later(1000), maxUses: 2 }));
      assert.equal(await c.consumeShareUse(s.id, t0), true);
      assert.deepEqual(await c.updateShare(s.id, { maxUses: 5 }), { ...s, maxUses: 5, uses: 1 });
      assert.deepEqual(await c.updateShare(s.id, { expiresAt: later(5000) }), { ...s, expiresAt: later(5000), maxUses: 5, uses: 1 });
      assert.deepEqual(await c.getShare(s.id), { ...s, expiresAt: later(5000), maxUses: 5, uses: 1 }, 'as stored');
      assert.equal(await c.consumeShareUse(s.id, later(2000)), true, 'usable past its old expiry');
      assert.deepEqual(await c.updateShare(s.id, { expiresAt: null, maxUses: null }), { ...s, expiresAt: null, maxUses: null, uses: 2 });
      assert.deepEqual(await c.updateShare(s.id, { maxUses: 2 }), { ...s, expiresAt: null, maxUses: 2, uses: 2 });
      assert.equal(await c.consumeShareUse(s.id, t0), false, 'used up under its new limit');
      assert.equal(await c.updateShare(randomUUID(), { maxUses: 1 }), null);
    });

    it('revokes a link: gone by token and by id, at once; idempotent', async () => {
      const s = await c.createShare(share());
      assert.equal(await c.revokeShare(s.id), true);
      assert.equal(await c.getShareByToken(s.tokenHash), null);
      assert.equal(await c.getShare(s.id), null);
      assert.deepEqual(await c.listSharesOfCreator('alice'), []);
      assert.equal(await c.revokeShare(s.id), false);
    });

    it('takes uses up to the limit, none from an expired or revoked link, and gives one back', async () => {
      const twice = await c.createShare(share({ maxUses: 2 }));
      assert.equal(await c.consumeShareUse(twice.id, t0), true);
      assert.equal(await c.consumeShareUse(twice.id, t0), true);
      assert.equal(await c.consumeShareUse(twice.id, t0), false, 'used up');
      assert.equal((await c.getShare(twice.id))?.uses, 2);
      await c.releaseShareUse(twice.id);
      assert.equal((await c.getShare(twice.id))?.uses, 1);
      assert.equal(await c.consumeShareUse(twice.id, t0), true, 'the use given back can be taken again');

      const unlimited = await c.createShare(share());
      for (let i = 0; i < 5; i++) assert.equal(await c.consumeShareUse(unlimited.id, t0), true);
      assert.equal((await c.getShare(unlimited.id))?.uses, 5);

      const expiring = await c.createShare(share({ expiresAt: later(1000) }));
      assert.equal(await c.consumeShareUse(expiring.id, later(999)), true);
      assert.equal(await c.consumeShareUse(expiring.id, later(1000)), false, 'expired at its expiry');

      const fresh = await c.createShare(share());
      await c.releaseShareUse(fresh.id);
      assert.equal((await c.getShare(fresh.id))?.uses, 0, 'never below zero');

      await c.revokeShare(unlimited.id);
      assert.equal(await c.consumeShareUse(unlimited.id, t0), false, 'revoked');
      await c.releaseShareUse(unlimited.id);
    });

    it('purges the links that expired before a time, and no others', async () => {
      const early = await c.createShare(share({ expiresAt: later(1000) }));
      const atCut = await c.createShare(share({ expiresAt: later(2000) }));
      const late = await c.createShare(share({ creator: 'bob', expiresAt: later(3000) }));
      const never = await c.createShare(share());
      const usedUp = await c.createShare(share({ maxUses: 1 }));
      assert.equal(await c.consumeShareUse(usedUp.id, t0), true);
      assert.equal(await c.purgeExpiredShares(later(2000)), 1);
      assert.equal(await c.getShare(early.id), null);
      assert.equal(await c.getShareByToken(early.tokenHash), null);
      for (const kept of [atCut, late, never, usedUp]) assert.ok(await c.getShare(kept.id), 'expired at the time or later, never, or used up: kept');
      assert.equal(await c.purgeExpiredShares(later(2000)), 0, 'idempotent');
    });

    it('reserves bytes up to the byte bound (its own, or the fallback without one), and gives them back', async () => {
      const bounded = await c.createShare(share({ kind: 'upload', maxBytes: 100 }));
      assert.equal(await c.reserveShareBytes(bounded.id, 60, 1000), true);
      assert.equal(await c.reserveShareBytes(bounded.id, 41, 1000), false, 'past its own bound, whatever the fallback');
      assert.equal((await c.getShare(bounded.id))?.bytesUsed, 60, 'a refused reservation takes nothing');
      assert.equal(await c.reserveShareBytes(bounded.id, 40, 1000), true, 'up to the bound exactly');
      assert.equal(await c.reserveShareBytes(bounded.id, 0, 1000), true, 'nothing always fits');
      assert.equal(await c.reserveShareBytes(bounded.id, 1, 1000), false);
      await c.releaseShareBytes(bounded.id, 30);
      assert.equal((await c.getShare(bounded.id))?.bytesUsed, 70);
      assert.equal(await c.reserveShareBytes(bounded.id, 30, 1000), true, 'bytes given back can be taken again');
      await c.releaseShareBytes(bounded.id, 500);
      assert.equal((await c.getShare(bounded.id))?.bytesUsed, 0, 'never below zero');

      const older = await c.createShare(share({ kind: 'upload' }));
      assert.equal(await c.reserveShareBytes(older.id, 10, 10), true, 'without a bound of its own, the fallback bounds it');
      assert.equal(await c.reserveShareBytes(older.id, 1, 10), false);

      const large = await c.createShare(share({ kind: 'upload', maxBytes: 3 * 1024 ** 4 }));
      assert.equal(await c.reserveShareBytes(large.id, 2 * 1024 ** 4, 1), true, 'counts past 32 bits');
      assert.equal((await c.getShare(large.id))?.bytesUsed, 2 * 1024 ** 4);

      await c.revokeShare(bounded.id);
      assert.equal(await c.reserveShareBytes(bounded.id, 1, 1000), false, 'revoked');
      await c.releaseShareBytes(bounded.id, 1);
    });

    it('lets racing reservations take no more than the byte bound', async () => {
      const s = await c.createShare(share({ kind: 'upload', maxBytes: 1000 }));
      const sizes = Array.from({ length: 24 }, (_, i) => 90 + i * 7);
      const taken = await Promise.all(sizes.map((bytes) => c.reserveShareBytes(s.id, bytes, 10 ** 9)));
      const sum = sizes.reduce((total, bytes, i) => total + (taken[i] ? bytes : 0), 0);
      assert.ok(sum <= 1000, `reserved ${sum} of 1000`);
      assert.ok(sum > 1000 - Math.max(...sizes), `refused only what did not fit: ${sum}`);
      assert.equal((await c.getShare(s.id))?.bytesUsed, sum, 'the count is the sum of the reservations taken');
    });

    it('lets racing uses take no more than the limit', async () => {
      const s = await c.createShare(share({ maxUses: 3 }));
      const taken = await Promise.all(Array.from({ length: 12 }, () => c.consumeShareUse(s.id, t0)));
      assert.equal(taken.filter(Boolean).length, 3);
      assert.equal((await c.getShare(s.id))?.uses, 3);
    });
  });
};
