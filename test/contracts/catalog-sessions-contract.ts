/**
 * The sessions contract: sessions found by token hash until they expire, the compare-and-swap
 * update of a session's credential that proxy regeneration relies on, and a user's latest live
 * session, as every catalog driver must show them.
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
    });
  });
};
