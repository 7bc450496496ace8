import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createFsResource, type FsResourceOptions } from '../../src/drivers/resource/fs.ts';
import { resourceContract } from '../contracts/resource-contract.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-fs-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;
resourceContract('fs', () => createFsResource({ root: join(dir, `r${n++}`) }));

describe('fs resource', () => {
  it('refuses incomplete options when it is created', async () => {
    await assert.rejects(createFsResource({ root: '' }), /`root` is required/);
    await assert.rejects(createFsResource({} as FsResourceOptions), /`root` is required/);
    await assert.rejects(createFsResource({ root: join(dir, 'bad-fsync'), fsync: 'yes' } as unknown as FsResourceOptions), /`fsync`/);
  });

  it('refuses a root where its directories cannot be created, naming the option', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    await assert.rejects(createFsResource({ root: file }), /`root`.*ENOTDIR|`root`.*EEXIST/);
  });
});
