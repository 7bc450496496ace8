/**
 * The fs resource: the resource contract, the options it refuses, and that a write with fsync
 * on resolves only once the directory holding the new object's name is flushed too (a rename
 * is not on disk before that), concurrent writes into one directory sharing the flushes.
 */
import { mkdtemp, open, readlink, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
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
  it('declares copy: a copy is a reflink or copy_file_range, never bytes through lading', async () => {
    const r = await createFsResource({ root: join(dir, `r${n++}`) });
    try {
      assert.equal(r.capabilities.copy, true);
      assert.equal(typeof r.copy, 'function');
    } finally {
      await r.close();
    }
  });

  it('refuses incomplete options when it is created', async () => {
    await assert.rejects(createFsResource({ root: '' }), /`root` is required/);
    await assert.rejects(createFsResource({} as FsResourceOptions), /`root` is required/);
    await assert.rejects(createFsResource({ root: join(dir, 'bad-fsync'), fsync: 'yes' } as unknown as FsResourceOptions), /`fsync`/);
  });

  it('flushes the directory a write renames into before it resolves; concurrent writes share it', async (t) => {
    const root = join(dir, 'flushed');
    const r = await createFsResource({ root, fsync: true });
    t.after(() => r.close());
    const probe = await open(join(dir, 'a-probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { sync(this: { fd: number }): Promise<void> };
    await probe.close();
    const original = proto.sync;
    const synced: { path: string; ended: number }[] = [];
    let clock = 0;
    proto.sync = async function (this: { fd: number }) {
      const path = await readlink(`/proc/self/fd/${this.fd}`).catch(() => '?');
      await original.call(this);
      synced.push({ path, ended: ++clock });
    };
    t.after(() => {
      proto.sync = original;
    });
    const keys = Array.from({ length: 12 }, (_, i) => `ab-flushed-${String(i).padStart(4, '0')}`);
    const answered = await Promise.all(keys.map(async (key) => {
      await r.write(key, Readable.from([Buffer.from(key)]));
      return ++clock;
    }));
    const dirFlushes = synced.filter((s) => s.path === join(root, 'blobs', 'ab'));
    for (const at of answered) assert.ok(dirFlushes.some((s) => s.ended < at), `a write resolved at ${at} before its directory was flushed`);
    assert.ok(dirFlushes.length < keys.length, `${dirFlushes.length} flushes of the directory for ${keys.length} concurrent writes`);
    // The new directory's own name, in blobs/, was flushed as well.
    assert.ok(synced.some((s) => s.path === join(root, 'blobs')));
  });

  it('refuses a root where its directories cannot be created, naming the option', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    await assert.rejects(createFsResource({ root: file }), /`root`.*ENOTDIR|`root`.*EEXIST/);
  });
});
