/**
 * The namespace contract: collections and data objects, listings, renames, access lists and
 * AVU metadata, and the jobs a change commits with it, as every catalog driver must show them.
 * Asserted by error codes rather than messages.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export const namespaceContract: ContractSuite = ({ name, create }) => {
  describe(`catalog namespace contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
    });
    afterEach(async () => {
      await c.close();
    });

    const obj = (path: string, blob: string, overwrite = false, now = t0) =>
      c.commitObject({ path: p(path), owner: 'alice', size: 3, checksum: `sha2:${blob}`, blob, now, overwrite });

    it('has a root collection', async () => {
      const root = await c.getEntity(p('/'));
      assert.equal(root?.kind, 'collection');
    });

    it('creates nested collections and refuses duplicates, missing parents and data-object parents', async () => {
      const z = await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      assert.equal(z.kind, 'collection');
      assert.equal(z.name, 'z');
      assert.equal(z.owner, 'alice');
      assert.equal(z.createdAt.getTime(), t0.getTime());
      await c.createCollection({ path: p('/z/a'), owner: 'alice', now: t0 });
      await rejectsWith(c.createCollection({ path: p('/z/a'), owner: 'alice', now: t0 }), 'CONFLICT');
      await rejectsWith(c.createCollection({ path: p('/z/missing/b'), owner: 'alice', now: t0 }), 'NOT_FOUND');
      await obj('/z/f', 'blob00000001');
      await rejectsWith(c.createCollection({ path: p('/z/f/b'), owner: 'alice', now: t0 }), 'NOT_A_COLLECTION');
      await rejectsWith(c.createCollection({ path: p('/z/f'), owner: 'alice', now: t0 }), 'CONFLICT');
    });

    it('commits data objects, refuses overwrites without the flag, and reports the replaced blob', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.trackBlob('blob00000001', t0);
      const first = await obj('/z/f', 'blob00000001');
      assert.equal(first.replacedBlob, null);
      assert.equal(first.object.kind, 'dataobject');
      assert.equal(first.object.size, 3);
      assert.equal(first.object.checksum, 'sha2:blob00000001');
      assert.equal(first.object.pid, null);
      assert.deepEqual((await c.trackedBlobs(t1)).map((b) => b.blob), [], 'a committed blob is no longer tracked');
      await rejectsWith(obj('/z/f', 'blob00000002'), 'CONFLICT');
      await c.setAccess(p('/z/f'), 'bob', 'read');
      await c.addMeta(p('/z/f'), { attribute: 'k', value: 'v', unit: '' });
      const second = await c.commitObject({ path: p('/z/f'), owner: 'bob', size: 5, checksum: 'sha2:x', blob: 'blob00000002', now: t1, overwrite: true });
      assert.equal(second.replacedBlob, 'blob00000001');
      assert.equal(second.object.blob, 'blob00000002');
      assert.equal(second.object.size, 5);
      assert.equal(second.object.owner, 'alice', 'overwriting keeps the owner');
      assert.equal(second.object.createdAt.getTime(), t0.getTime());
      assert.equal(second.object.modifiedAt.getTime(), t1.getTime());
      assert.deepEqual(await c.listMeta(p('/z/f')), [{ attribute: 'k', value: 'v', unit: '' }]);
      assert.equal(await c.accessLevel(p('/z/f'), ['bob']), 'read');
      assert.deepEqual((await c.trackedBlobs(new Date(t1.getTime() + 1))).map((b) => b.blob), ['blob00000001'], 'the replaced blob is tracked for deletion');
    });

    it('refuses a fenced commit whose blob is no longer tracked, committing nothing', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      const commit = (path: string, blob: string) => c.commitObject({
        path: p(path), owner: 'alice', size: 3, checksum: `sha2:${blob}`, blob, now: t0, overwrite: true, fenced: true,
      });
      await c.trackBlob('blob00000011', t0, 'node-a');
      assert.equal((await commit('/z/kept', 'blob00000011')).object.kind, 'dataobject', 'a tracked blob commits');
      await c.trackBlob('blob00000012', t0, 'node-a');
      await c.untrackBlob('blob00000012');
      await rejectsWith(commit('/z/swept', 'blob00000012'), 'UNAVAILABLE');
      assert.equal(await c.getEntity(p('/z/swept')), null, 'nothing became visible');
      await c.trackBlob('blob00000013', t0, 'node-a');
      await c.untrackBlob('blob00000013');
      await rejectsWith(commit('/z/kept', 'blob00000013'), 'UNAVAILABLE');
      const kept = await c.getEntity(p('/z/kept'));
      assert.equal(kept?.kind === 'dataobject' ? kept.blob : null, 'blob00000011', 'an overwrite is rolled back whole');
      assert.deepEqual((await c.trackedBlobs(t1)).map((b) => b.blob), [], 'the blob it would have replaced is not tracked for deletion');
    });

    it('refuses an object where a collection is, and under a missing or data-object parent', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await rejectsWith(obj('/z', 'blob00000001', true), 'CONFLICT');
      await rejectsWith(obj('/nope/f', 'blob00000002'), 'NOT_FOUND');
      await obj('/z/f', 'blob00000003');
      await rejectsWith(obj('/z/f/g', 'blob00000004'), 'NOT_A_COLLECTION');
    });

    it('lists only direct children, sorted by name', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/b'), owner: 'alice', now: t0 });
      await obj('/z/c', 'blob00000001');
      await obj('/z/a', 'blob00000002');
      await obj('/z/b/deep', 'blob00000003');
      assert.deepEqual((await c.listChildren(p('/z'))).map((e) => e.name), ['a', 'b', 'c']);
      assert.deepEqual(await c.listChildren(p('/z/missing')), []);
    });

    it('lists children a page at a time after a name, in byte order', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      // NOTE: byte order, not a locale's: 'B' < 'a' < 'b' < 'é' (0xC3 0xA9).
      for (const [i, name] of ['b', 'é', 'a', 'B', 'a b'].entries()) await obj(`/z/${name}`, `blob0000001${i}`);
      const names: string[][] = [];
      let after: string | null = null;
      for (;;) {
        const page: Awaited<ReturnType<typeof c.listChildrenAfter>> = await c.listChildrenAfter(p('/z'), after, 2);
        if (page.length === 0) break;
        names.push(page.map((e) => e.name));
        after = page.at(-1)!.name;
      }
      assert.deepEqual(names, [['B', 'a'], ['a b', 'b'], ['é']]);
      assert.deepEqual((await c.listChildrenAfter(p('/z'), 'a', 10)).map((e) => e.name), ['a b', 'b', 'é']);
      assert.deepEqual(await c.listChildrenAfter(p('/z'), 'é', 10), []);
      assert.deepEqual(await c.listChildrenAfter(p('/z/missing'), null, 10), []);
    });

    it('renames a collection with everything below it, keeping access lists and metadata', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/a_b'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/a_b/sub'), owner: 'alice', now: t0 });
      await obj('/z/a_b/sub/f', 'blob00000001');
      await c.createCollection({ path: p('/z/aXb'), owner: 'alice', now: t0 });
      await obj('/z/aXb/g', 'blob00000002');
      await c.setAccess(p('/z/a_b/sub/f'), 'bob', 'write');
      await c.addMeta(p('/z/a_b/sub/f'), { attribute: 'PID', value: '21.T/1', unit: '' });
      const moved = await c.rename(p('/z/a_b'), p('/z/new%name'), t1);
      assert.equal(moved.path, '/z/new%name');
      assert.equal(moved.name, 'new%name');
      assert.equal(await c.getEntity(p('/z/a_b')), null);
      assert.equal(await c.getEntity(p('/z/a_b/sub/f')), null);
      const f = await c.getEntity(p('/z/new%name/sub/f'));
      assert.equal(f?.kind, 'dataobject');
      assert.equal(f?.pid, '21.T/1');
      assert.equal(await c.accessLevel(p('/z/new%name/sub/f'), ['bob']), 'write');
      assert.deepEqual((await c.listChildren(p('/z/new%name/sub'))).map((e) => e.name), ['f']);
      assert.deepEqual((await c.listChildren(p('/z'))).map((e) => e.name), ['aXb', 'new%name']);
      assert.ok(await c.getEntity(p('/z/aXb/g')), 'a sibling whose name matches like a pattern is untouched');
    });

    it('refuses renames onto existing names, into themselves, and of missing entities', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/d'), owner: 'alice', now: t0 });
      await obj('/z/f', 'blob00000001');
      await rejectsWith(c.rename(p('/z/f'), p('/z/d'), t1), 'CONFLICT');
      await rejectsWith(c.rename(p('/z/d'), p('/z/d/inner'), t1), 'CONFLICT');
      await rejectsWith(c.rename(p('/z/none'), p('/z/x'), t1), 'NOT_FOUND');
      const renamed = await c.rename(p('/z/f'), p('/z/g'), t1);
      assert.equal(renamed.kind, 'dataobject');
      assert.equal(renamed.modifiedAt.getTime(), t1.getTime());
    });

    it('moves into another collection with everything below, and replaces a data object only when asked', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/src'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/src/sub'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/dst'), owner: 'alice', now: t0 });
      const f = (await obj('/z/src/sub/f', 'blob00000001')).object;
      await c.addMeta(p('/z/src/sub/f'), { attribute: 'PID', value: '21.T/1', unit: '' });
      const events: string[] = [];
      const jobs = (e: { type: string; path: string; from?: string }) => {
        events.push(`${e.type} ${e.from} -> ${e.path}`);
        return [];
      };
      const { entity, replacedBlob } = await c.move({ from: p('/z/src/sub'), to: p('/z/dst/sub'), now: t1, overwrite: false, jobs });
      assert.equal(entity.path, '/z/dst/sub');
      assert.equal(replacedBlob, null);
      assert.deepEqual(events, ['collection.renamed /z/src/sub -> /z/dst/sub']);
      assert.equal(await c.getEntity(p('/z/src/sub/f')), null);
      assert.equal((await c.getEntity(p('/z/dst/sub/f')))?.id, f.id);
      assert.equal((await c.getEntity(p('/z/dst/sub/f')))?.pid, '21.T/1');
      assert.deepEqual((await c.listChildren(p('/z/src'))).map((e) => e.name), []);
      assert.deepEqual((await c.listChildren(p('/z/dst/sub'))).map((e) => e.name), ['f']);

      // Onto an existing data object: refused, and with overwrite replaced, its blob tracked.
      await obj('/z/dst/g', 'blob00000002');
      await c.setAccess(p('/z/dst/g'), 'carol', 'read');
      await c.addMeta(p('/z/dst/g'), { attribute: 'old', value: '1', unit: '' });
      await rejectsWith(c.move({ from: p('/z/dst/sub/f'), to: p('/z/dst/g'), now: t1, overwrite: false }), 'CONFLICT');
      assert.equal((await c.getEntity(p('/z/dst/sub/f')))?.id, f.id, 'a refused move moves nothing');
      const replaced = await c.move({ from: p('/z/dst/sub/f'), to: p('/z/dst/g'), now: t1, overwrite: true });
      assert.equal(replaced.replacedBlob, 'blob00000002');
      assert.equal(replaced.entity.id, f.id);
      assert.equal((await c.getEntity(p('/z/dst/g')) as { blob: string }).blob, 'blob00000001');
      assert.deepEqual(await c.listMeta(p('/z/dst/g')), [{ attribute: 'PID', value: '21.T/1', unit: '' }], 'the replaced object\'s metadata went with it');
      assert.equal(await c.accessLevel(p('/z/dst/g'), ['carol']), null, 'and its access list');
      assert.deepEqual((await c.trackedBlobs(new Date(t1.getTime() + 1))).map((b) => b.blob), ['blob00000002'], 'the replaced blob is tracked for deletion');

      // Never a collection, never a collection over anything, never into itself or a missing parent.
      await obj('/z/h', 'blob00000003');
      await rejectsWith(c.move({ from: p('/z/h'), to: p('/z/dst/sub'), now: t1, overwrite: true }), 'CONFLICT');
      await rejectsWith(c.move({ from: p('/z/dst/sub'), to: p('/z/h'), now: t1, overwrite: true }), 'CONFLICT');
      await rejectsWith(c.move({ from: p('/z/dst'), to: p('/z/dst/sub/dst'), now: t1, overwrite: false }), 'CONFLICT');
      await rejectsWith(c.move({ from: p('/z/h'), to: p('/z/none/h'), now: t1, overwrite: false }), 'NOT_FOUND');
      assert.equal((await c.getEntity(p('/z/h')))?.kind, 'dataobject');
      assert.equal((await c.getEntity(p('/z/dst/sub')))?.kind, 'collection');
    });

    it('adds the metadata a commit carries in its transaction', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      const meta = [{ attribute: 'depth', value: '1200', unit: 'm' }, { attribute: 'site', value: 'A', unit: '' }];
      await c.commitObject({ path: p('/z/f'), owner: 'alice', size: 3, checksum: 'sha2:x', blob: 'blob00000001', now: t0, overwrite: false, meta });
      assert.deepEqual(await c.listMeta(p('/z/f')), meta);
      await c.createCollection({ path: p('/z/d'), owner: 'alice', now: t0 });
      await rejectsWith(c.commitObject({ path: p('/z/d'), owner: 'alice', size: 3, checksum: 'sha2:x', blob: 'blob00000002', now: t0, overwrite: true, meta }), 'CONFLICT');
      assert.deepEqual(await c.listMeta(p('/z/d')), [], 'a refused commit adds nothing');
    });

    it('replaces the named attributes of an overwritten object, and keeps the others', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      const type = (value: string) => ({ attribute: 'S3/Content-Type', value, unit: '' });
      const site = { attribute: 'site', value: 'A', unit: '' };
      await c.commitObject({ path: p('/z/f'), owner: 'alice', size: 3, checksum: 'sha2:x', blob: 'blob00000001', now: t0, overwrite: false, meta: [type('text/plain'), site] });
      await c.commitObject({ path: p('/z/f'), owner: 'alice', size: 3, checksum: 'sha2:y', blob: 'blob00000002', now: t0, overwrite: true, meta: [type('text/csv')], replaceMeta: ['S3/Content-Type', 'S3/Cache-Control'] });
      assert.deepEqual((await c.listMeta(p('/z/f'))).sort((a, b) => a.attribute.localeCompare(b.attribute)), [type('text/csv'), site]);
      await c.commitObject({ path: p('/z/f'), owner: 'alice', size: 3, checksum: 'sha2:z', blob: 'blob00000003', now: t0, overwrite: true, replaceMeta: ['S3/Content-Type'] });
      assert.deepEqual(await c.listMeta(p('/z/f')), [site], 'replaced by nothing');
    });

    it('computes access from the entity and the collections above it, over all principals', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/shared'), owner: 'alice', now: t0 });
      await obj('/z/shared/f', 'blob00000001');
      assert.equal(await c.accessLevel(p('/z/shared/f'), ['alice']), 'own');
      assert.equal(await c.accessLevel(p('/z/shared/f'), ['bob']), null);
      await c.setAccess(p('/z/shared'), 'team', 'read');
      assert.equal(await c.accessLevel(p('/z/shared/f'), ['bob', 'team']), 'read');
      assert.equal(await c.accessLevel(p('/z/shared/not-yet'), ['team']), 'read', 'covers paths that do not exist yet');
      await c.setAccess(p('/z/shared/f'), 'bob', 'write');
      assert.equal(await c.accessLevel(p('/z/shared/f'), ['bob', 'team']), 'write');
      assert.deepEqual(await c.listAccess(p('/z/shared/f')), [{ principal: 'alice', level: 'own' }, { principal: 'bob', level: 'write' }]);
      await c.setAccess(p('/z/shared/f'), 'bob', null);
      assert.equal(await c.accessLevel(p('/z/shared/f'), ['bob']), null);
      await rejectsWith(c.setAccess(p('/z/none'), 'bob', 'read'), 'NOT_FOUND');
      assert.equal(await c.accessLevel(p('/z'), []), null);
    });

    it('looks up, as one read, the account by name or subject, its groups, its level on a path and what is there', async () => {
      await c.createUser({ name: 'bob', kind: 'user', passwordHash: null, createdAt: t0 });
      await c.createUser({ name: 'team', kind: 'group', passwordHash: null, createdAt: t0 });
      await c.createUser({ name: 'crew', kind: 'group', passwordHash: null, createdAt: t0 });
      await c.addToGroup('team', 'bob');
      await c.addToGroup('crew', 'bob');
      await c.mapSubject('/O=Grid/CN=bob', 'bob');
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/shared'), owner: 'alice', now: t0 });
      const f = await obj('/z/shared/f', 'blob00000001');
      const also = ['public'];
      const byName = await c.lookup({ path: p('/z/shared/f'), user: 'bob', also, parent: true });
      assert.equal(byName.user?.name, 'bob');
      assert.equal(byName.user?.kind, 'user');
      assert.equal(byName.user?.disabled, false);
      assert.deepEqual(byName.groups, ['crew', 'team']);
      assert.equal(byName.level, null);
      assert.deepEqual(byName.entity, f.object);
      assert.equal(byName.parentKind, 'collection');
      await c.setAccess(p('/z/shared'), 'team', 'read');
      assert.equal((await c.lookup({ path: p('/z/shared/f'), user: 'bob', also })).level, 'read', 'through a group, from a collection above');
      await c.setAccess(p('/z/shared/f'), 'public', 'write');
      assert.equal((await c.lookup({ path: p('/z/shared/f'), user: 'bob', also })).level, 'write', 'through a principal every user holds');
      assert.equal((await c.lookup({ path: p('/z/shared/f'), user: 'bob', also: [] })).level, 'read');
      const bySubject = await c.lookup({ path: p('/z/shared/new'), subject: '/O=Grid/CN=bob', also, parent: true });
      assert.equal(bySubject.user?.name, 'bob');
      assert.equal(bySubject.level, 'read', 'a path not there yet has the access of the collection above');
      assert.equal(bySubject.entity, null);
      assert.equal(bySubject.parentKind, 'collection');
      assert.equal((await c.lookup({ path: p('/z/shared/f/x'), user: 'bob', also, parent: true })).parentKind, 'dataobject');
      assert.equal((await c.lookup({ path: p('/z/none/x'), user: 'bob', also, parent: true })).parentKind, null);
      await c.setDisabled('bob', true);
      assert.equal((await c.lookup({ path: p('/z/shared/f'), user: 'bob', also })).user?.disabled, true);
      const nobody = await c.lookup({ path: p('/z/shared/f'), subject: '/O=Grid/CN=nobody', also, parent: true });
      assert.deepEqual({ ...nobody, entity: nobody.entity?.path }, { user: null, groups: [], level: null, entity: '/z/shared/f', parentKind: 'collection' });
      assert.equal((await c.lookup({ path: p('/z'), user: 'carol', also })).user, null);
    });

    it('lists the entities principals hold entries on, in path order, outside one subtree, from a path', async () => {
      for (const path of ['/z', '/z/home', '/z/home/bob', '/z/home/bob/mine', '/z/home/bobby', '/z/p', '/z/p/q', '/z/p q', '/z/p0', '/z/r']) {
        await c.createCollection({ path: p(path), owner: 'alice', now: t0 });
      }
      await obj('/z/p/q/f', 'blob00000001');
      for (const path of ['/z/home/bob', '/z/home/bob/mine', '/z/home/bobby', '/z/p', '/z/p/q/f', '/z/p q', '/z/p0']) await c.setAccess(p(path), 'bob', 'read');
      await c.setAccess(p('/z/p/q'), 'team', 'write');
      await c.setAccess(p('/z/r'), 'public', 'read');
      const held = async (principals: string[], from: { path: string; inclusive: boolean } | null = null, limit = 100) =>
        (await c.listEntitiesHeldBy({ principals, except: p('/z/home/bob'), from, limit })).map((e) => e.path);
      assert.deepEqual(await held(['bob']), ['/z/home/bobby', '/z/p', '/z/p q', '/z/p/q/f', '/z/p0'], 'byte order; the excluded subtree and its root left out, not its look-alike sibling');
      assert.deepEqual(await held(['bob', 'team']), ['/z/home/bobby', '/z/p', '/z/p q', '/z/p/q', '/z/p/q/f', '/z/p0'], 'each entity once, whichever principals hold it');
      assert.deepEqual(await held(['bob'], null, 2), ['/z/home/bobby', '/z/p']);
      assert.deepEqual(await held(['bob'], { path: '/z/p', inclusive: false }), ['/z/p q', '/z/p/q/f', '/z/p0']);
      assert.deepEqual(await held(['bob'], { path: '/z/p0', inclusive: true }), ['/z/p0']);
      assert.deepEqual(await held(['bob'], { path: '/z/p/', inclusive: true }), ['/z/p/q/f', '/z/p0']);
      assert.deepEqual(await held(['team']), ['/z/p/q'], 'only entries of its own, not inherited ones');
      assert.deepEqual(await held(['public']), ['/z/r']);
      assert.deepEqual(await held(['alice'], null, 3), ['/z', '/z/home', '/z/home/bobby'], 'the creator\'s own entries count');
      assert.deepEqual(await held([]), []);
      assert.deepEqual(await held(['nobody']), []);
      const [first] = await c.listEntitiesHeldBy({ principals: ['bob'], except: p('/z/home/bob'), from: { path: '/z/p/q', inclusive: false }, limit: 1 });
      assert.equal(first?.kind, 'dataobject');
      assert.equal(first?.kind === 'dataobject' && first.checksum, 'sha2:blob00000001', 'whole entities');
    });

    it('keeps attribute-value-unit metadata and exposes the PID attribute', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await obj('/z/f', 'blob00000001');
      await c.addMeta(p('/z/f'), { attribute: 'b', value: '2', unit: 'm' });
      await c.addMeta(p('/z/f'), { attribute: 'a', value: '1', unit: '' });
      await c.addMeta(p('/z/f'), { attribute: 'a', value: '1', unit: '' });
      assert.deepEqual(await c.listMeta(p('/z/f')), [{ attribute: 'a', value: '1', unit: '' }, { attribute: 'b', value: '2', unit: 'm' }]);
      await c.addMeta(p('/z/f'), { attribute: 'PID', value: '21.T12345/abc', unit: '' });
      assert.equal((await c.getEntity(p('/z/f')))?.pid, '21.T12345/abc');
      assert.equal((await c.listChildren(p('/z')))[0]?.pid, '21.T12345/abc');
      await c.removeMeta(p('/z/f'), 'a');
      await c.removeMeta(p('/z/f'), 'b', 'other');
      assert.deepEqual((await c.listMeta(p('/z/f'))).map((m) => m.attribute), ['PID', 'b']);
      await rejectsWith(c.addMeta(p('/z/none'), { attribute: 'a', value: '1', unit: '' }), 'NOT_FOUND');
    });

    it('stores names with quotes, unicode and pattern characters verbatim', async () => {
      for (const name of ["it's", 'naïve résumé', '100%_done', 'tab-less "quoted"', '日本語']) {
        await c.createCollection({ path: p(`/${name}`), owner: 'alice', now: t0 });
        assert.equal((await c.getEntity(p(`/${name}`)))?.name, name);
      }
    });


    it('commits the jobs a change causes with the change, and none when it is refused', async () => {
      const events: string[] = [];
      const jobs = (e: { type: string; entityId: string }) => {
        events.push(e.type);
        return e.type === 'object.created' ? [{ kind: 'pid', payload: JSON.stringify(e) }, { kind: 'other', payload: '2' }] : [{ kind: 'pid', payload: JSON.stringify(e) }];
      };
      const z = await c.createCollection({ path: p('/z'), owner: 'alice', now: t0, jobs });
      const made = await c.commitObject({ path: p('/z/f'), owner: 'alice', size: 1, checksum: 'sha2:x', blob: 'blob-1', now: t0, overwrite: false, jobs });
      assert.equal(made.jobIds.length, 2);
      const listed = await c.listJobs(null, 10);
      assert.deepEqual(made.jobIds.map((id) => listed.find((j) => j.id === id)?.kind), ['pid', 'other'], 'every job of a change, in order');
      await rejectsWith(c.commitObject({ path: p('/z/f'), owner: 'alice', size: 1, checksum: 'sha2:y', blob: 'blob-2', now: t0, overwrite: false, jobs }), 'CONFLICT');
      await c.rename(p('/z'), p('/y'), t0, jobs);
      assert.deepEqual(events.filter((e) => e !== 'object.overwritten'), ['collection.created', 'object.created', 'collection.renamed']);
      assert.equal((await c.listJobs(null, 10)).length, 4, 'the refused commit enqueued nothing');
      assert.equal((await c.getEntityById(made.object.id))?.path, '/y/f', 'the id survives the rename');
      assert.equal((await c.getEntityById(z.id))?.path, '/y');
    });

    it('pages through descendants in path order, treating % and _ as plain characters', async () => {
      await c.createCollection({ path: p('/a_b'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/aXb'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/a_b/s'), owner: 'alice', now: t0 });
      for (const n of ['1', '2', '3']) await c.commitObject({ path: p(`/a_b/s/${n}`), owner: 'alice', size: 1, checksum: 'x', blob: `blob-${n}`, now: t0, overwrite: false });
      await c.commitObject({ path: p('/aXb/other'), owner: 'alice', size: 1, checksum: 'x', blob: 'blob-o', now: t0, overwrite: false });
      const first = await c.listDescendants(p('/a_b'), 2);
      assert.deepEqual(first.map((e) => e.path), ['/a_b/s', '/a_b/s/1']);
      const rest = await c.listDescendants(p('/a_b'), 10, first.at(-1)!.path);
      assert.deepEqual(rest.map((e) => e.path), ['/a_b/s/2', '/a_b/s/3']);
      assert.equal((await c.listDescendants(p('/'), 100)).length, 7);
    });

    it('trashes an entity with everything below it: its path is free, no read finds it, and access lists, metadata and PID stay', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/proj'), owner: 'alice', now: t0 });
      const inner = (await obj('/z/proj/f', 'blob-trash-1')).object;
      await obj('/z/projX', 'blob-trash-2');
      await c.setAccess(p('/z/proj'), 'bob', 'read');
      await c.addMeta(p('/z/proj/f'), { attribute: 'PID', value: '21.T1/f', unit: '' });
      const events: { type: string; path: string }[] = [];
      const jobs = (e: { type: string; path: string }) => {
        events.push({ type: e.type, path: e.path });
        return [{ kind: 'pid', payload: JSON.stringify(e) }];
      };
      const entry = await c.trash({ path: p('/z/proj'), actor: 'alice', reason: 'old', now: t1, jobs });
      assert.equal(entry.state, 'trashed');
      assert.equal(entry.path, '/z/proj');
      assert.equal(entry.kind, 'collection');
      assert.equal(entry.trashedBy, 'alice');
      assert.equal(entry.reason, 'old');
      assert.equal(entry.trashedAt.getTime(), t1.getTime());
      assert.equal(entry.removedAt, null);
      assert.deepEqual(events, [{ type: 'entity.trashed', path: '/z/proj' }]);
      assert.equal(await c.getEntity(p('/z/proj')), null);
      assert.equal(await c.getEntity(p('/z/proj/f')), null);
      assert.deepEqual((await c.listChildren(p('/z'))).map((e) => e.name), ['projX'], 'a sibling sharing the prefix stays');
      assert.deepEqual((await c.listDescendants(p('/'), 100)).map((e) => e.path), ['/z', '/z/projX']);
      assert.equal(await c.getEntityById(inner.id), null, 'not found by id either');
      assert.deepEqual(await c.listEntitiesHeldBy({ principals: ['bob'], except: p('/nowhere'), from: null, limit: 10 }), []);
      assert.equal(await c.accessLevel(p('/z/proj/f'), ['bob']), null);
      const withdrawn = await c.withdrawnEntity(inner.id);
      assert.equal(withdrawn?.entity.pid, '21.T1/f', 'metadata kept');
      assert.equal(withdrawn?.entity.name, 'f');
      assert.equal(withdrawn?.entry.id, entry.id, 'the entry of the collection above');
      assert.equal(await c.withdrawnEntity(entry.id).then((w) => w?.entity.name), 'proj');
      await rejectsWith(c.trash({ path: p('/z/proj'), actor: 'alice', reason: null, now: t1 }), 'NOT_FOUND');

      // The path is free; a restore never replaces what took it.
      await c.createCollection({ path: p('/z/proj'), owner: 'carol', now: t1 });
      await rejectsWith(c.restore({ id: entry.id, to: p('/z/proj'), now: t1 }), 'CONFLICT');
      await rejectsWith(c.restore({ id: entry.id, to: p('/z/missing/proj'), now: t1 }), 'NOT_FOUND');
      await rejectsWith(c.restore({ id: 'no-such-entry', to: p('/z/other'), now: t1 }), 'NOT_FOUND');
      const back = await c.restore({ id: entry.id, to: p('/z/proj-1'), now: t1, jobs });
      assert.equal(back.path, '/z/proj-1');
      assert.equal(back.name, 'proj-1');
      assert.equal(back.id, entry.id);
      assert.equal((await c.getEntity(p('/z/proj-1/f')))?.pid, '21.T1/f');
      assert.equal(await c.accessLevel(p('/z/proj-1/f'), ['bob']), 'read', 'the access list came back');
      assert.equal((await c.getEntityById(inner.id))?.path, '/z/proj-1/f');
      assert.equal(await c.getTrashEntry(entry.id), null, 'the entry is gone');
      assert.equal(await c.withdrawnEntity(inner.id), null);
      assert.deepEqual(events.at(-1), { type: 'entity.restored', path: '/z/proj-1' });
    });

    it('lists the trash newest first per user, and removes the bytes of entries once, tracking their blobs', async () => {
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await obj('/z/a', 'blob-a');
      await obj('/z/b', 'blob-b');
      await c.createCollection({ path: p('/z/c'), owner: 'alice', now: t0 });
      await obj('/z/c/d', 'blob-d');
      const later = new Date(t1.getTime() + 1000);
      const a = await c.trash({ path: p('/z/a'), actor: 'alice', reason: null, now: t0 });
      const b = await c.trash({ path: p('/z/b'), actor: 'bob', reason: null, now: t1 });
      const cc = await c.trash({ path: p('/z/c'), actor: 'alice', reason: null, now: later });
      assert.deepEqual((await c.listTrash({ user: 'alice', limit: 10 })).map((e) => e.id), [cc.id, b.id, a.id], 'trashed by alice or owned by her');
      assert.deepEqual((await c.listTrash({ user: 'bob', limit: 10 })).map((e) => e.id), [b.id]);
      assert.deepEqual((await c.listTrash({ user: 'alice', limit: 1, before: { at: later, id: cc.id } })).map((e) => e.id), [b.id]);

      const events: string[] = [];
      const jobs = (e: { type: string; path: string }) => {
        events.push(`${e.type} ${e.path}`);
        return [];
      };
      const expired = await c.removeTrashed({ trashedBefore: later, limit: 10, state: 'purged', by: 'lading', reason: 'retention', now: later, jobs });
      assert.deepEqual(expired.entries.map((e) => e.id).sort(), [a.id, b.id].sort());
      assert.deepEqual(expired.blobs.sort(), ['blob-a', 'blob-b']);
      assert.deepEqual(events.sort(), ['entity.purged /z/a', 'entity.purged /z/b']);
      assert.deepEqual((await c.trackedBlobs(new Date(later.getTime() + 1))).map((t) => t.blob).sort(), ['blob-a', 'blob-b'], 'tracked for the sweeper');
      const purged = (await c.getTrashEntry(a.id))!;
      assert.equal(purged.state, 'purged');
      assert.equal(purged.removedBy, 'lading');
      assert.equal(purged.removalReason, 'retention');
      assert.equal(purged.removedAt?.getTime(), later.getTime());
      assert.deepEqual((await c.listTrash({ user: 'alice', limit: 10 })).map((e) => e.id), [cc.id], 'removed entries leave the trash');
      const again = await c.removeTrashed({ ids: [a.id, cc.id], limit: 10, state: 'taken_down', by: 'root', reason: 'court order', now: later });
      assert.deepEqual(again.entries.map((e) => e.id), [cc.id], 'an entry is removed once');
      assert.deepEqual(again.blobs, ['blob-d'], 'the blobs below a collection');
      assert.equal((await c.getTrashEntry(cc.id))?.state, 'taken_down');
      assert.equal((await c.getTrashEntry(a.id))?.state, 'purged', 'not taken over by a later removal');
      await rejectsWith(c.restore({ id: a.id, to: p('/z/a'), now: later }), 'CONFLICT');
      assert.equal((await c.withdrawnEntity((await c.getTrashEntry(cc.id))!.id))?.entry.removalReason, 'court order');
    });
  });
};
