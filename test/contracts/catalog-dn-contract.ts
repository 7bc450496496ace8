/**
 * The DN-mapping part of the catalog contract (certificate subject DN → backend user), plus
 * the compare-and-swap update of a session's credential that proxy regeneration relies on.
 * Asserted by error codes. Each driver's test file calls `dnMappingContract` with a factory
 * returning a fresh, empty catalog.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ErrorCode } from '../../src/core/errors.ts';

const t0 = new Date('2026-01-01T00:00:00Z');

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (err: { code?: string }) => {
    assert.equal(err.code, code);
    return true;
  });
}

export function dnMappingContract(name: string, create: () => Promise<Catalog>): void {
  describe(`catalog DN mapping contract: ${name}`, () => {
    let c: Catalog;
    const alice = '/O=lading/OU=tz/CN=alice';
    beforeEach(async () => {
      c = await create();
      for (const u of ['alice', 'bob']) await c.createUser({ name: u, kind: 'user', passwordHash: null, createdAt: t0 });
    });
    afterEach(async () => {
      await c.close();
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
}
