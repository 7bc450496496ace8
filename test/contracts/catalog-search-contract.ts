/**
 * The search contract: entities found below a collection by name (a substring or a glob,
 * ignoring the case of ASCII letters; `%`, `_` and `\` taken literally), by metadata, by kind and
 * inside given subtrees, in byte order of their paths and paged; names changed by a rename are
 * found by their new name; trashed entities are never found; an owner's data objects newest
 * first, paged. As every catalog driver must show them.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog } from '../../src/core/ports.ts';
import { type Path, parsePath } from '../../src/core/path.ts';
import type { EntitySearch } from '../../src/core/search.ts';
import type { ContractSuite } from './catalog-contract-support.ts';

const p = parsePath;
const t0 = new Date('2026-01-01T00:00:00Z');

export const searchContract: ContractSuite = ({ name, create }) => {
  describe(`catalog search contract: ${name}`, () => {
    let c: Catalog;
    let n = 0;
    const obj = (path: string, owner = 'alice', at = t0) => {
      const blob = `blob${String(n++).padStart(8, '0')}`;
      return c.commitObject({ path: p(path), owner, size: 3, checksum: `sha2:${blob}`, blob, now: at, overwrite: false });
    };
    const dir = (path: string) => c.createCollection({ path: p(path), owner: 'alice', now: t0 });
    const search = async (over: Partial<EntitySearch>) => (await c.searchEntities({
      under: p('/'), within: null, name: null, attribute: null, value: null, kind: null, after: null, limit: 100, ...over,
    })).map((e) => e.path);

    beforeEach(async () => {
      c = await create();
      for (const d of ['/z', '/z/a', '/z/a/deep', '/z/a-b', '/z/ab', '/z/other']) await dir(d);
      for (const f of ['/z/a/Report-2026.CSV', '/z/a/deep/report_final.txt', '/z/a/deep/notes.md', '/z/a-b/report.csv', '/z/ab/50%_done.txt', '/z/other/Reports']) await obj(f);
    });
    afterEach(async () => {
      await c.close();
    });

    it('finds by a substring of the name, ignoring ASCII case, strictly below the collection, in byte order', async () => {
      assert.deepEqual(await search({ name: { contains: 'report' } }), ['/z/a-b/report.csv', '/z/a/Report-2026.CSV', '/z/a/deep/report_final.txt', '/z/other/Reports']);
      assert.deepEqual(await search({ under: p('/z/a'), name: { contains: 'REPORT' } }), ['/z/a/Report-2026.CSV', '/z/a/deep/report_final.txt'], 'not /z/a-b, whose path shares the prefix');
      assert.deepEqual(await search({ under: p('/z/a'), name: { contains: 'deep' } }), ['/z/a/deep'], 'collections too; not the collection searched itself');
      assert.deepEqual(await search({ under: p('/z/a/deep'), name: { contains: 'deep' } }), []);
      assert.deepEqual(await search({ name: { contains: 'es' } }), ['/z/a/deep/notes.md'], 'a run shorter than three characters');
      assert.deepEqual(await search({ name: { contains: 'nothing-like-it' } }), []);
    });

    it('takes %, _ and \\ in a name literally, and a glob over the whole name', async () => {
      assert.deepEqual(await search({ name: { contains: '%_d' } }), ['/z/ab/50%_done.txt']);
      assert.deepEqual(await search({ name: { contains: 't_f' } }), ['/z/a/deep/report_final.txt'], '_ is not one character');
      assert.deepEqual(await search({ name: { contains: 'report_' } }), ['/z/a/deep/report_final.txt']);
      assert.deepEqual(await search({ name: { contains: 'a\\b' } }), []);
      assert.deepEqual(await search({ name: { glob: '*.csv' } }), ['/z/a-b/report.csv', '/z/a/Report-2026.CSV']);
      assert.deepEqual(await search({ name: { glob: 'report?csv' } }), ['/z/a-b/report.csv'], '? is one character, the glob spans the whole name');
      assert.deepEqual(await search({ name: { glob: 'report' } }), [], 'a glob without wildcards is the whole name');
      assert.deepEqual(await search({ name: { glob: 'reports' } }), ['/z/other/Reports']);
    });

    it('finds by attribute, and by attribute and value, exactly', async () => {
      await c.addMeta(p('/z/a/deep/notes.md'), { attribute: 'project', value: 'Alpha', unit: '' });
      await c.addMeta(p('/z/a/deep'), { attribute: 'project', value: 'beta', unit: '' });
      await c.addMeta(p('/z/other/Reports'), { attribute: 'Project', value: 'Alpha', unit: '' });
      assert.deepEqual(await search({ attribute: 'project' }), ['/z/a/deep', '/z/a/deep/notes.md']);
      assert.deepEqual(await search({ attribute: 'project', value: 'Alpha' }), ['/z/a/deep/notes.md']);
      assert.deepEqual(await search({ attribute: 'project', value: 'alpha' }), []);
      assert.deepEqual(await search({ attribute: 'project', value: 'beta', name: { contains: 'dee' }, kind: 'collection' }), ['/z/a/deep'], 'criteria combine');
      assert.deepEqual(await search({ attribute: 'project', kind: 'dataobject' }), ['/z/a/deep/notes.md']);
    });

    it('bounds a search to the subtrees given, and pages in byte order', async () => {
      const within: Path[] = [p('/z/a-b'), p('/z/a/deep')];
      assert.deepEqual(await search({ within }), ['/z/a-b', '/z/a-b/report.csv', '/z/a/deep', '/z/a/deep/notes.md', '/z/a/deep/report_final.txt']);
      assert.deepEqual(await search({ within: [] }), []);
      assert.deepEqual(await search({ within, limit: 2 }), ['/z/a-b', '/z/a-b/report.csv']);
      assert.deepEqual(await search({ within, limit: 2, after: '/z/a-b/report.csv' }), ['/z/a/deep', '/z/a/deep/notes.md']);
      assert.deepEqual(await search({ within, limit: 2, after: '/z/a/deep/notes.md' }), ['/z/a/deep/report_final.txt']);
      assert.deepEqual(await search({ kind: 'dataobject', under: p('/z/a') }), ['/z/a/Report-2026.CSV', '/z/a/deep/notes.md', '/z/a/deep/report_final.txt']);
    });

    it('finds a renamed entity by its new name only, and never a trashed one', async () => {
      await c.rename(p('/z/a/deep/notes.md'), p('/z/a/deep/minutes.md'), t0);
      assert.deepEqual(await search({ name: { contains: 'notes' } }), []);
      assert.deepEqual(await search({ name: { contains: 'minutes' } }), ['/z/a/deep/minutes.md']);
      await c.rename(p('/z/a'), p('/z/moved'), t0);
      assert.deepEqual(await search({ name: { contains: 'report_' } }), ['/z/moved/deep/report_final.txt'], 'what lies below a renamed collection moves with it');
      await c.trash({ path: p('/z/moved/deep'), actor: 'alice', reason: null, now: t0 });
      assert.deepEqual(await search({ name: { contains: 'report_' } }), []);
      assert.deepEqual(await search({ name: { contains: 'deep' } }), []);
    });

    it('lists an owner\'s data objects, the most recently changed first, paged', async () => {
      const at = (s: number) => new Date(t0.getTime() + s * 1000);
      await obj('/z/other/b1', 'bob', at(5));
      await obj('/z/other/b2', 'bob', at(7));
      await obj('/z/other/b3', 'bob', at(7));
      await obj('/z/other/b4', 'bob', at(3));
      await c.createCollection({ path: p('/z/bobs'), owner: 'bob', now: at(9) });
      const all = await c.recentObjects({ owner: 'bob', before: null, limit: 10 });
      assert.deepEqual(all.map((o) => o.path).slice(2), ['/z/other/b1', '/z/other/b4'], 'newest first; collections are not uploads');
      assert.deepEqual(new Set(all.slice(0, 2).map((o) => o.path)), new Set(['/z/other/b2', '/z/other/b3']));
      const first = await c.recentObjects({ owner: 'bob', before: null, limit: 1 });
      const rest = await c.recentObjects({ owner: 'bob', before: { at: first[0]!.modifiedAt, id: first[0]!.id }, limit: 10 });
      assert.deepEqual([...first, ...rest].map((o) => o.path), all.map((o) => o.path), 'pages join up, ties broken by id');
      await c.trash({ path: p('/z/other/b1'), actor: 'bob', reason: null, now: at(10) });
      assert.deepEqual((await c.recentObjects({ owner: 'bob', before: null, limit: 10 })).some((o) => o.path === '/z/other/b1'), false, 'not a trashed one');
      assert.deepEqual(await c.recentObjects({ owner: 'carol', before: null, limit: 10 }), []);
    });
  });
};
