/**
 * The fixity contract: the stored objects the checks read (live ones, and trashed ones whose
 * bytes are kept), their claims across checkers, what a check records (a mark of damage that
 * downloads see, cleared by a whole read or an overwrite), and which keys the catalog knows.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import type { DataObject } from '../../src/core/types.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

export const fixityContract: ContractSuite = ({ name, create }) => {
  describe(`catalog fixity contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
    });
    afterEach(async () => {
      await c.close();
    });

    const obj = (path: string, blob: string, now = t0, overwrite = false) =>
      c.commitObject({ path: p(path), owner: 'alice', size: 3, checksum: `sha2:${blob}`, blob, now, overwrite });

    it('lists every stored object in blob order, page by page, trashed ones while their bytes are kept', async () => {
      await obj('/z/b', 'blob-fix-b', at(1));
      await obj('/z/a', 'blob-fix-a', at(2));
      await obj('/z/c', 'blob-fix-c', at(3));
      await c.createCollection({ path: p('/z/d'), owner: 'alice', now: t0 });
      await obj('/z/d/e', 'blob-fix-e', at(4));
      const first = await c.storedObjects(null, 2);
      assert.deepEqual(first.map((o) => o.blob), ['blob-fix-a', 'blob-fix-b']);
      assert.deepEqual(first.map((o) => [o.path, o.size, o.checksum]), [['/z/a', 3, 'sha2:blob-fix-a'], ['/z/b', 3, 'sha2:blob-fix-b']]);
      assert.equal(first[0]!.verifiedAt?.getTime(), at(2).getTime(), 'the commit counts as a check');
      assert.equal(first[0]!.damaged, null);
      assert.deepEqual((await c.storedObjects('blob-fix-b', 10)).map((o) => o.blob), ['blob-fix-c', 'blob-fix-e']);
      const trashed = await c.trash({ path: p('/z/d'), actor: 'alice', reason: null, now: at(5) });
      assert.deepEqual((await c.storedObjects(null, 10)).map((o) => o.blob), ['blob-fix-a', 'blob-fix-b', 'blob-fix-c', 'blob-fix-e'], 'a trashed object keeps its bytes');
      await c.trash({ path: p('/z/c'), actor: 'alice', reason: null, now: at(5) });
      await c.removeTrashed({ ids: [trashed.id], limit: 10, state: 'purged', by: 'alice', reason: null, now: at(6) });
      assert.deepEqual((await c.storedObjects(null, 10)).map((o) => o.blob), ['blob-fix-a', 'blob-fix-b', 'blob-fix-c'], 'a purged object holds no bytes');
    });

    it('marks damage where downloads see it, counts it, and clears it on a whole read or an overwrite', async () => {
      await obj('/z/f', 'blob-fix-f');
      await obj('/z/g', 'blob-fix-g');
      const marked = await c.recordFixity({ blob: 'blob-fix-f', now: at(10), damage: 'checksum mismatch' });
      assert.equal(marked?.path, '/z/f');
      assert.deepEqual(marked?.damaged, { at: at(10), reason: 'checksum mismatch' });
      assert.equal(marked?.verifiedAt?.getTime(), at(10).getTime());
      assert.deepEqual((await c.getEntity(p('/z/f')) as DataObject).damaged, { at: at(10), reason: 'checksum mismatch' });
      assert.equal((await c.getEntity(p('/z/g')) as DataObject).damaged, undefined);
      const again = await c.recordFixity({ blob: 'blob-fix-f', now: at(20), damage: 'bytes missing' });
      assert.deepEqual(again?.damaged, { at: at(10), reason: 'bytes missing' }, 'damaged since the first finding');
      assert.equal(await c.countDamaged(), 1);
      const whole = await c.recordFixity({ blob: 'blob-fix-f', now: at(30), damage: null });
      assert.equal(whole?.damaged, null);
      assert.equal((await c.getEntity(p('/z/f')) as DataObject).damaged, undefined);
      assert.equal(await c.countDamaged(), 0);
      await c.recordFixity({ blob: 'blob-fix-g', now: at(40), damage: 'checksum mismatch' });
      assert.equal(await c.countDamaged(), 1);
      await c.trackBlob('blob-fix-g2', at(50));
      const { object } = await obj('/z/g', 'blob-fix-g2', at(50), true);
      assert.equal(object.damaged, undefined, 'new bytes clear the mark');
      assert.equal(await c.countDamaged(), 0);
      assert.equal(await c.recordFixity({ blob: 'blob-fix-g', now: at(60), damage: 'checksum mismatch' }), null, 'replaced bytes mark nothing');
      assert.equal((await c.getEntity(p('/z/g')) as DataObject).damaged, undefined);
    });

    it('gives each due object to one checker at a time, oldest check first, until its claim runs out', async () => {
      await obj('/z/old', 'blob-fix-old', at(0));
      await obj('/z/mid', 'blob-fix-mid', at(100));
      await obj('/z/new', 'blob-fix-new', at(1000));
      const claim = (holder: string, now: number, limit = 10) => c.claimFixity({ holder, now: at(now), dueBefore: at(now - 500), until: at(now + 60), limit });
      assert.deepEqual((await claim('n1', 700, 1)).map((o) => o.path), ['/z/old'], 'the oldest first');
      assert.deepEqual((await claim('n2', 700)).map((o) => o.path), ['/z/mid'], 'what n1 holds is not given to n2; what is not due is not given');
      assert.deepEqual((await claim('n3', 710)).map((o) => o.path), [], 'all held');
      assert.deepEqual((await claim('n3', 800)).map((o) => o.path).sort(), ['/z/mid', '/z/old'], 'claims that ran out are taken over');
      await c.recordFixity({ blob: 'blob-fix-old', now: at(810), damage: null });
      assert.deepEqual((await claim('n1', 820)).map((o) => o.path), [], 'checked is not due; n3 still holds /z/mid');
      assert.deepEqual((await claim('n1', 2000)).map((o) => o.path), ['/z/mid', '/z/old', '/z/new']);
    });

    it('knows the keys of objects, of tracked blobs and of resumable uploads, and no others', async () => {
      await obj('/z/f', 'blob-fix-k1');
      await c.trackBlob('blob-fix-k2', t0);
      await c.createUpload({
        id: 'upfix0001', owner: 'alice', path: p('/z/u'), overwrite: false, length: 10, metadata: '', blob: 'blob-fix-k3', state: '{}', createdAt: t0, expiresAt: at(3600),
      });
      const known = await c.knownBlobs(['blob-fix-k1', 'blob-fix-k2', 'blob-fix-k3', 'blob-fix-k4']);
      assert.deepEqual([...known].sort(), ['blob-fix-k1', 'blob-fix-k2', 'blob-fix-k3']);
      assert.deepEqual([...await c.knownBlobs([])], []);
    });
  });
};
