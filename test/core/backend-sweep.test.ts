/**
 * Replaced contents on a resource whose deletes would cut open reads short (S3 multipart on
 * Swift) are kept until the sweep after the grace period; elsewhere they go at once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { Backend, isAbandoned } from '../../src/core/backend.ts';
import { parsePath } from '../../src/core/path.ts';
import { systemClock, type Resource } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { trustedAuthority } from '../helpers/trusted.ts';

async function setup(deleteSparesOpenReads: boolean) {
  const dir = await mkdtemp(join(tmpdir(), 'lading-sweep-'));
  const catalog = createSqliteCatalog({ file: join(dir, 'c.sqlite') });
  const fs = await createFsResource({ root: join(dir, 'r') });
  const resource: Resource = { ...fs, capabilities: { ...fs.capabilities, deleteSparesOpenReads } };
  const backend = new Backend({ catalog, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });
  await backend.init(new Date());
  await backend.addUser('u');
  const cred = { kind: 'trusted', user: 'u' };
  const path = parsePath('/z/home/u/f');
  const first = await backend.upload(cred, path, Readable.from([Buffer.from('old')]), { overwrite: false });
  const reader = await resource.read(first.object.blob);
  await backend.upload(cred, path, Readable.from([Buffer.from('new')]), { overwrite: true });
  return { dir, catalog, resource, backend, first, reader };
}

describe('replaced contents', () => {
  it('are deleted at once where deleting spares open reads', async () => {
    const { dir, catalog, resource, first, reader } = await setup(true);
    assert.equal(await text(reader), 'old');
    assert.equal(await resource.size(first.object.blob), null);
    assert.deepEqual((await catalog.trackedBlobs(new Date(Date.now() + 1000))).map((b) => b.blob), []);
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('are kept until the sweep after the grace period where deleting would cut reads', async () => {
    const { dir, catalog, resource, backend, first, reader } = await setup(false);
    assert.equal(await resource.size(first.object.blob), 3, 'the old content is still there');
    assert.equal(await backend.sweep(new Date(Date.now() - 3_600_000)), 0, 'not before the grace period');
    assert.equal(await text(reader), 'old');
    assert.equal(await backend.sweep(new Date(Date.now() + 1000)), 1);
    assert.equal(await resource.size(first.object.blob), null);
    assert.deepEqual((await catalog.trackedBlobs(new Date(Date.now() + 1000))).map((b) => b.blob), []);
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('what recovery may remove', () => {
  const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const blob = (owner: string | null, ownerSeenAt: Date | null) => ({ blob: 'b', trackedAt: t(0), owner, ownerSeenAt });

  it('judges an owned blob by its owner\'s heartbeat, never by its age, on a shared catalog', () => {
    const cutoff = { staleBefore: t(100), deadBefore: t(50) };
    assert.equal(isAbandoned(blob('live', t(60)), cutoff), false, 'a live owner keeps an old blob');
    assert.equal(isAbandoned(blob('dead', t(40)), cutoff), true);
    assert.equal(isAbandoned(blob('gone', null), cutoff), true, 'an owner without a heartbeat stopped');
    assert.equal(isAbandoned(blob(null, null), cutoff), true, 'no owner: by age');
    assert.equal(isAbandoned(blob(null, null), { staleBefore: t(0), deadBefore: t(50) }), false);
  });

  it('judges every blob by age on a catalog one process owns', () => {
    assert.equal(isAbandoned(blob('me-before', t(60)), { staleBefore: t(1) }), true);
    assert.equal(isAbandoned(blob('me-before', t(60)), { staleBefore: t(0) }), false);
  });
});
