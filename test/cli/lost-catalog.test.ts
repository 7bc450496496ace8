/**
 * A data directory whose SQLite catalog was lost or damaged, run as the operator runs it
 * (`bin/lading serve`): the start is refused in one line naming the catalog, with a non-zero
 * exit, and nothing is created in its place; a new or empty directory still starts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { oneLineError, serveOrRefuse } from './run-lading.ts';

let dir = '';
/** A data directory a server has used: users, objects, its CA and keys. */
let used = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lading-lost-catalog-'));
  used = join(dir, 'used');
  const s = await startTestServer({}, { dataDir: used, keepData: true });
  try {
    // NOTE: enough rows that the catalog spans many pages, so damage in its middle hits some.
    for (let i = 0; i < 300; i++) await s.deps.backend.addUser(`user${i}`);
    const auth = await s.bearer('ivy');
    for (let i = 0; i < 100; i++) {
      const res = await fetch(s.home('ivy', `object-${i}.txt`), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: `object ${i}` });
      assert.equal(res.status, 200);
    }
  } finally {
    await s.stop();
  }
});
after(() => rm(dir, { recursive: true, force: true }));

/** A copy of the used data directory, for one test to spoil. */
async function copyOfUsed(name: string): Promise<string> {
  const copy = join(dir, name);
  await cp(used, copy, { recursive: true });
  return copy;
}

describe('a lost or damaged catalog', () => {
  it('refuses to start on a data directory whose catalog was deleted, creating none', async () => {
    const data = await copyOfUsed('deleted');
    await rm(join(data, 'catalog.sqlite'));
    const res = await serveOrRefuse(data);
    assert.ok(res, 'lading serve started on a data directory without its catalog');
    assert.equal(oneLineError(res, 1, /catalog: '.*catalog\.sqlite' is missing, but the data directory '.*deleted' holds ca\/, keys\/, resource\/ .*restore/), null);
    assert.ok(!(await readdir(data)).includes('catalog.sqlite'), 'no new catalog is created');
  });

  it('refuses to start on a data directory whose catalog was emptied (: > catalog.sqlite)', async () => {
    const data = await copyOfUsed('emptied');
    await writeFile(join(data, 'catalog.sqlite'), '');
    await rm(join(data, 'catalog.sqlite-wal'), { force: true });
    const res = await serveOrRefuse(data);
    assert.ok(res, 'lading serve started on an empty catalog');
    assert.equal(oneLineError(res, 1, /catalog: '.*catalog\.sqlite' is empty, but the data directory '.*emptied' holds ca\/, keys\/, resource\//), null);
    assert.equal((await stat(join(data, 'catalog.sqlite'))).size, 0, 'the empty catalog is left as it was');
  });

  it('refuses to start on a catalog damaged in its middle (8 KiB of random bytes)', async () => {
    const data = await copyOfUsed('damaged');
    const file = join(data, 'catalog.sqlite');
    const { size } = await stat(file);
    assert.ok(size >= 64 * 1024, `the catalog holds many pages (${size} bytes)`);
    const handle = await open(file, 'r+');
    await handle.write(randomBytes(8192), 0, 8192, Math.floor(size / 2 / 4096) * 4096);
    await handle.close();
    const res = await serveOrRefuse(data);
    assert.ok(res, 'lading serve started on a damaged catalog');
    assert.equal(oneLineError(res, 1, /catalog: '.*catalog\.sqlite' is damaged \(.+\); lading does not start on it: restore the catalog from a backup\./), null);
  });

  it('still starts on a new or an empty data directory', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    for (const data of [empty, join(dir, 'new')]) assert.equal(await serveOrRefuse(data), null, `lading serve starts on ${data}`);
    assert.equal(await serveOrRefuse(used), null, 'and on the used one, untouched');
  });
});
