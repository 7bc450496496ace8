/**
 * Contract of the catalog's OpenID Connect store (`OidcStore`): expiry, lookups by index,
 * single consumption, grant revocation and rate-limit counters. Every catalog driver runs it;
 * it asserts behaviour, not storage details.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

export const oidcContract: ContractSuite = ({ name, create }) => {
  describe(`catalog OIDC store contract: ${name}`, () => {
    let catalog: Catalog;
    before(async () => {
      catalog = await create();
    });
    after(async () => {
      await catalog.close();
    });

    it('stores, replaces and expires records', async () => {
      await catalog.oidcPut('Session', 's1', { payload: '{"a":1}', expiresAt: at(60) });
      assert.equal((await catalog.oidcGet('Session', 's1', T0))?.payload, '{"a":1}');
      assert.equal(await catalog.oidcGet('Grant', 's1', T0), null, 'kinds are separate namespaces');
      await catalog.oidcPut('Session', 's1', { payload: '{"a":2}', expiresAt: at(60) });
      assert.equal((await catalog.oidcGet('Session', 's1', T0))?.payload, '{"a":2}');
      assert.equal(await catalog.oidcGet('Session', 's1', at(60)), null, 'expired at its expiry instant');
      await catalog.oidcPut('Key', 'k', { payload: 'x', expiresAt: null });
      assert.equal((await catalog.oidcGet('Key', 'k', at(1e9)))?.expiresAt, null, 'null never expires');
    });

    it('finds by uid and user code within a kind', async () => {
      await catalog.oidcPut('Session', 's2', { payload: 'p', expiresAt: at(60), uid: 'u-1' });
      await catalog.oidcPut('DeviceCode', 'd1', { payload: 'q', expiresAt: at(60), userCode: 'ABCD' });
      assert.equal((await catalog.oidcGetByUid('Session', 'u-1', T0))?.id, 's2');
      assert.equal(await catalog.oidcGetByUid('Grant', 'u-1', T0), null);
      assert.equal((await catalog.oidcGetByUserCode('DeviceCode', 'ABCD', T0))?.payload, 'q');
      assert.equal(await catalog.oidcGetByUserCode('DeviceCode', 'ABCD', at(61)), null);
    });

    it('consumes a record exactly once', async () => {
      await catalog.oidcPut('AuthorizationCode', 'c1', { payload: 'c', expiresAt: at(60) });
      const results = await Promise.all([1, 2, 3].map(() => catalog.oidcConsume('AuthorizationCode', 'c1', at(1))));
      assert.deepEqual(results.filter(Boolean).length, 1);
      assert.deepEqual((await catalog.oidcGet('AuthorizationCode', 'c1', at(2)))?.consumedAt, at(1));
      assert.equal(await catalog.oidcConsume('AuthorizationCode', 'missing', at(1)), false);
      await catalog.oidcPut('AuthorizationCode', 'c2', { payload: 'c', expiresAt: at(60) });
      assert.equal(await catalog.oidcConsume('AuthorizationCode', 'c2', at(60)), false, 'an expired record cannot be consumed');
    });

    it('inserts only when no live record exists', async () => {
      assert.equal(await catalog.oidcInsert('Key', 'once', { payload: 'first', expiresAt: at(10) }, T0), true);
      assert.equal(await catalog.oidcInsert('Key', 'once', { payload: 'second', expiresAt: at(10) }, T0), false);
      assert.equal((await catalog.oidcGet('Key', 'once', T0))?.payload, 'first');
      assert.equal(await catalog.oidcInsert('Key', 'once', { payload: 'third', expiresAt: null }, at(10)), true, 'an expired one is replaced');
      assert.equal((await catalog.oidcGet('Key', 'once', at(20)))?.payload, 'third');
    });

    it('lists live records of a kind, deletes, and revokes by grant', async () => {
      await catalog.oidcPut('AccessToken', 'a1', { payload: '1', expiresAt: at(60), grantId: 'g1' });
      await catalog.oidcPut('RefreshToken', 'r1', { payload: '2', expiresAt: at(60), grantId: 'g1' });
      await catalog.oidcPut('AccessToken', 'a2', { payload: '3', expiresAt: at(60), grantId: 'g2' });
      await catalog.oidcPut('AccessToken', 'a3', { payload: '4', expiresAt: at(5) });
      assert.deepEqual((await catalog.oidcList('AccessToken', at(10))).map((r) => r.id), ['a1', 'a2']);
      await catalog.oidcDeleteByGrantId('g1');
      assert.equal(await catalog.oidcGet('AccessToken', 'a1', T0), null);
      assert.equal(await catalog.oidcGet('RefreshToken', 'r1', T0), null);
      assert.ok(await catalog.oidcGet('AccessToken', 'a2', T0));
      await catalog.oidcDelete('AccessToken', 'a2');
      await catalog.oidcDelete('AccessToken', 'a2');
      assert.equal(await catalog.oidcGet('AccessToken', 'a2', T0), null);
      assert.ok((await catalog.oidcDeleteExpired(at(10))) >= 1);
      assert.equal(await catalog.oidcGet('AccessToken', 'a3', T0), null, 'expired records are purged');
    });

    it('counts in fixed windows', async () => {
      assert.deepEqual(await catalog.oidcCount('login:u', T0, 60, false), { count: 0, resetsAt: T0 });
      assert.equal((await catalog.oidcCount('login:u', T0, 60, true)).count, 1);
      const second = await catalog.oidcCount('login:u', at(30), 60, true);
      assert.deepEqual(second, { count: 2, resetsAt: at(60) });
      assert.equal((await catalog.oidcCount('login:u', at(59), 60, false)).count, 2);
      assert.equal((await catalog.oidcCount('login:u', at(60), 60, false)).count, 0, 'the window has ended');
      assert.deepEqual(await catalog.oidcCount('login:u', at(61), 60, true), { count: 1, resetsAt: at(121) });
      await catalog.oidcResetCount('login:u');
      assert.equal((await catalog.oidcCount('login:u', at(62), 60, false)).count, 0);
    });
  });
};
