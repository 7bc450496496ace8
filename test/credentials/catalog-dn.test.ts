import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { dnMappingContract } from '../contracts/catalog-dn-contract.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-dn-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
dnMappingContract('sqlite', async () => createSqliteCatalog({ file: join(dir, `c${n++}.sqlite`) }));
