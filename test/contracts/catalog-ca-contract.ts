/**
 * The CA contract: the deployment's certificate authorities stored by generation, with their
 * key as the caller sealed it, listed highest generation first; of several nodes adding one
 * generation at once exactly one stores it and all then read the same CA.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog, StoredCa } from '../../src/core/ports.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');
const ca = (generation: number, tag: string, createdAt = t0): StoredCa => ({
  generation, certPem: `-----BEGIN CERTIFICATE-----\n${tag}\n-----END CERTIFICATE-----\n`, sealedKey: `sealed-${tag}`, createdAt,
});

export const caContract: ContractSuite = ({ name, create }) => {
  describe(`catalog CA contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    it('holds no CA at first, then lists every generation stored, the highest first, as stored', async () => {
      assert.deepEqual(await c.listCas(), []);
      assert.equal(await c.addCa(ca(1, 'first')), true);
      assert.equal(await c.addCa(ca(2, 'second', t1)), true);
      assert.deepEqual(await c.listCas(), [ca(2, 'second', t1), ca(1, 'first')]);
    });

    it('keeps the first CA of a generation: a second one is refused and changes nothing', async () => {
      assert.equal(await c.addCa(ca(1, 'first')), true);
      assert.equal(await c.addCa(ca(1, 'other', t1)), false);
      assert.deepEqual(await c.listCas(), [ca(1, 'first')]);
    });

    it('stores exactly one of several CAs added for one generation at once', async () => {
      const results = await Promise.all(['a', 'b', 'c', 'd'].map((tag) => c.addCa(ca(1, tag))));
      assert.equal(results.filter(Boolean).length, 1);
      const [stored] = await c.listCas();
      assert.equal(stored!.sealedKey, `sealed-${['a', 'b', 'c', 'd'][results.indexOf(true)]}`);
    });
  });
};
