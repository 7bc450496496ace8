/**
 * Search at scale, on both catalogs: a collection of 100,000 data objects (1,000 in each of 100
 * folders, every 100th with an AVU, one with a rare name and a rare AVU), loaded straight into
 * the catalog's tables (the triggers and indexes of migration 21 keep up, as they do for
 * uploads), then searched by a rare and a common part of a name, a glob, an attribute and
 * value, inside the owner's home as a user's search is bounded, and for the owner's recent
 * uploads. Each search must answer within `BOUND_MS` (generous: the machine is shared); the
 * times are reported. `LADING_SEARCH_SCALE` sets another size (the benchmark's million).
 * PostgreSQL at LADING_TEST_PG_URL; skipped with a message when it is unreachable, except under CI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { Catalog } from '../../src/core/ports.ts';
import { type Path, parsePath } from '../../src/core/path.ts';
import type { EntitySearch } from '../../src/core/search.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createPostgresCatalog } from '../../src/drivers/catalog/postgres.ts';

const COUNT = Number(process.env.LADING_SEARCH_SCALE ?? 100_000);
const PER_FOLDER = 1000;
/** The most one search may take, in ms. */
const BOUND_MS = 2000;
const HOME = '/z/home/alice';
const WORDS = ['sample', 'scan', 'image', 'table', 'notes'];
const t0 = Date.UTC(2026, 0, 1);

interface Row { uid: string; path: string; parent: string; name: string; blob: string; at: number }

/** The folders and objects of the collection, in order. */
function* rows(): Generator<Row> {
  for (let f = 0; f < COUNT / PER_FOLDER; f++) {
    const parent = `${HOME}/run-${String(f).padStart(4, '0')}`;
    yield { uid: randomUUID(), path: parent, parent: HOME, name: `run-${String(f).padStart(4, '0')}`, blob: '', at: t0 };
    for (let i = 0; i < PER_FOLDER; i++) {
      const n = f * PER_FOLDER + i;
      const name = n === Math.floor(COUNT / 2) + 7 ? 'Needle-Report-final.csv' : `obs-${n}-${WORDS[n % WORDS.length]}.dat`;
      yield { uid: randomUUID(), path: `${parent}/${name}`, parent, name, blob: `blob-${n}`, at: t0 + n };
    }
  }
}
const avuOf = (n: number): [string, string] | null => (n === Math.floor(COUNT / 2) + 7 ? ['doi', '10.1234/needle'] : n % 100 === 0 ? ['project', `p${(n / 100) % 10}`] : null);

/** The searches timed, each with what it must find. */
function cases(): { title: string; run: (c: Catalog) => Promise<unknown[]>; expect: (found: unknown[]) => void }[] {
  const q = (over: Partial<EntitySearch>): EntitySearch => ({
    under: parsePath('/z'), within: null, name: null, attribute: null, value: null, kind: null, after: null, limit: 101, ...over,
  });
  const within: Path[] = [parsePath(HOME)];
  const one = (found: unknown[]) => assert.equal(found.length, 1);
  const page = (found: unknown[]) => assert.equal(found.length, 101);
  return [
    { title: 'a rare part of a name', run: (c) => c.searchEntities(q({ name: { contains: 'needle-report' } })), expect: one },
    { title: 'a rare part of a name, in the owner\'s home', run: (c) => c.searchEntities(q({ name: { contains: 'NEEDLE' }, within })), expect: one },
    { title: 'a common part of a name (every fifth)', run: (c) => c.searchEntities(q({ name: { contains: 'sample' }, within })), expect: page },
    { title: 'a part found nowhere', run: (c) => c.searchEntities(q({ name: { contains: 'zebra' } })), expect: (f) => assert.equal(f.length, 0) },
    { title: 'a glob', run: (c) => c.searchEntities(q({ name: { glob: `obs-${COUNT - 3}-*.dat` } })), expect: one },
    { title: 'an attribute and a rare value', run: (c) => c.searchEntities(q({ attribute: 'doi', value: '10.1234/needle', within })), expect: one },
    { title: 'an attribute (every 100th)', run: (c) => c.searchEntities(q({ attribute: 'project' })), expect: page },
    { title: 'an attribute and a value (every 1,000th)', run: (c) => c.searchEntities(q({ attribute: 'project', value: 'p3' })), expect: (f) => assert.equal(f.length, Math.min(101, COUNT / 1000)) },
    { title: 'a page deep into a common part', run: (c) => c.searchEntities(q({ name: { contains: 'scan' }, after: `${HOME}/run-0050` })), expect: page },
    { title: 'recent uploads', run: (c) => c.recentObjects({ owner: 'alice', before: null, limit: 100 }), expect: (f) => assert.equal(f.length, 100) },
  ];
}

/** Runs every case against `catalog`, asserting its answer and its time; reports the times. */
async function timeCases(name: string, catalog: Catalog, report: (line: string) => void): Promise<void> {
  for (const { title, run, expect } of cases()) {
    await run(catalog); // warm
    const started = performance.now();
    const found = await run(catalog);
    const ms = performance.now() - started;
    expect(found);
    report(`${name}, ${COUNT.toLocaleString('en')} objects: ${title}: ${ms.toFixed(1)} ms`);
    assert.ok(ms < BOUND_MS, `${title} took ${ms.toFixed(0)} ms, over ${BOUND_MS} ms`);
  }
}

describe(`search over ${COUNT.toLocaleString('en')} objects: sqlite`, () => {
  let dir: string;
  let catalog: Catalog;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-search-scale-'));
    const file = join(dir, 'catalog.sqlite');
    const made = createSqliteCatalog({ file });
    for (const path of ['/z', '/z/home', HOME]) await made.createCollection({ path: parsePath(path), owner: 'alice', now: new Date(t0) });
    await made.close();
    const started = performance.now();
    const db = new DatabaseSync(file);
    db.exec('PRAGMA foreign_keys = ON; BEGIN');
    const entity = db.prepare(`INSERT INTO entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
      VALUES (?, ?, ?, ?, ?, 'alice', ?, ?, ?, ?, ?)`);
    const acl = db.prepare('INSERT INTO acls (entity_id, principal, level) VALUES (?, \'alice\', 3)');
    const avu = db.prepare('INSERT INTO avus (entity_id, attribute, value) VALUES (?, ?, ?)');
    let n = 0;
    for (const r of rows()) {
      const object = r.blob !== '';
      const { lastInsertRowid: id } = entity.run(r.uid, r.path, r.parent, r.name, object ? 'dataobject' : 'collection', object ? 4 : null, object ? 'sha2:x' : null, object ? r.blob : null, r.at, r.at);
      acl.run(id);
      const meta = object ? avuOf(n++) : null;
      if (meta) avu.run(id, ...meta);
    }
    db.exec('COMMIT; ANALYZE');
    db.close();
    console.log(`# sqlite: loaded ${COUNT.toLocaleString('en')} objects in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    catalog = createSqliteCatalog({ file });
  });
  after(async () => {
    await catalog?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`answers each search within ${BOUND_MS} ms`, async (t) => {
    await timeCases('sqlite', catalog, (line) => t.diagnostic(line));
  });
});

const url = process.env.LADING_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

describe(`search over ${COUNT.toLocaleString('en')} objects: postgres`, async () => {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 5000, max: 2 });
  pool.on('error', () => {});
  const unreachable = await pool.query('SELECT 1').then(() => null, (err: Error) => err.message || String(err));
  if (unreachable && process.env.CI !== 'true') {
    await pool.end();
    it('needs PostgreSQL', { skip: `PostgreSQL at ${url} is unreachable (${unreachable}); set LADING_TEST_PG_URL` }, () => {});
    return;
  }
  const schema = `lading_search_${randomBytes(4).toString('hex')}`;
  let catalog: Catalog;
  before(async () => {
    catalog = await createPostgresCatalog({ connectionString: url, schema });
    for (const path of ['/z', '/z/home', HOME]) await catalog.createCollection({ path: parsePath(path), owner: 'alice', now: new Date(t0) });
    const started = performance.now();
    const S = `"${schema}".`;
    let batch: Row[] = [];
    let n = 0;
    const flush = async () => {
      const objects = batch.map((r) => r.blob !== '');
      const ids = await pool.query(`INSERT INTO ${S}entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::bigint[], $10::bigint[])
        RETURNING id`, [
        batch.map((r) => r.uid), batch.map((r) => r.path), batch.map((r) => r.parent), batch.map((r) => r.name),
        objects.map((o) => (o ? 'dataobject' : 'collection')), batch.map(() => 'alice'), objects.map((o) => (o ? 4 : null)),
        objects.map((o) => (o ? 'sha2:x' : null)), batch.map((r) => r.blob || null), batch.map((r) => r.at),
      ]);
      const idList = ids.rows.map((r: { id: string }) => r.id);
      await pool.query(`INSERT INTO ${S}acls (entity_id, principal, level) SELECT unnest($1::bigint[]), 'alice', 3`, [idList]);
      const metas: [string, string, string][] = [];
      batch.forEach((r, i) => {
        const meta = objects[i] ? avuOf(n++) : null;
        if (meta) metas.push([idList[i]!, ...meta]);
      });
      await pool.query(`INSERT INTO ${S}avus (entity_id, attribute, value) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`,
        [metas.map((m) => m[0]), metas.map((m) => m[1]), metas.map((m) => m[2])]);
      batch = [];
    };
    for (const r of rows()) {
      batch.push(r);
      if (batch.length === 10_000) await flush();
    }
    if (batch.length > 0) await flush();
    // NOTE: as autovacuum does after a bulk load: it also moves the GIN index's pending
    // entries (fastupdate) into the index proper, which a search would otherwise read one by one.
    for (const table of ['entities', 'avus', 'acls']) await pool.query(`VACUUM ANALYZE ${S}${table}`);
    console.log(`# postgres: loaded ${COUNT.toLocaleString('en')} objects in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
  after(async () => {
    await catalog?.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });

  it(`answers each search within ${BOUND_MS} ms`, async (t) => {
    const trgm = await pool.query('SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2', [schema, 'entities_by_name_trgm']);
    t.diagnostic(trgm.rowCount === 1 ? 'the trigram index of names is there' : 'pg_trgm is not available: names are read without an index');
    await timeCases('postgres', catalog, (line) => t.diagnostic(line));
  });
});
