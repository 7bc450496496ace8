/**
 * Small objects kept in the SQLite catalog (`drivers/resource/inline.ts`) in front of the fs
 * resource: the resource contract as a whole, then where the bytes go on either side of the
 * limit, that a body larger than the limit reaches the file whole and in order whatever its
 * chunks, and that a failure on the way stores nothing.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { inlineSmallObjects } from '../../src/drivers/resource/inline.ts';
import type { Catalog, Resource } from '../../src/core/ports.ts';
import { resourceContract } from '../contracts/resource-contract.ts';
import { DatabaseSync } from 'node:sqlite';

const dir = await mkdtemp(join(tmpdir(), 'lading-inline-'));
after(() => rm(dir, { recursive: true, force: true }));
let n = 0;

/** A fresh fs resource behind a fresh SQLite catalog's inline store, `limit` bytes inline. */
async function fresh(limit?: number): Promise<{ r: Resource; catalog: Catalog; root: string; file: string }> {
  const at = join(dir, `r${n++}`);
  const root = join(at, 'resource');
  const file = at + '.sqlite';
  const catalog = createSqliteCatalog({ file });
  const files = await createFsResource({ root });
  const r = inlineSmallObjects(files, catalog.inline!, limit);
  const close = r.close;
  return { r: { ...r, close: async () => { await close(); await catalog.close(); } }, catalog, root, file };
}

async function files(root: string): Promise<string[]> {
  return (await readdir(join(root, 'blobs'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
}

async function setUp(t: TestContext, limit?: number): Promise<{ r: Resource; root: string; catalog: Catalog; file: string }> {
  const made = await fresh(limit);
  t.after(() => made.r.close());
  return made;
}

resourceContract('fs with small objects inline', async () => (await fresh()).r);

describe('small objects inline', () => {
  it('copies an inline object as bytes kept for the copy\'s commit, never as a file', async (t) => {
    const { r, root, catalog } = await setUp(t, 1024);
    const data = randomBytes(1000);
    await r.write('key-00000061', Readable.from([data]));
    assert.deepEqual(await r.copy!('key-00000061', 'key-00000062', { publishAfter: () => assert.fail('nothing of its own is stored, so nothing is tracked') }), { size: 1000 });
    assert.ok((await buffer(await r.read('key-00000062'))).equals(data));
    assert.equal(catalog.inline!.size('key-00000062'), 1000);
    assert.deepEqual(await files(root), []);
  });

  it('keeps an object of up to the limit in the catalog, with ranges and sizes, and deletes it there', async (t) => {
    const { r, root } = await setUp(t, 1024);
    const data = randomBytes(1024);
    assert.deepEqual(await r.write('key-00000001', Readable.from([data.subarray(0, 100), data.subarray(100)])), { size: 1024 });
    assert.deepEqual(await files(root), [], 'no file for an object within the limit');
    assert.equal(await r.size('key-00000001'), 1024);
    assert.ok((await buffer(await r.read('key-00000001'))).equals(data));
    assert.ok((await buffer(await r.read('key-00000001', { start: 10, end: 19 }))).equals(data.subarray(10, 20)));
    await r.delete('key-00000001');
    assert.equal(await r.size('key-00000001'), null);
  });

  it('hands a body one byte over the limit to the file resource, whole and in order, however it is cut', async (t) => {
    const { r, root } = await setUp(t, 1024);
    const data = randomBytes(1025);
    // Many small chunks, then the rest: every one read before the decision must come back first.
    const chunks: Buffer[] = [];
    for (let at = 0; at < data.length; at += 37) chunks.push(data.subarray(at, Math.min(at + 37, data.length)));
    assert.deepEqual(await r.write('key-00000002', Readable.from(chunks)), { size: 1025 });
    assert.deepEqual(await files(root), ['key-00000002']);
    assert.ok((await buffer(await r.read('key-00000002'))).equals(data));
    await r.delete('key-00000002');
    assert.deepEqual(await files(root), []);
  });

  it('takes strings and typed arrays of an object-mode source on either side of the limit', async (t) => {
    const { r } = await setUp(t, 8);
    await r.write('key-00000003', Readable.from(['abc', new Uint8Array([100, 101])]));
    assert.equal(await text(await r.read('key-00000003')), 'abcde');
    await r.write('key-00000004', Readable.from(['abcdef', new Uint8Array([103, 104, 105]), 'jk']));
    assert.equal(await text(await r.read('key-00000004')), 'abcdefghijk');
  });

  it('never calls publishAfter for a body within the limit, which stores nothing before its commit; once for one over it', async (t) => {
    const { r, root } = await setUp(t, 1024);
    let calls = 0;
    const refuse = (): Promise<never> => {
      calls++;
      return Promise.reject(new Error('the catalog refused'));
    };
    assert.equal((await r.write('key-0000000c', Readable.from([Buffer.alloc(1024, 1)]), { publishAfter: refuse })).size, 1024);
    assert.equal(calls, 0, 'nothing to track: the bytes wait in memory for the commit that stores them');
    assert.equal(await r.size('key-0000000c'), 1024);
    assert.deepEqual(await files(root), []);
    await assert.rejects(r.write('key-0000000d', Readable.from([Buffer.alloc(1025, 1)]), { publishAfter: refuse }), /the catalog refused/);
    assert.equal(calls, 1);
    assert.equal(await r.size('key-0000000d'), null);
    assert.deepEqual(await files(root), []);
  });

  it('stores nothing when the source fails within the limit', async (t) => {
    const { r, root } = await setUp(t, 1024);
    const failing = new Readable({ read() {} });
    failing.push(Buffer.from('part'));
    setImmediate(() => failing.destroy(new Error('client went away')));
    await assert.rejects(r.write('key-00000005', failing), /client went away/);
    const controller = new AbortController();
    const held = new Readable({ read() {} });
    held.push(Buffer.from('part'));
    setImmediate(() => controller.abort(new Error('cut off')));
    await assert.rejects(r.write('key-00000007', held, { signal: controller.signal }), /cut off/);
    for (const key of ['key-00000005', 'key-00000007']) assert.equal(await r.size(key), null, key);
    assert.deepEqual(await files(root), []);
  });

  it('copies an inline object into a destination, and fails with a destination that errs or is gone', async (t) => {
    const { r } = await setUp(t, 1024);
    const data = randomBytes(1000);
    await r.write('key-00000008', Readable.from([data]));
    const got: Buffer[] = [];
    const stream = await r.read('key-00000008', { start: 1, end: 998 });
    await stream.copyTo!(new Writable({ write(chunk: Buffer, _enc, cb) { got.push(Buffer.from(chunk)); cb(); } }));
    assert.ok(Buffer.concat(got).equals(data.subarray(1, 999)));
    assert.ok(stream.destroyed, 'the stream is released');

    const erring = new Writable({ write(_chunk, _enc, cb) { cb(new Error('connection reset')); } });
    erring.on('error', () => {});
    await assert.rejects((await r.read('key-00000008')).copyTo!(erring), /connection reset/);
    const gone = new Writable({ write() { setImmediate(() => gone.destroy()); } });
    await assert.rejects((await r.read('key-00000008')).copyTo!(gone), /closed before the copy ended/);
  });

  it('stores a small object\'s bytes in the transaction of the commit that shows its object, not before, fenced though never tracked', async (t) => {
    const { r, catalog, file } = await setUp(t, 1024);
    const other = new DatabaseSync(file);
    t.after(() => other.close());
    const rows = () => other.prepare("SELECT bytes FROM inline_blobs WHERE blob = 'key-0000000a'").all().map((row) => Buffer.from(row.bytes as Uint8Array).toString());
    await r.write('key-0000000a', Readable.from([Buffer.from('tiny')]));
    assert.equal(await text(await r.read('key-0000000a')), 'tiny', 'readable in this process once written');
    assert.equal(await r.size('key-0000000a'), 4);
    assert.deepEqual(rows(), [], 'no row of bytes without its object');
    await catalog.createCollection({ path: '/z' as never, owner: 'ada', now: new Date() });
    // A commit that fails stores nothing.
    await catalog.commitObject({ path: '/nowhere/a' as never, owner: 'ada', size: 4, checksum: 'sha2:x', blob: 'key-0000000a', now: new Date(), overwrite: false, fenced: true })
      .then(() => assert.fail('committed under a missing collection'), () => {});
    assert.deepEqual(rows(), []);
    await catalog.commitObject({ path: '/z/a' as never, owner: 'ada', size: 4, checksum: 'sha2:x', blob: 'key-0000000a', now: new Date(), overwrite: false, fenced: true });
    assert.deepEqual(rows(), ['tiny'], 'the commit stored the bytes');
    // Neither tracked nor kept: what recovery may have removed is still refused.
    await assert.rejects(catalog.commitObject({ path: '/z/b' as never, owner: 'ada', size: 4, checksum: 'sha2:x', blob: 'key-0000000e', now: new Date(), overwrite: false, fenced: true }), { code: 'UNAVAILABLE' });
    assert.equal(await text(await r.read('key-0000000a')), 'tiny');
    await r.delete('key-0000000a');
    assert.deepEqual(rows(), []);
    assert.equal(await r.size('key-0000000a'), null);
  });

  it('forgets bytes kept for a commit that never comes when they are deleted', async (t) => {
    const { r, file } = await setUp(t, 1024);
    await r.write('key-0000000b', Readable.from([Buffer.from('dropped')]));
    await r.delete('key-0000000b');
    assert.equal(await r.size('key-0000000b'), null);
    const other = new DatabaseSync(file);
    t.after(() => other.close());
    assert.equal(other.prepare('SELECT count(*) AS n FROM inline_blobs').get()?.n, 0);
  });

  it('reads an object the file resource holds when the catalog has none under its key', async (t) => {
    const at = join(dir, 'beside');
    const root = join(at, 'resource');
    const plain = await createFsResource({ root });
    await plain.write('key-00000009', Readable.from([Buffer.from('a file from before')]));
    await plain.close();
    const catalog = createSqliteCatalog({ file: join(at, 'catalog.sqlite') });
    const r = inlineSmallObjects(await createFsResource({ root }), catalog.inline!);
    t.after(async () => {
      await r.close();
      await catalog.close();
    });
    assert.equal(await r.size('key-00000009'), 18);
    assert.equal(await text(await r.read('key-00000009')), 'a file from before');
    await r.delete('key-00000009');
    assert.deepEqual(await files(root), []);
  });
});
