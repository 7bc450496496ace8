/**
 * The accounts contract: users, groups and memberships, and the mapping of certificate subject
 * DNs to users, as every catalog driver must show them. Asserted by error codes.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');

export const accountsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog accounts contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('disables and enables accounts, and removes a password', async () => {
      await c.createUser({ name: 'alice', kind: 'user', passwordHash: 'h', createdAt: t0 });
      assert.equal((await c.getUser('alice'))?.disabled, false);
      await c.setDisabled('alice', true);
      assert.equal((await c.getUser('alice'))?.disabled, true);
      assert.equal((await c.listUsers()).find((u) => u.name === 'alice')?.disabled, true);
      await c.setDisabled('alice', true);
      await c.setDisabled('alice', false);
      assert.equal((await c.getUser('alice'))?.disabled, false);
      await c.setPasswordHash('alice', null);
      assert.equal((await c.getUser('alice'))?.passwordHash, null);
      await rejectsWith(c.setDisabled('nobody', true), 'NOT_FOUND');
    });

    it('keeps users, groups and memberships', async () => {
      await c.createUser({ name: 'alice', kind: 'user', passwordHash: 'h', createdAt: t0 });
      await c.createUser({ name: 'team', kind: 'group', passwordHash: null, createdAt: t0 });
      await rejectsWith(c.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: t0 }), 'CONFLICT');
      assert.equal((await c.getUser('alice'))?.passwordHash, 'h');
      assert.equal(await c.getUser('nobody'), null);
      await c.setPasswordHash('alice', 'h2');
      assert.equal((await c.getUser('alice'))?.passwordHash, 'h2');
      await rejectsWith(c.setPasswordHash('nobody', 'x'), 'NOT_FOUND');
      await c.addToGroup('team', 'alice');
      await c.addToGroup('team', 'alice');
      assert.deepEqual(await c.groupsOf('alice'), ['team']);
      await rejectsWith(c.addToGroup('alice', 'team'), 'NOT_FOUND');
      await rejectsWith(c.addToGroup('team', 'nobody'), 'NOT_FOUND');
      assert.deepEqual((await c.listUsers()).map((u) => u.name), ['alice', 'team']);
    });

    describe('DN mapping', () => {
      const alice = '/O=lading/OU=tz/CN=alice';
      beforeEach(async () => {
        for (const u of ['alice', 'bob']) await c.createUser({ name: u, kind: 'user', passwordHash: null, createdAt: t0 });
      });

      it('maps a DN to a user, idempotently, and finds it both ways', async () => {
        assert.equal(await c.userForSubject(alice), null);
        await c.mapSubject(alice, 'alice');
        await c.mapSubject(alice, 'alice');
        await c.mapSubject('/DC=org/DC=example/CN=Alice Liddell', 'alice');
        assert.equal(await c.userForSubject(alice), 'alice');
        assert.deepEqual(await c.subjectsOf('alice'), ['/DC=org/DC=example/CN=Alice Liddell', alice]);
        assert.deepEqual(await c.subjectsOf('bob'), []);
      });

      it('matches DNs exactly (no prefix or case folding)', async () => {
        await c.mapSubject(alice, 'alice');
        assert.equal(await c.userForSubject(alice + '/CN=123'), null);
        assert.equal(await c.userForSubject(alice.toUpperCase()), null);
      });

      it('refuses to map one DN to two users (CONFLICT) and unknown users (NOT_FOUND)', async () => {
        await c.mapSubject(alice, 'alice');
        await rejectsWith(c.mapSubject(alice, 'bob'), 'CONFLICT');
        assert.equal(await c.userForSubject(alice), 'alice');
        await rejectsWith(c.mapSubject('/O=lading/CN=nobody', 'nobody'), 'NOT_FOUND');
      });

      it('unmaps idempotently', async () => {
        await c.mapSubject(alice, 'alice');
        await c.unmapSubject(alice);
        await c.unmapSubject(alice);
        assert.equal(await c.userForSubject(alice), null);
        await c.mapSubject(alice, 'bob');
        assert.equal(await c.userForSubject(alice), 'bob');
      });
    });
  });
};
