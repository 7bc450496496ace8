/**
 * The SQLite catalog: every catalog contract suite on a fresh file each, what the file keeps
 * across a restart, and the options the factory refuses.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
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

  it('refuses a missing file with a TypeError naming the option', () => {
    for (const options of [{ file: '' }, {} as SqliteCatalogOptions]) {
      assert.throws(() => createSqliteCatalog(options), (err: Error & { option?: string }) =>
        err instanceof TypeError && err.option === 'file' && /`file`/.test(err.message));
    }
  });
});
