/** The handle contract: records of the embedded PID service, as every catalog driver must keep them. */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export const handlesContract: ContractSuite = ({ name, create }) => {
  describe(`catalog handles contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('stores handle records and finds them by handle', async () => {
      await c.putHandle('21.T1/x', { URL: 'https://e/x' }, t0);
      assert.deepEqual((await c.getHandle('21.T1/x'))?.values, { URL: 'https://e/x' });
      assert.equal(await c.getHandle('21.T1/none'), null);
    });

    it('replaces a record, keeping when it was created', async () => {
      await c.putHandle('21.T1/x', { URL: 'https://e/x', CHECKSUM: 'sha2:a' }, t0);
      await c.putHandle('21.T1/x', { URL: 'https://e/moved' }, t1);
      assert.deepEqual(await c.getHandle('21.T1/x'), {
        handle: '21.T1/x', values: { URL: 'https://e/moved' }, createdAt: t0, updatedAt: t1,
      });
    });
  });
};
