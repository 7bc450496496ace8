/**
 * The resumable-upload contract: open uploads with their offset and state, leases that fence
 * every write, completion atomic with the object's commit, quotas and expiry, as every catalog
 * driver must keep them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { UPLOAD_PART } from '../../src/core/catalog.ts';
import type { Catalog, UploadInput } from '../../src/core/ports.ts';
import type { Path } from '../../src/core/path.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

function input(id: string, extra: Partial<UploadInput> = {}): UploadInput {
  return {
    id, owner: 'alice', path: `/z/home/alice/${id}.bin` as Path, overwrite: false, length: 100, metadata: 'filename ZGF0YQ==',
    blob: `blob-${id}`, state: '{"n":0}', createdAt: t0, expiresAt: at(3600), ...extra,
  };
}

export const uploadsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog uploads contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
      for (const p of ['/z', '/z/home', '/z/home/alice'] as Path[]) await c.createCollection({ path: p, owner: 'alice', now: t0 });
    });
    afterEach(async () => {
      await c.close();
    });

    it('creates an open upload at offset 0, refuses a taken id, and lists and counts the open ones by owner', async () => {
      await c.createUpload(input('up000001'));
      await c.createUpload(input('up000002', { createdAt: at(1), expiresAt: at(100), length: null }));
      await c.createUpload(input('up000003', { owner: 'bob' }));
      await rejectsWith(c.createUpload(input('up000001', { blob: 'other-blob' })), 'CONFLICT');
      const u = await c.getUpload('up000001');
      assert.equal(u?.offset, 0);
      assert.equal(u?.status, 'open');
      assert.equal(u?.length, 100);
      assert.equal(u?.metadata, 'filename ZGF0YQ==');
      assert.equal(u?.state, '{"n":0}');
      assert.equal(u?.overwrite, false);
      assert.deepEqual(u?.jobIds, []);
      assert.equal((await c.getUpload('up000002'))?.length, null);
      assert.equal(await c.getUpload('missing1'), null);
      assert.deepEqual((await c.listUploads('alice')).map((x) => x.id), ['up000001', 'up000002']);
      assert.deepEqual(await c.countOpenUploads('alice', at(0)), { count: 2, firstExpiry: at(100) });
      assert.deepEqual(await c.countOpenUploads('alice', at(101)), { count: 1, firstExpiry: at(3600) }, 'expired uploads do not count');
      assert.deepEqual(await c.countOpenUploads('carol', at(0)), { count: 0, firstExpiry: null });
      assert.deepEqual(await c.countOpenUploads(null, at(0)), { count: 3, firstExpiry: at(100) }, 'every owner together');
      assert.deepEqual(await c.countOpenUploads(null, at(101)), { count: 2, firstExpiry: at(3600) });
      assert.deepEqual((await c.stagedBlobs()).sort(), ['blob-up000001', 'blob-up000002', 'blob-up000003']);
      await c.createUpload(input('up000001.1', { metadata: UPLOAD_PART, blob: 'blob-part-1' }));
      await c.createUpload(input('up000001.2', { metadata: UPLOAD_PART, blob: 'blob-part-2' }));
      assert.deepEqual(await c.countOpenUploads('alice', at(0)), { count: 2, firstExpiry: at(100) }, 'the parts of an upload do not count');
    });

    it('gives the lease to one holder at a time until it ends or is released', async () => {
      await c.createUpload(input('up000010'));
      assert.equal(await c.claimUpload('up000010', 'h1', at(0), at(10)), true);
      assert.equal(await c.claimUpload('up000010', 'h2', at(5), at(15)), false, 'held');
      assert.equal(await c.claimUpload('up000010', 'h1', at(5), at(15)), true, 'the holder may claim again');
      assert.equal(await c.renewUpload('up000010', 'h1', at(20)), true);
      assert.equal(await c.claimUpload('up000010', 'h2', at(19), at(30)), false, 'renewed');
      assert.equal(await c.claimUpload('up000010', 'h2', at(21), at(30)), true, 'lapsed');
      assert.equal(await c.renewUpload('up000010', 'h1', at(40)), false, 'lost');
      await c.releaseUpload('up000010', 'h1');
      assert.equal((await c.getUpload('up000010'))?.leaseHolder, 'h2', 'a former holder cannot release');
      await c.releaseUpload('up000010', 'h2');
      assert.equal(await c.claimUpload('up000010', 'h3', at(22), at(30)), true);
      assert.equal(await c.claimUpload('missing1', 'h3', at(22), at(30)), false);
    });

    it('ends every lease at once, whoever holds it, for a start that owns the catalog', async () => {
      await c.createUpload(input('up000011', { lease: { holder: 'h1', until: at(60) } }));
      await c.createUpload(input('up000012', { lease: { holder: 'h2', until: at(60) } }));
      await c.createUpload(input('up000013'));
      assert.equal(await c.releaseUploadLeases(), 2);
      for (const id of ['up000011', 'up000012']) {
        assert.equal((await c.getUpload(id))?.leaseHolder, null, id);
        assert.equal(await c.claimUpload(id, 'h3', at(1), at(30)), true, `${id} is free at once`);
      }
      assert.equal((await c.getUpload('up000011'))?.offset, 0, 'nothing else changes');
      assert.equal(await c.releaseUploadLeases(), 2);
      assert.equal(await c.releaseUploadLeases(), 0);
    });

    it('records checkpoints only for the lease holder, never lowering the offset', async () => {
      await c.createUpload(input('up000020', { lease: { holder: 'h1', until: at(10) } }));
      const cp = (holder: string, offset: number) => c.checkpointUpload('up000020', holder, { offset, state: `{"o":${offset}}`, now: at(1), expiresAt: at(7200), leaseUntil: at(20) });
      assert.equal(await cp('h1', 40), true);
      assert.equal(await cp('h2', 60), false, 'not the holder');
      assert.equal(await cp('h1', 30), false, 'the offset never goes down');
      const u = (await c.getUpload('up000020'))!;
      assert.equal(u.offset, 40);
      assert.equal(u.state, '{"o":40}');
      assert.deepEqual(u.expiresAt, at(7200));
      assert.deepEqual(u.leaseUntil, at(20));
      assert.equal(await c.claimUpload('up000020', 'h2', at(21), at(30)), true);
      assert.equal(await cp('h1', 50), false, 'a holder that lost its lease records nothing');
      assert.equal((await c.getUpload('up000020'))!.offset, 40);
    });

    it('sets a deferred length once, for the holder, never below the offset', async () => {
      await c.createUpload(input('up000030', { length: null, lease: { holder: 'h1', until: at(10) } }));
      await c.checkpointUpload('up000030', 'h1', { offset: 10, state: '{}', now: at(1), expiresAt: at(99), leaseUntil: at(10) });
      assert.equal(await c.setUploadLength('up000030', 'h2', 50), false);
      assert.equal(await c.setUploadLength('up000030', 'h1', 5), false);
      assert.equal(await c.setUploadLength('up000030', 'h1', 50), true);
      assert.equal(await c.setUploadLength('up000030', 'h1', 60), false, 'already set');
      assert.equal((await c.getUpload('up000030'))?.length, 50);
    });

    it('completes an upload in the commit of its object, only while the committer holds its lease', async () => {
      await c.createUpload(input('up000040', { lease: { holder: 'h1', until: at(10) } }));
      const commit = (holder: string, path: string) => c.commitObject({
        path: path as Path, owner: 'alice', size: 100, checksum: 'sha2:x', blob: 'blob-up000040', now: at(2), overwrite: false,
        jobs: () => [{ kind: 'test', payload: '{}' }], upload: { id: 'up000040', holder, expiresAt: at(500) },
      });
      await rejectsWith(commit('h2', '/z/home/alice/a.bin'), 'CONFLICT');
      assert.equal(await c.getEntity('/z/home/alice/a.bin' as Path), null, 'nothing committed');
      const { object, jobIds } = await commit('h1', '/z/home/alice/a.bin');
      const u = (await c.getUpload('up000040'))!;
      assert.equal(u.status, 'complete');
      assert.equal(u.entityId, object.id);
      assert.deepEqual(u.jobIds, jobIds);
      assert.equal(jobIds.length, 1);
      assert.equal(u.leaseHolder, null);
      assert.deepEqual(u.expiresAt, at(500));
      assert.deepEqual(await c.listUploads('alice'), [], 'a complete upload is not open');
      assert.deepEqual(await c.stagedBlobs(), []);
      assert.equal(await c.claimUpload('up000040', 'h1', at(3), at(10)), false, 'a complete upload takes no lease');
      await rejectsWith(commit('h1', '/z/home/alice/b.bin'), 'CONFLICT');
      assert.equal(await c.getEntity('/z/home/alice/b.bin' as Path), null);
    });

    it('lists expired uploads whose lease has ended, and deletes them', async () => {
      await c.createUpload(input('up000050', { expiresAt: at(10) }));
      await c.createUpload(input('up000051', { expiresAt: at(20), lease: { holder: 'h', until: at(100) } }));
      await c.createUpload(input('up000052', { expiresAt: at(1000) }));
      assert.deepEqual((await c.expiredUploads(at(50), 10)).map((u) => u.id), ['up000050'], 'a leased upload is being written');
      assert.deepEqual((await c.expiredUploads(at(200), 10)).map((u) => u.id), ['up000050', 'up000051']);
      assert.deepEqual((await c.expiredUploads(at(200), 1)).map((u) => u.id), ['up000050']);
      assert.equal(await c.deleteUpload('up000050'), true);
      assert.equal(await c.deleteUpload('up000050'), false);
      assert.equal(await c.getUpload('up000050'), null);
    });
  });
};
