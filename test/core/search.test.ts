/**
 * The core's search over a real SQLite catalog, where what a user may read is many subtrees:
 * more than one catalog query holds (so they are asked in groups and the answers merged), some
 * of them interleaving in byte order ('d05' and 'd05-x': '/…/d05-x/f' sorts before '/…/d05/f').
 * Paging through every page finds each readable match once, in byte order, and nothing of the
 * owner's private data; an admin and the owner find everything; recent uploads leave out what
 * the owner may no longer read.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Actor } from '../../src/core/backend.ts';
import { type Path, isWithin, parsePath } from '../../src/core/path.ts';
import type { Catalog } from '../../src/core/ports.ts';
import { Search } from '../../src/core/search.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const home = (user: string) => parsePath(`/z/home/${user}`);
const actor = (user: string, admin = false): Actor => ({ user, principals: [user, 'public'], admin });

describe('Search in the core', () => {
  let c: Catalog;
  let search: Search;
  const folders = [...Array.from({ length: 60 }, (_, i) => `d${String(i).padStart(2, '0')}`), 'd05-x'];
  let n = 0;
  const obj = (path: string, owner = 'alice', at = t0) => {
    const blob = `blob${n++}`;
    return c.commitObject({ path: parsePath(path), owner, size: 1, checksum: `sha2:${blob}`, blob, now: at, overwrite: false });
  };

  before(async () => {
    c = createSqliteCatalog({ file: ':memory:' });
    search = new Search({
      catalog: c,
      backend: {
        homeOf: home,
        levelOf: async (a: Actor, path: Path) => (a.admin || isWithin(path, home(a.user)) ? 'own' : c.accessLevel(path, a.principals)),
      },
    });
    for (const [p, owner] of [['/z', '_system'], ['/z/home', '_system'], ['/z/home/alice', 'alice'], ['/z/home/bob', 'bob'], ['/z/home/alice/private', 'alice']] as const) {
      await c.createCollection({ path: parsePath(p), owner, now: t0 });
    }
    await obj('/z/home/alice/private/f.txt');
    for (const f of folders) {
      await c.createCollection({ path: parsePath(`/z/home/alice/${f}`), owner: 'alice', now: t0 });
      await obj(`/z/home/alice/${f}/f.txt`);
      await c.setAccess(parsePath(`/z/home/alice/${f}`), 'bob', 'read');
    }
    await obj('/z/home/bob/f.txt', 'bob');
  });
  after(() => c.close());

  const everyPage = async (a: Actor, limit: number) => {
    const paths: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const page = await search.find(a, { name: 'f.txt', limit, after });
      paths.push(...page.entities.map((e) => e.path));
      if (page.next === null) return paths;
      after = page.next;
    }
    throw new Error('the pages never end');
  };
  const bytewise = (paths: string[]) => [...paths].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

  it('pages through many readable subtrees once each, in byte order, and never into private data', async () => {
    const expected = bytewise([...folders.map((f) => `/z/home/alice/${f}/f.txt`), '/z/home/bob/f.txt']);
    assert.equal(expected.indexOf('/z/home/alice/d05-x/f.txt') + 1, expected.indexOf('/z/home/alice/d05/f.txt'), 'the subtrees interleave');
    for (const limit of [7, 50, 1000]) assert.deepEqual(await everyPage(actor('bob'), limit), expected, `pages of ${limit}`);
  });

  it('finds everything for the owner and for an admin', async () => {
    const all = bytewise([...folders.map((f) => `/z/home/alice/${f}/f.txt`), '/z/home/alice/private/f.txt', '/z/home/bob/f.txt']);
    assert.deepEqual(await everyPage(actor('root', true), 13), all);
    assert.deepEqual(await everyPage(actor('alice'), 13), all.filter((p) => p !== '/z/home/bob/f.txt'));
  });

  it('lists recent uploads without what the owner may no longer read', async () => {
    await c.createCollection({ path: parsePath('/z/drop'), owner: '_system', now: t0 });
    await c.setAccess(parsePath('/z/drop'), 'bob', 'write');
    await obj('/z/drop/gone.txt', 'bob', new Date(t0.getTime() + 2000));
    await obj('/z/drop/kept.txt', 'bob', new Date(t0.getTime() + 1000));
    await c.setAccess(parsePath('/z/drop/gone.txt'), 'bob', null);
    await c.setAccess(parsePath('/z/drop'), 'bob', null);
    await c.setAccess(parsePath('/z/drop/kept.txt'), 'bob', 'read');
    const page = await search.recent(actor('bob'), { limit: 10 });
    assert.deepEqual(page.entities.map((e) => e.path), ['/z/drop/kept.txt', '/z/home/bob/f.txt']);
    assert.equal(page.next, null);
  });
});
