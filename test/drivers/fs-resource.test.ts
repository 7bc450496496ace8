import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { resourceContract } from '../contracts/resource-contract.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-fs-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
resourceContract('fs', () => createFsResource({ root: join(dir, `r${n++}`) }));
