/**
 * The blob-tracking contract: blobs of unfinished writes, found by age, with the node writing
 * them and when that node last beat, as every catalog driver must track them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export const blobsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog blobs contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('tracks blobs of unfinished writes by age', async () => {
      await c.trackBlob('blob00000001', t0);
      await c.trackBlob('blob00000002', t1);
      assert.deepEqual((await c.trackedBlobs(t1)).map((b) => b.blob), ['blob00000001']);
      await c.untrackBlob('blob00000001');
      assert.deepEqual((await c.trackedBlobs(new Date(t1.getTime() + 1))).map((b) => b.blob), ['blob00000002']);
    });

    it('reports each blob\'s owner and when that owner last beat, until it is forgotten', async () => {
      const later = new Date(t1.getTime() + 60_000);
      await c.heartbeat('node-a', t0);
      await c.heartbeat('node-a', t1);
      await c.trackBlob('blob00000003', t0, 'node-a');
      await c.trackBlob('blob00000004', t0, 'node-b');
      await c.trackBlob('blob00000005', t0);
      await c.trackBlob('blob00000003', t1, 'node-b');
      assert.deepEqual(await c.trackedBlobs(later), [
        { blob: 'blob00000003', trackedAt: t0, owner: 'node-a', ownerSeenAt: t1 },
        { blob: 'blob00000004', trackedAt: t0, owner: 'node-b', ownerSeenAt: null },
        { blob: 'blob00000005', trackedAt: t0, owner: null, ownerSeenAt: null },
      ], 'tracking again changes nothing; an owner without a heartbeat has none');
      await c.forgetNode('node-a');
      await c.forgetNode('node-a');
      assert.equal((await c.trackedBlobs(later))[0]!.ownerSeenAt, null);
    });
  });
};
