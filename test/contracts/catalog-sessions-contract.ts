/**
 * The sessions contract: sessions found by token hash until they expire, the compare-and-swap
 * update of a session's credential that proxy regeneration relies on, a user's latest live
 * session, browser sessions ending at their idle deadline unless touched, and a user's
 * sessions of one kind listed and revoked by their public id, as every catalog driver must
 * show them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export const sessionsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog sessions contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('finds sessions by token hash until they expire', async () => {
      await c.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: t0 });
      await c.putSession({ tokenHash: 'h1', user: 'alice', createdAt: t0, expiresAt: t1, credential: 'c1' });
      assert.equal((await c.getSession('h1', t0))?.credential, 'c1');
      assert.equal(await c.getSession('h1', t1), null, 'expired at expiresAt');
      assert.equal(await c.updateSessionCredential('h1', 'c2'), true);
      assert.equal((await c.getSession('h1', t0))?.credential, 'c2');
      assert.equal(await c.updateSessionCredential('nope', 'c2'), false);
      assert.equal(await c.deleteExpiredSessions(new Date(t1.getTime() + 1)), 1);
      assert.equal(await c.getSession('h1', t0), null);
      await c.putSession({ tokenHash: 'h2', user: 'alice', createdAt: t0, expiresAt: t1, credential: null });
      await c.deleteSession('h2');
      assert.equal(await c.getSession('h2', t0), null);
    });

    describe('of the users alice and bob', () => {
      beforeEach(async () => {
        for (const u of ['alice', 'bob']) await c.createUser({ name: u, kind: 'user', passwordHash: null, createdAt: t0 });
      });

      it('ends every session of one user and no other', async () => {
        const until = new Date(t0.getTime() + 3600_000);
        for (const [hash, user] of [['a1', 'alice'], ['a2', 'alice'], ['b1', 'bob']] as const) {
          await c.putSession({ tokenHash: hash, user, createdAt: t0, expiresAt: until, credential: null });
        }
        assert.equal(await c.deleteSessionsOf('alice'), 2);
        assert.equal(await c.getSession('a1', t0), null);
        assert.equal(await c.getSession('a2', t0), null);
        assert.equal((await c.getSession('b1', t0))?.user, 'bob');
        assert.equal(await c.deleteSessionsOf('alice'), 0, 'idempotent');
      });

      it('swaps a session credential only when it still holds the expected value', async () => {
        await c.putSession({ tokenHash: 'h1', user: 'alice', createdAt: t0, expiresAt: new Date(t0.getTime() + 3600_000), credential: 'old' });
        assert.equal(await c.updateSessionCredential('h1', 'new-a', 'old'), true);
        assert.equal(await c.updateSessionCredential('h1', 'new-b', 'old'), false);
        assert.equal((await c.getSession('h1', t0))?.credential, 'new-a');
        assert.equal(await c.updateSessionCredential('gone', 'x', 'old'), false);
        assert.equal(await c.updateSessionCredential('h1', 'plain'), true);
        assert.equal((await c.getSession('h1', t0))?.credential, 'plain');
      });

      it('finds the most recent live session of a user', async () => {
        const t1 = new Date(t0.getTime() + 1000);
        await c.putSession({ tokenHash: 'a1', user: 'alice', createdAt: t0, expiresAt: new Date(t0.getTime() + 3600_000), credential: 'one' });
        await c.putSession({ tokenHash: 'a2', user: 'alice', createdAt: t1, expiresAt: new Date(t0.getTime() + 7200_000), credential: 'two' });
        assert.equal((await c.latestSessionOf('alice', t1))?.credential, 'two');
        assert.equal(await c.latestSessionOf('bob', t1), null);
        assert.equal(await c.latestSessionOf('alice', new Date(t0.getTime() + 7200_000)), null);
      });
      it('stores every field of a session, making up an id and the api kind when not given', async () => {
        const until = new Date(t0.getTime() + 3600_000);
        await c.putSession({ tokenHash: 'p1', user: 'alice', createdAt: t0, expiresAt: until, credential: null });
        const plain = await c.getSession('p1', t0);
        assert.equal(plain?.kind, 'api');
        assert.match(plain?.id ?? '', /^[A-Za-z0-9_-]{8,}$/);
        assert.equal(plain?.label, null);
        assert.equal(plain?.idleExpiresAt, null);
        assert.equal(plain?.lastUsedAt, null);
        await c.putSession({ tokenHash: 'p2', user: 'alice', createdAt: t0, expiresAt: until, credential: null });
        assert.notEqual((await c.getSession('p2', t0))?.id, plain?.id, 'ids differ');
        const full = {
          tokenHash: 'p3', id: 'id-p3', kind: 'browser' as const, user: 'alice', label: 'laptop', createdAt: t0, expiresAt: until,
          idleExpiresAt: new Date(t0.getTime() + 600_000), lastUsedAt: t0, credential: 'c',
        };
        await c.putSession(full);
        assert.deepEqual(await c.getSession('p3', t0), full);
      });

      it('ends a session at its idle deadline unless a touch moved it, and never revives a dead one', async () => {
        const minute = 60_000;
        await c.putSession({
          tokenHash: 'b1', id: 'b1', kind: 'browser', user: 'alice', label: null, createdAt: t0, expiresAt: new Date(t0.getTime() + 60 * minute),
          idleExpiresAt: new Date(t0.getTime() + 10 * minute), lastUsedAt: t0, credential: null,
        });
        const at = (m: number) => new Date(t0.getTime() + m * minute);
        assert.ok(await c.getSession('b1', at(9)));
        assert.equal(await c.getSession('b1', at(10)), null, 'dead at its idle deadline');
        assert.equal(await c.touchSession('b1', at(10), at(20)), false, 'a dead session is not touched');
        assert.equal(await c.getSession('b1', at(10)), null, 'nor revived');
        assert.equal(await c.touchSession('b1', at(9), at(19)), true);
        const touched = await c.getSession('b1', at(15));
        assert.deepEqual(touched?.lastUsedAt, at(9));
        assert.deepEqual(touched?.idleExpiresAt, at(19));
        assert.equal(await c.getSession('b1', at(19)), null);
        assert.equal(await c.touchSession('b1', at(18), at(70)), true);
        assert.equal(await c.getSession('b1', at(60)), null, 'the absolute deadline holds whatever the idle one says');
        assert.equal(await c.deleteExpiredSessions(at(59)), 0);
        await c.putSession({ tokenHash: 'b2', kind: 'browser', user: 'alice', createdAt: t0, expiresAt: at(60), idleExpiresAt: at(5), credential: null });
        assert.equal(await c.deleteExpiredSessions(at(5)), 1, 'an idled-out session is removed with the expired ones');
        assert.ok(await c.getSession('b1', at(30)));
      });

      it('touches a session without an idle deadline without giving it one', async () => {
        await c.putSession({ tokenHash: 'a1', user: 'alice', createdAt: t0, expiresAt: t1, credential: null });
        assert.equal(await c.touchSession('a1', t0, new Date(t0.getTime() + 1000)), true);
        const s = await c.getSession('a1', new Date(t0.getTime() + 5000));
        assert.deepEqual(s?.lastUsedAt, t0);
        assert.equal(s?.idleExpiresAt, null);
        assert.equal(await c.touchSession('gone', t0, null), false);
      });

      it('lists the live sessions of one kind of a user, oldest first, and revokes one by id for its user only', async () => {
        const until = new Date(t0.getTime() + 3600_000);
        const later = new Date(t0.getTime() + 1000);
        await c.putSession({ tokenHash: 'a2', id: 'a2', user: 'alice', label: 'second', createdAt: later, expiresAt: until, credential: null });
        await c.putSession({ tokenHash: 'a1', id: 'a1', user: 'alice', label: 'first', createdAt: t0, expiresAt: until, credential: null });
        await c.putSession({ tokenHash: 'a0', id: 'a0', user: 'alice', createdAt: t0, expiresAt: later, credential: null });
        await c.putSession({ tokenHash: 'ab', id: 'ab', kind: 'browser', user: 'alice', createdAt: t0, expiresAt: until, credential: null });
        await c.putSession({ tokenHash: 'b1', id: 'b1', user: 'bob', createdAt: t0, expiresAt: until, credential: null });
        assert.deepEqual((await c.listSessionsOf('alice', 'api', later)).map((s) => s.id), ['a1', 'a2'], 'a0 has expired');
        assert.deepEqual((await c.listSessionsOf('alice', 'browser', later)).map((s) => s.id), ['ab']);
        assert.deepEqual(await c.listSessionsOf('carol', 'api', later), []);
        assert.equal(await c.deleteSessionById('alice', 'b1'), false, "bob's session is not alice's to end");
        assert.ok(await c.getSession('b1', t0));
        assert.equal(await c.deleteSessionById('alice', 'a1'), true);
        assert.equal(await c.getSession('a1', t0), null);
        assert.equal(await c.deleteSessionById('alice', 'a1'), false);
      });
    });
  });
};
