/** Runs the OIDC store contract on a temporary SQLite catalog, and checks it survives reopening. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { oidcStoreContract } from '../contracts/catalog-oidc-contract.ts';

const dirs: string[] = [];
process.on('exit', () => {
  for (const d of dirs) void rm(d, { recursive: true, force: true });
});

oidcStoreContract('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lading-oidc-'));
  dirs.push(dir);
  return createSqliteCatalog({ file: join(dir, 'catalog.sqlite') });
});

it('sqlite: OIDC records survive a restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lading-oidc-'));
  try {
    const file = join(dir, 'catalog.sqlite');
    const first = createSqliteCatalog({ file });
    await first.oidcPut('Grant', 'g', { payload: 'kept', expiresAt: null });
    await first.close();
    const second = createSqliteCatalog({ file });
    assert.equal((await second.oidcGet('Grant', 'g', new Date()))?.payload, 'kept');
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
