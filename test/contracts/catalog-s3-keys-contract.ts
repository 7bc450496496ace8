/**
 * The S3 keys contract: a user's access keys stored with their sealed secret, found by id,
 * listed oldest first per user, revoked only by their owner, and gone for every reader once
 * revoked; and the entity tag a commit records with an object's bytes (kept, replaced and
 * cleared by the next commit), as every catalog driver must show them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export const s3KeysContract: ContractSuite = ({ name, create }) => {
  describe(`catalog S3 keys contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
      for (const u of ['alice', 'bob']) await c.createUser({ name: u, kind: 'user', passwordHash: null, createdAt: t0 });
    });
    afterEach(async () => {
      await c.close();
    });

    it('stores keys, finds them by id, lists them per user oldest first and refuses a taken id', async () => {
      await c.createS3Key({ id: 'AKIAALICE2', user: 'alice', secret: 'sealed-2', label: null, createdAt: t1 });
      await c.createS3Key({ id: 'AKIAALICE1', user: 'alice', secret: 'sealed-1', label: 'laptop', createdAt: t0 });
      await c.createS3Key({ id: 'AKIABOB001', user: 'bob', secret: 'sealed-b', label: null, createdAt: t0 });
      assert.deepEqual(await c.getS3Key('AKIAALICE1'), { id: 'AKIAALICE1', user: 'alice', secret: 'sealed-1', label: 'laptop', createdAt: t0 });
      assert.equal(await c.getS3Key('AKIANOPE00'), null);
      assert.deepEqual((await c.listS3Keys('alice')).map((k) => k.id), ['AKIAALICE1', 'AKIAALICE2']);
      assert.deepEqual((await c.listS3Keys('bob')).map((k) => k.secret), ['sealed-b']);
      assert.deepEqual(await c.listS3Keys('carol'), []);
      await rejectsWith(c.createS3Key({ id: 'AKIABOB001', user: 'alice', secret: 'x', label: null, createdAt: t1 }), 'CONFLICT');
      assert.equal((await c.getS3Key('AKIABOB001'))?.user, 'bob', 'the refused key changed nothing');
    });

    it('revokes a key only for its owner, at once for every lookup', async () => {
      await c.createS3Key({ id: 'AKIAALICE1', user: 'alice', secret: 's', label: null, createdAt: t0 });
      assert.equal(await c.deleteS3Key('bob', 'AKIAALICE1'), false, 'another user cannot revoke it');
      assert.ok(await c.getS3Key('AKIAALICE1'));
      assert.equal(await c.deleteS3Key('alice', 'AKIAALICE1'), true);
      assert.equal(await c.getS3Key('AKIAALICE1'), null);
      assert.deepEqual(await c.listS3Keys('alice'), []);
      assert.equal(await c.deleteS3Key('alice', 'AKIAALICE1'), false, 'idempotent');
    });

    it('records the entity tag a commit gives, replaces it on overwrite and clears it when none is given', async () => {
      await c.createCollection({ path: parsePath('/z'), owner: 'alice', now: t0 });
      const path = parsePath('/z/f');
      const first = await c.commitObject({ path, owner: 'alice', size: 3, checksum: 'sha2:a', blob: 'blob-etag-1', now: t0, overwrite: false, etag: '900150983cd24fb0d6963f7d28e17f72' });
      assert.equal(first.object.etag, '900150983cd24fb0d6963f7d28e17f72');
      const read = await c.getEntity(path);
      assert.equal(read?.kind === 'dataobject' ? read.etag : 'not an object', '900150983cd24fb0d6963f7d28e17f72');
      const [listed] = await c.listChildrenAfter(parsePath('/z'), null, 10);
      assert.equal(listed?.kind === 'dataobject' ? listed.etag : null, '900150983cd24fb0d6963f7d28e17f72', 'listings carry it too');
      await c.commitObject({ path, owner: 'alice', size: 4, checksum: 'sha2:b', blob: 'blob-etag-2', now: t1, overwrite: true, etag: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-3' });
      const second = await c.getEntity(path);
      assert.equal(second?.kind === 'dataobject' ? second.etag : null, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-3');
      await c.commitObject({ path, owner: 'alice', size: 5, checksum: 'sha2:c', blob: 'blob-etag-3', now: t1, overwrite: true });
      const third = await c.getEntity(path);
      assert.equal(third?.kind, 'dataobject');
      assert.equal(third?.kind === 'dataobject' ? third.etag : 'x', undefined, 'an overwrite without a tag leaves none (the old one would be a lie)');
    });
  });
};
