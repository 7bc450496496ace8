/**
 * The resume store finds what an earlier run left and what this run wrote, and forgets what it
 * deletes; it reads the directory once, so a record another process writes after that is not
 * seen (that process continues its own upload).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResumeStore, type ResumeKey } from '../../src/client/transfer/resume-store.ts';

const key = (local: string): ResumeKey => ({ server: 'http://127.0.0.1:8080', local, remote: `/tempZone/home/a${local}`, size: 10, mtimeMs: 1 });

describe('ResumeStore', () => {
  let dir: string;
  before(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'lading-resume-')), 'uploads');
  });
  after(async () => {
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('finds nothing where the directory does not exist yet', async () => {
    assert.equal(await new ResumeStore(dir).get(key('/x')), null);
  });

  it('finds a record an earlier run wrote, and one it wrote itself after listing', async () => {
    await new ResumeStore(dir).put(key('/earlier'), 'http://u/1');
    const store = new ResumeStore(dir);
    assert.equal((await store.get(key('/earlier')))?.url, 'http://u/1');
    assert.equal(await store.get(key('/mine')), null);
    await store.put(key('/mine'), 'http://u/2');
    assert.equal((await store.get(key('/mine')))?.url, 'http://u/2');
  });

  it('forgets a record it deleted, on disk too', async () => {
    const store = new ResumeStore(dir);
    await store.put(key('/gone'), 'http://u/3');
    const before = (await readdir(dir)).length;
    await store.delete(key('/gone'));
    assert.equal(await store.get(key('/gone')), null);
    assert.equal((await readdir(dir)).length, before - 1);
  });

  it('does not see a record another store wrote after its first read of the directory', async () => {
    const store = new ResumeStore(dir);
    assert.equal(await store.get(key('/later')), null);
    await new ResumeStore(dir).put(key('/later'), 'http://u/4');
    assert.equal(await store.get(key('/later')), null);
    assert.equal((await new ResumeStore(dir).get(key('/later')))?.url, 'http://u/4');
  });

  it('counts an unreadable record as none', async () => {
    const store = new ResumeStore(dir);
    await store.put(key('/bad'), 'http://u/5');
    for (const n of await readdir(dir)) await writeFile(join(dir, n), '{not json');
    assert.equal(await new ResumeStore(dir).get(key('/bad')), null);
  });
});
