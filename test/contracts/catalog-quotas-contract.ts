/**
 * The quotas contract: a quota counts what is below its collection (the trash included, until
 * purged) when it is set and in every change after, refuses with `QUOTA_EXCEEDED` a change that
 * would pass a bound (committing nothing), nests, follows a renamed collection, and holds
 * against racing commits, as every catalog driver must.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');

export const quotasContract: ContractSuite = ({ name, create }) => {
  describe(`catalog quotas contract: ${name}`, () => {
    let c: Catalog;
    let n = 0;
    const put = (path: string, size: number, overwrite = false) =>
      c.commitObject({ path: p(path), owner: 'alice', size, checksum: 'sha2:x', blob: `blob-${++n}`, now: t0, overwrite });
    const usage = async (path: string) => {
      const q = await c.getQuota(p(path));
      return q && { bytes: q.bytes, objects: q.objects };
    };
    beforeEach(async () => {
      c = await create();
      for (const path of ['/z', '/z/home', '/z/home/alice', '/z/home/alice/d', '/z/other']) await c.createCollection({ path: p(path), owner: 'alice', now: t0 });
    });
    afterEach(async () => {
      await c.close();
    });

    it('counts what is there when set, the trash included, and refuses a path that is not a collection', async () => {
      await put('/z/home/alice/a', 10);
      await put('/z/home/alice/d/b', 20);
      await put('/z/home/alice/d/c', 5);
      await put('/z/other/x', 100);
      await c.trash({ path: p('/z/home/alice/d'), actor: 'alice', reason: null, now: t0 });
      const q = await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 1000, maxObjects: null });
      assert.deepEqual(q, { path: '/z/home/alice', user: 'alice', maxBytes: 1000, maxObjects: null, bytes: 35, objects: 3 });
      assert.deepEqual(await c.listQuotas(), [q]);
      await rejectsWith(c.setQuota({ path: p('/z/none'), user: null, maxBytes: 1, maxObjects: null }), 'NOT_FOUND');
      await rejectsWith(c.setQuota({ path: p('/z/other/x'), user: null, maxBytes: 1, maxObjects: null }), 'NOT_A_COLLECTION');
      assert.equal(await c.clearQuota(p('/z/home/alice')), true);
      assert.equal(await c.clearQuota(p('/z/home/alice')), false);
      assert.equal(await c.getQuota(p('/z/home/alice')), null);
    });

    it('charges commits and overwrites, and refuses one past a bound without committing it', async () => {
      await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 100, maxObjects: 3 });
      await put('/z/home/alice/a', 60);
      await put('/z/home/alice/a', 40, true);
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 40, objects: 1 });
      await rejectsWith(put('/z/home/alice/b', 61), 'QUOTA_EXCEEDED');
      assert.equal(await c.getEntity(p('/z/home/alice/b')), null, 'the refused object is not there');
      await rejectsWith(put('/z/home/alice/a', 101, true), 'QUOTA_EXCEEDED');
      assert.equal((await c.getEntity(p('/z/home/alice/a')))?.kind === 'dataobject' && (await c.getEntity(p('/z/home/alice/a')) as { size: number }).size, 40);
      await put('/z/home/alice/b', 60);
      await put('/z/home/alice/c', 0);
      await rejectsWith(put('/z/home/alice/d/e', 0), 'QUOTA_EXCEEDED');
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 100, objects: 3 });
      // NOTE: a write that adds nothing passes even over a bound lowered below the usage.
      await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 10, maxObjects: null });
      await put('/z/home/alice/b', 50, true);
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 90, objects: 3 });
      const refused = await put('/z/home/alice/b', 51, true).catch((e: unknown) => e as { code: string; details: Record<string, unknown> });
      assert.equal((refused as { code: string }).code, 'QUOTA_EXCEEDED');
      assert.equal((refused as { details: Record<string, unknown> }).details.quota, '/z/home/alice');
      await put('/z/other/free', 1000);
    });

    it('nests: every quota above a path bounds it', async () => {
      await c.setQuota({ path: p('/z'), user: null, maxBytes: 50, maxObjects: null });
      await c.setQuota({ path: p('/z/home/alice/d'), user: null, maxBytes: 30, maxObjects: null });
      await put('/z/home/alice/d/a', 30);
      await rejectsWith(put('/z/home/alice/d/b', 1), 'QUOTA_EXCEEDED');
      await put('/z/other/a', 20);
      await rejectsWith(put('/z/other/b', 1), 'QUOTA_EXCEEDED');
      assert.deepEqual(await usage('/z'), { bytes: 50, objects: 2 });
      assert.deepEqual(await usage('/z/home/alice/d'), { bytes: 30, objects: 1 });
      assert.deepEqual((await c.quotasCovering(p('/z/home/alice/d/a'))).map((q) => q.path), ['/z', '/z/home/alice/d']);
    });

    it('moves usage with a move across quotas, checks the destination, and takes a quota along with its collection', async () => {
      await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 100, maxObjects: null });
      await c.setQuota({ path: p('/z/home/alice/d'), user: null, maxBytes: 100, maxObjects: null });
      await put('/z/other/big', 200);
      await put('/z/other/small', 30);
      await rejectsWith(c.move({ from: p('/z/other/big'), to: p('/z/home/alice/big'), now: t0, overwrite: false }), 'QUOTA_EXCEEDED');
      assert.ok(await c.getEntity(p('/z/other/big')), 'the refused move left it where it was');
      await c.move({ from: p('/z/other/small'), to: p('/z/home/alice/d/small'), now: t0, overwrite: false });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 30, objects: 1 });
      await c.rename(p('/z/home/alice/d/small'), p('/z/home/alice/small'), t0);
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 30, objects: 1 });
      assert.deepEqual(await usage('/z/home/alice/d'), { bytes: 0, objects: 0 });
      await put('/z/home/alice/d/in', 5);
      await c.rename(p('/z/home/alice/d'), p('/z/home/alice/e'), t0);
      assert.equal(await c.getQuota(p('/z/home/alice/d')), null);
      assert.deepEqual(await usage('/z/home/alice/e'), { bytes: 5, objects: 1 });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 35, objects: 2 });
      await c.move({ from: p('/z/home/alice/e'), to: p('/z/other/e'), now: t0, overwrite: false });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 30, objects: 1 });
      assert.deepEqual(await usage('/z/other/e'), { bytes: 5, objects: 1 });
      await c.trash({ path: p('/z/other/e'), actor: 'alice', reason: null, now: t0 });
      await c.createCollection({ path: p('/z/home/alice/f'), owner: 'alice', now: t0 });
      await c.setQuota({ path: p('/z/home/alice/f'), user: null, maxBytes: 10, maxObjects: null });
      await rejectsWith(c.rename(p('/z/home/alice/f'), p('/z/other/e'), t0), 'CONFLICT');
      assert.ok(await c.getQuota(p('/z/other/e')), 'the quota that still counts the trash stayed');
    });

    it('counts the trash until it is purged, and charges a restore where it lands', async () => {
      await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 100, maxObjects: null });
      await put('/z/home/alice/a', 70);
      const entry = await c.trash({ path: p('/z/home/alice/a'), actor: 'alice', reason: null, now: t0 });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 70, objects: 1 }, 'trashing frees nothing');
      await rejectsWith(put('/z/home/alice/b', 31), 'QUOTA_EXCEEDED');
      await c.restore({ id: entry.id, to: p('/z/other/a'), now: t0 });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 0, objects: 0 });
      const again = await c.trash({ path: p('/z/other/a'), actor: 'alice', reason: null, now: t0 });
      await put('/z/home/alice/b', 40);
      await rejectsWith(c.restore({ id: again.id, to: p('/z/home/alice/a'), now: t0 }), 'QUOTA_EXCEEDED');
      assert.ok((await c.getTrashEntry(again.id))?.state === 'trashed', 'the refused restore left it in the trash');
      const third = await c.trash({ path: p('/z/home/alice/b'), actor: 'alice', reason: null, now: t0 });
      await c.removeTrashed({ ids: [third.id], limit: 10, state: 'purged', by: 'alice', reason: null, now: t0 });
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 0, objects: 0 }, 'purging frees it');
    });

    it('lets racing commits pass the bounds only as far as they allow', async () => {
      await c.setQuota({ path: p('/z/home/alice'), user: 'alice', maxBytes: 100, maxObjects: null });
      const outcomes = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => put(`/z/home/alice/f${i}`, 10)));
      const ok = outcomes.filter((o) => o.status === 'fulfilled').length;
      assert.equal(ok, 10);
      for (const o of outcomes) if (o.status === 'rejected') assert.equal((o.reason as { code: string }).code, 'QUOTA_EXCEEDED');
      assert.deepEqual(await usage('/z/home/alice'), { bytes: 100, objects: 10 });
      assert.equal((await c.listChildren(p('/z/home/alice'))).filter((e) => e.kind === 'dataobject').length, 10);
    });
  });
};
