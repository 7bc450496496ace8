/**
 * The catalog contract: the behaviour every `Catalog` driver must show, asserted by error
 * codes rather than messages. Each driver's test file calls `catalogContract` with a factory
 * that returns a fresh, empty catalog.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import type { ErrorCode } from '../../src/core/errors.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (err: { code?: string }) => {
    assert.equal(err.code, code);
    return true;
  });
}

export function catalogContract(name: string, create: () => Promise<Catalog>): void {
  describe(`catalog contract: ${name}`, () => {
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
      assert.deepEqual(await c.trackedBlobs(t1), [], 'a committed blob is no longer tracked');
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
      assert.deepEqual(await c.trackedBlobs(new Date(t1.getTime() + 1)), ['blob00000001'], 'the replaced blob is tracked for deletion');
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

    it('keeps users, groups and memberships', async () => {
      await c.createUser({ name: 'alice', kind: 'user', passwordHash: 'h', createdAt: t0 });
      await c.createUser({ name: 'team', kind: 'group', passwordHash: null, createdAt: t0 });
      await rejectsWith(c.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: t0 }), 'CONFLICT');
      assert.equal((await c.getUser('alice'))?.passwordHash, 'h');
      assert.equal(await c.getUser('nobody'), null);
      await c.setPasswordHash('alice', 'h2');
      assert.equal((await c.getUser('alice'))?.passwordHash, 'h2');
      await rejectsWith(c.setPasswordHash('nobody', 'x'), 'NOT_FOUND');
      await c.addToGroup('team', 'alice');
      await c.addToGroup('team', 'alice');
      assert.deepEqual(await c.groupsOf('alice'), ['team']);
      await rejectsWith(c.addToGroup('alice', 'team'), 'NOT_FOUND');
      await rejectsWith(c.addToGroup('team', 'nobody'), 'NOT_FOUND');
      assert.deepEqual((await c.listUsers()).map((u) => u.name), ['alice', 'team']);
    });

    it('finds sessions by token hash until they expire', async () => {
      await c.createUser({ name: 'alice', kind: 'user', passwordHash: null, createdAt: t0 });
      await c.putSession({ tokenHash: 'h1', user: 'alice', createdAt: t0, expiresAt: t1, credential: 'c1' });
      assert.equal((await c.getSession('h1', t0))?.credential, 'c1');
      assert.equal(await c.getSession('h1', t1), null, 'expired at expiresAt');
      assert.equal(await c.updateSessionCredential('h1', 'c2'), true);
      assert.equal((await c.getSession('h1', t0))?.credential, 'c2');
      assert.equal(await c.updateSessionCredential('nope', 'c2'), false);
      assert.equal(await c.deleteExpiredSessions(new Date(t1.getTime() + 1)), 1);
      assert.equal(await c.getSession('h1', t0), null);
      await c.putSession({ tokenHash: 'h2', user: 'alice', createdAt: t0, expiresAt: t1, credential: null });
      await c.deleteSession('h2');
      assert.equal(await c.getSession('h2', t0), null);
    });

    it('tracks blobs of unfinished writes by age', async () => {
      await c.trackBlob('blob00000001', t0);
      await c.trackBlob('blob00000002', t1);
      assert.deepEqual(await c.trackedBlobs(t1), ['blob00000001']);
      await c.untrackBlob('blob00000001');
      assert.deepEqual(await c.trackedBlobs(new Date(t1.getTime() + 1)), ['blob00000002']);
    });

    it('stores names with quotes, unicode and pattern characters verbatim', async () => {
      for (const name of ["it's", 'naïve résumé', '100%_done', 'tab-less "quoted"', '日本語']) {
        await c.createCollection({ path: p(`/${name}`), owner: 'alice', now: t0 });
        assert.equal((await c.getEntity(p(`/${name}`)))?.name, name);
      }
    });
  });
}
