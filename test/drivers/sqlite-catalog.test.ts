/**
 * The SQLite catalog: every catalog contract suite on a fresh file each, what the file keeps
 * across a restart, the options the factory refuses, and that a write is answered only once
 * its transaction is on disk, concurrent writes sharing the flushes of the write-ahead log.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteCatalog, type SqliteCatalogOptions } from '../../src/drivers/catalog/sqlite.ts';
import { runCatalogContracts } from '../contracts/catalog-contract.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-sqlite-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
runCatalogContracts({ name: 'sqlite', create: async () => createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) }) });

describe('sqlite catalog', () => {
  it('sqlite: OIDC records survive a restart', async () => {
    const file = join(dir, `c${n++}.sqlite`);
    const first = createSqliteCatalog({ file });
    await first.oidcPut('Grant', 'g', { payload: 'kept', expiresAt: null });
    await first.close();
    const second = createSqliteCatalog({ file });
    assert.equal((await second.oidcGet('Grant', 'g', new Date()))?.payload, 'kept');
    await second.close();
  });

  it('answers a write only after a flush of the log that began after it; concurrent writes share flushes', async (t) => {
    const file = join(dir, `c${n++}.sqlite`);
    const catalog = createSqliteCatalog({ file });
    t.after(() => catalog.close());
    // Every flush of any file by this process, with when it began and ended.
    const probe = await open(file, 'r');
    const proto = Object.getPrototypeOf(probe) as { datasync(this: { fd: number }): Promise<void> };
    await probe.close();
    const original = proto.datasync;
    const flushes: { began: number; ended: number }[] = [];
    let clock = 0;
    proto.datasync = async function (this: { fd: number }) {
      const began = ++clock;
      await original.call(this);
      flushes.push({ began, ended: ++clock });
    };
    t.after(() => {
      proto.datasync = original;
    });
    const writes = 24;
    const results = await Promise.all(Array.from({ length: writes }, async (_, i) => {
      const called = ++clock;
      await catalog.createUser({ name: `u${i}`, kind: 'user', passwordHash: null, createdAt: new Date() });
      return { called, answered: ++clock };
    }));
    for (const { called, answered } of results) {
      assert.ok(flushes.some((f) => f.began > called && f.ended < answered), `write called at ${called}, answered at ${answered}: no flush in between (${JSON.stringify(flushes)})`);
    }
    assert.ok(flushes.length >= 1 && flushes.length <= writes / 4, `${flushes.length} flushes for ${writes} concurrent writes`);
    // A read does not flush.
    const before = flushes.length;
    assert.equal((await catalog.getUser('u3'))?.name, 'u3');
    assert.equal(flushes.length, before);
  });

  it('refuses a missing file with a TypeError naming the option', () => {
    for (const options of [{ file: '' }, {} as SqliteCatalogOptions]) {
      assert.throws(() => createSqliteCatalog(options), (err: Error & { option?: string }) =>
        err instanceof TypeError && err.option === 'file' && /`file`/.test(err.message));
    }
  });
});
