/**
 * The publications contract: read access for the anonymous principal granted and removed
 * together with a durable record of who did it and when, and with the jobs the change causes,
 * as every catalog driver must keep them. Asserted by error codes rather than messages.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { parsePath } from '../../src/core/path.ts';
import type { BackendEvent } from '../../src/core/types.ts';
import { type ContractSuite, rejectsWith } from './catalog-contract-support.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');
const t2 = new Date('2026-01-03T00:00:00Z');
const ANON = 'anonymous';

export const publicationsContract: ContractSuite = ({ name, create }) => {
  describe(`catalog publications contract: ${name}`, () => {
    let c: Catalog;
    beforeEach(async () => {
      c = await create();
      await c.createCollection({ path: p('/z'), owner: 'alice', now: t0 });
      await c.createCollection({ path: p('/z/c'), owner: 'alice', now: t0 });
      await c.trackBlob('blob00000001', t0);
      await c.commitObject({ path: p('/z/c/f'), owner: 'alice', size: 3, checksum: 'sha2:x', blob: 'blob00000001', now: t0, overwrite: false });
    });
    afterEach(async () => {
      await c.close();
    });

    it('publishing grants read to the principal, on the entity and what lies below it', async () => {
      const seen: BackendEvent[] = [];
      const out = await c.publish({ path: p('/z/c'), principal: ANON, actor: 'alice', now: t1, jobs: (e) => { seen.push(e); return [{ kind: 'k', payload: e.type }]; } });
      assert.equal(out.changed, true);
      assert.equal(out.jobIds.length, 1);
      const collection = await c.getEntity(p('/z/c'));
      assert.deepEqual(seen, [{ type: 'entity.published', entityId: collection!.id, path: '/z/c' }]);
      assert.equal((await c.getJob(out.jobIds[0]!))?.payload, 'entity.published');
      assert.deepEqual((await c.listAccess(p('/z/c'))).find((e) => e.principal === ANON), { principal: ANON, level: 'read' });
      assert.equal(await c.accessLevel(p('/z/c/f'), [ANON]), 'read');
      assert.equal(await c.accessLevel(p('/z'), [ANON]), null);
    });

    it('publishing twice changes nothing the second time: no event, no job', async () => {
      await c.publish({ path: p('/z/c/f'), principal: ANON, actor: 'alice', now: t1 });
      const again = await c.publish({ path: p('/z/c/f'), principal: ANON, actor: 'bob', now: t2, jobs: () => [{ kind: 'k', payload: 'x' }] });
      assert.deepEqual(again, { changed: false, jobIds: [] });
      const f = await c.getEntity(p('/z/c/f'));
      const events = await c.publicationEvents(f!.id, 10);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0], { entityId: f!.id, path: '/z/c/f', action: 'published', actor: 'alice', at: t1 });
    });

    it('unpublishing removes the entry on the entity itself and records who and when; newest event first', async () => {
      await c.publish({ path: p('/z/c'), principal: ANON, actor: 'alice', now: t1 });
      const seen: BackendEvent[] = [];
      const out = await c.unpublish({ path: p('/z/c'), principal: ANON, actor: 'bob', now: t2, jobs: (e) => { seen.push(e); return []; } });
      assert.deepEqual(out, { changed: true, jobIds: [] });
      assert.equal(seen[0]?.type, 'entity.unpublished');
      assert.equal(await c.accessLevel(p('/z/c/f'), [ANON]), null);
      const id = (await c.getEntity(p('/z/c')))!.id;
      assert.deepEqual((await c.publicationEvents(id, 10)).map((e) => [e.action, e.actor, e.at.getTime()]), [
        ['unpublished', 'bob', t2.getTime()], ['published', 'alice', t1.getTime()],
      ]);
      assert.equal((await c.publicationEvents(id, 1)).length, 1);
      assert.deepEqual(await c.unpublish({ path: p('/z/c'), principal: ANON, actor: 'bob', now: t2 }), { changed: false, jobIds: [] });
    });

    it('events follow the entity through a rename (by its stable id), and other principals are untouched', async () => {
      await c.setAccess(p('/z/c'), 'bob', 'write');
      await c.publish({ path: p('/z/c'), principal: ANON, actor: 'alice', now: t1 });
      await c.rename(p('/z/c'), p('/z/d'), t2);
      const d = await c.getEntity(p('/z/d'));
      assert.equal((await c.publicationEvents(d!.id, 10))[0]?.path, '/z/c', 'the path at the time');
      assert.equal(await c.accessLevel(p('/z/d/f'), [ANON]), 'read');
      await c.unpublish({ path: p('/z/d'), principal: ANON, actor: 'alice', now: t2 });
      assert.deepEqual(await c.listAccess(p('/z/d')), [{ principal: 'alice', level: 'own' }, { principal: 'bob', level: 'write' }]);
    });

    it('refuses a path where nothing is, and knows no events of an unknown entity', async () => {
      await rejectsWith(c.publish({ path: p('/z/none'), principal: ANON, actor: 'alice', now: t1 }), 'NOT_FOUND');
      await rejectsWith(c.unpublish({ path: p('/z/none'), principal: ANON, actor: 'alice', now: t1 }), 'NOT_FOUND');
      assert.deepEqual(await c.publicationEvents('00000000-0000-4000-8000-000000000000', 10), []);
    });
  });
};
