/** The blob-tracking contract: blobs of unfinished writes, found by age, as every catalog driver must track them. */
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
      assert.deepEqual(await c.trackedBlobs(t1), ['blob00000001']);
      await c.untrackBlob('blob00000001');
      assert.deepEqual(await c.trackedBlobs(new Date(t1.getTime() + 1)), ['blob00000002']);
    });
  });
};
