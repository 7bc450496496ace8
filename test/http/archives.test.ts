/**
 * A collection in one download (`download=zip`, `download=bag`) as its users and independent
 * readers see it: Python's `zipfile` (and `7z t` where installed) read back every member with
 * the SHA-256 the catalog stores; a bag validates with a BagIt check written here from the
 * standard library (manifests recomputed, Payload-Oxum); the same archive on a share link and
 * on /api/public; a member whose bytes cannot be read whole cuts the transfer instead of
 * giving a smaller archive that looks whole; the limits (members per archive, archives at
 * once) answer before anything is sent; and archives past the classic ZIP bounds (65,535
 * members, 4 GiB) read back whole.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parsePath } from '../../src/core/path.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { PY_BAG, download, expected, hex, pythonRead, run, sevenZipTest } from './archive-readers.ts';

describe('a collection in one download', () => {
  let s: TestServer;
  let alice: string;
  let dir: string;
  const put = (rest: string, body: string | Buffer, auth = alice) =>
    fetch(s.home('alice', rest), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body });
  const mkdir = (rest: string) => fetch(`${s.url}/api/registered`, {
    method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/tz/home/alice/${rest}`, force: true }),
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-archives-'));
    s = await startTestServer({ 'archives.concurrent_per_user': 1, 'archives.max_entries': 20 });
    alice = await s.bearer('alice');
    for (const c of ['proj/raw/empty', 'proj/docs']) assert.equal((await mkdir(c)).status, 200);
    assert.equal((await put('proj/a.txt', 'alpha\n')).status, 200);
    assert.equal((await put('proj/raw/big.bin', Buffer.alloc(300_000, 7))).status, 200);
    assert.equal((await put(`proj/docs/${encodeURIComponent('Grüße 100%.txt')}`, 'unicode name')).status, 200);
    assert.equal((await put('proj/docs/empty.dat', '')).status, 200);
  });
  after(async () => {
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('download=zip: every member, at its path under the collection\'s name, with the catalog\'s SHA-256, empty collections kept', async () => {
    const file = join(dir, 'proj.zip');
    const res = await download(`${s.home('alice', 'proj')}?download=zip`, file, { authorization: alice });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="proj.zip"; filename*=UTF-8\'\'proj.zip');
    const read = await pythonRead(file, dir);
    const want = await expected(s, '/tz/home/alice/proj', 'proj/');
    want.set('proj/', null);
    assert.deepEqual(read, want);
    assert.ok(read.has('proj/raw/empty/'), 'an empty collection is a directory entry');
    assert.ok(read.has('proj/docs/Grüße 100%.txt'), 'UTF-8 names');
    sevenZipTest(file);
  });

  it('download=bag: a BagIt bag an independent check validates, with the PIDs and the collection\'s source', async () => {
    // A PID on one member and on the collection, as the backend's rules would write them.
    await s.deps.catalog.addMeta(parsePath('/tz/home/alice/proj/a.txt'), { attribute: 'PID', value: '21.T99999/a', unit: '' });
    await s.deps.catalog.addMeta(parsePath('/tz/home/alice/proj'), { attribute: 'PID', value: '21.T99999/proj', unit: '' });
    const file = join(dir, 'proj-bag.zip');
    const res = await download(`${s.home('alice', 'proj')}?download=bag`, file, { authorization: alice });
    assert.equal(res.status, 200);
    const { stdout } = await run('python3', ['-c', PY_BAG, file]);
    const info = JSON.parse(stdout) as Record<string, string>;
    assert.equal(info['External-Identifier'], '21.T99999/proj');
    assert.equal(info.Source, `${s.url}/api/registered/tz/home/alice/proj`);
    assert.match(info['Bagging-Date']!, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(info['pids.txt'], '21.T99999/a data/a.txt\n');
  });

  it('the same archive on a read share link (one use) and on /api/public; refused to a stranger', async () => {
    const stranger = await s.bearer('mallory');
    assert.equal((await fetch(`${s.home('alice', 'proj')}?download=zip`, { headers: { authorization: stranger } })).status, 403);
    const made = await fetch(`${s.url}/api/shares`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/tz/home/alice/proj', kind: 'read', max_uses: 1 }),
    });
    assert.equal(made.status, 201);
    const link = (await json(made)).Response.data as { url: string };
    const shared = join(dir, 'shared.zip');
    assert.equal((await download(`${link.url}/docs?download=zip`, shared)).status, 200);
    const want = await expected(s, '/tz/home/alice/proj/docs', 'docs/');
    want.set('docs/', null);
    assert.deepEqual(await pythonRead(shared, dir), want);
    assert.equal((await fetch(`${link.url}?download=zip`)).status, 410, 'the archive took the link\'s one use');

    assert.equal((await fetch(`${s.url}/api/public/tz/home/alice/proj?download=zip`)).status, 404, 'not published yet');
    assert.equal((await fetch(`${s.url}/api/publish/tz/home/alice/proj`, { method: 'PUT', headers: { authorization: alice } })).status, 200);
    const pub = join(dir, 'public.zip');
    assert.equal((await download(`${s.url}/api/public/tz/home/alice/proj?download=bag`, pub)).status, 200);
    await run('python3', ['-c', PY_BAG, pub]);
  });

  it('limits: more members than archives.max_entries is 413 before anything is sent; a second archive at once is 429 with Retry-After', async () => {
    assert.equal((await mkdir('many')).status, 200);
    for (let i = 0; i < 21; i++) assert.equal((await put(`many/f${i}`, `${i}`)).status, 200);
    const tooMany = await fetch(`${s.home('alice', 'many')}?download=zip`, { headers: { authorization: alice } });
    assert.equal(tooMany.status, 413);
    assert.match(JSON.stringify((await json(tooMany)).Response.errors), /archives\.max_entries/);

    // A first archive held open (its reader reads nothing): the second is refused while it lasts.
    const held = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      request(`${s.home('alice', 'proj')}?download=zip`, { headers: { authorization: alice } }, resolve).on('error', reject).end();
    });
    assert.equal(held.statusCode, 200);
    const second = await fetch(`${s.home('alice', 'proj')}?download=zip`, { headers: { authorization: alice } });
    assert.equal(second.status, 429);
    assert.ok(Number(second.headers.get('retry-after')) > 0);
    await second.body?.cancel();
    held.destroy();
    // Once the first is gone, archives are served again.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      const again = await fetch(`${s.home('alice', 'proj')}?download=zip`, { headers: { authorization: alice } });
      status = again.status;
      await again.arrayBuffer();
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 200);
  });

  it('download=zip of a data object is 400; download=true still answers its bytes', async () => {
    const refused = await fetch(`${s.home('alice', 'proj/a.txt')}?download=zip`, { headers: { authorization: alice } });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify((await json(refused)).Response.errors), /is a data object, not a collection/);
    assert.equal(await (await fetch(`${s.home('alice', 'proj/a.txt')}?download=true`, { headers: { authorization: alice } })).text(), 'alpha\n');
  });
});

describe('a member that cannot be read whole cuts the transfer', () => {
  let s: TestServer;
  let alice: string;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-archives-'));
    // NOTE: every object's bytes on the fs resource, where the test can damage them.
    s = await startTestServer({ 'resource.inline_max': 0 });
    alice = await s.bearer('alice');
    assert.equal((await mkdirAt(s, alice, '/tz/home/alice/set')).status, 200);
    for (const [name, size] of [['a.bin', 200_000], ['b.bin', 3_000_000], ['c.bin', 100]] as const) {
      const res = await fetch(s.home('alice', `set/${name}`), {
        method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, name.charCodeAt(0)),
      });
      assert.equal(res.status, 200);
    }
  });
  after(async () => {
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const blobFile = async (name: string) => {
    const entity = await s.deps.catalog.getEntity(parsePath(`/tz/home/alice/set/${name}`));
    assert.ok(entity?.kind === 'dataobject');
    return join(s.dataDir, 'resource', 'blobs', entity.blob.slice(0, 2), entity.blob);
  };

  /** Reads the whole answer; says whether the transfer broke, and keeps what arrived. */
  const fetchAll = (url: string, file: string) => new Promise<{ status: number; broken: boolean }>((resolve, reject) => {
    request(url, { headers: { authorization: alice } }, (res) => {
      const out = createWriteStream(file);
      pipeline(res, out).then(() => resolve({ status: res.statusCode ?? 0, broken: false }), () => resolve({ status: res.statusCode ?? 0, broken: true }));
    }).on('error', reject).end();
  });

  for (const [damage, how] of [
    ['shorter than stored (truncated on disk)', async (path: string) => truncate(path, 1_000_000)],
    ['changed on disk (same size, other bytes)', async (path: string) => {
      const handle = await open(path, 'r+');
      await handle.write(Buffer.from('corrupt'), 0, 7, 2_500_000);
      await handle.close();
    }],
  ] as const) {
    it(`a member ${damage}: the client sees a broken transfer, and zipfile refuses what arrived`, async () => {
      const path = await blobFile('b.bin');
      const original = await readFile(path);
      await how(path);
      try {
        const file = join(dir, 'broken.zip');
        const { status, broken } = await fetchAll(`${s.home('alice', 'set')}?download=zip`, file);
        assert.equal(status, 200, 'the failure comes after the status line');
        assert.equal(broken, true, 'the transfer is cut, not ended');
        await assert.rejects(pythonRead(file, dir), 'zipfile refuses the partial archive');
      } finally {
        await writeFile(path, original);
      }
      // With the bytes back in place the same archive is whole.
      const file = join(dir, 'whole.zip');
      assert.deepEqual((await fetchAll(`${s.home('alice', 'set')}?download=zip`, file)), { status: 200, broken: false });
      assert.equal((await pythonRead(file, dir)).size, 4);
    });
  }
});

describe('archives past the classic ZIP bounds', () => {
  let s: TestServer;
  let alice: string;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-archives-'));
    s = await startTestServer({ 'archives.max_entries': 100_000 });
    alice = await s.bearer('alice');
  });
  after(async () => {
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('more than 65,535 members: Zip64 end records, every member read back with the catalog\'s SHA-256', { timeout: 15 * 60_000 }, async () => {
    const actor = await s.deps.backend.actorFor('alice');
    const base = '/tz/home/alice/many';
    assert.equal((await mkdirAt(s, alice, base)).status, 200);
    const total = 65_600;
    let next = 0;
    // NOTE: in process, many at a time, so the catalog's commits share their flushes.
    await Promise.all(Array.from({ length: 32 }, async () => {
      for (let i = next++; i < total; i = next++) {
        await s.deps.backend.uploadAs(actor, parsePath(`${base}/f${String(i).padStart(5, '0')}`), Readable.from([Buffer.from(`member ${i}\n`)]), { overwrite: false });
      }
    }));
    const file = join(dir, 'many.zip');
    const res = await download(`${s.home('alice', 'many')}?download=zip`, file, { authorization: alice });
    assert.equal(res.status, 200);
    const read = await pythonRead(file, dir);
    const want = await expected(s, base, 'many/');
    want.set('many/', null);
    assert.equal(read.size, total + 1);
    assert.deepEqual(read, want);
    sevenZipTest(file);
  });

  it('a member over 4 GiB: Zip64 sizes and offsets, read back with its SHA-256', { timeout: 15 * 60_000 }, async () => {
    // A sparse file of zeros on the fs resource, committed as an object with its real checksum.
    const size = 4 * 1024 ** 3 + 12345;
    const blob = '00big00000000000000000000000000000000';
    const blobDir = join(s.dataDir, 'resource', 'blobs', blob.slice(0, 2));
    await mkdir(blobDir, { recursive: true });
    await truncate(await touch(join(blobDir, blob)), size);
    const hash = createHash('sha256');
    const zeros = Buffer.alloc(1 << 22);
    for (let left = size; left > 0; left -= Math.min(left, zeros.length)) hash.update(left >= zeros.length ? zeros : zeros.subarray(0, left));
    const checksum = 'sha2:' + hash.digest('base64');
    assert.equal((await mkdirAt(s, alice, '/tz/home/alice/huge')).status, 200);
    await s.deps.catalog.commitObject({ path: parsePath('/tz/home/alice/huge/zeros.bin'), owner: 'alice', size, checksum, blob, now: new Date(), overwrite: false });
    assert.equal((await fetch(s.home('alice', 'huge/zz-after.txt'), {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'after the big one',
    })).status, 200);
    const file = join(dir, 'huge.zip');
    try {
      const res = await download(`${s.home('alice', 'huge')}?download=zip`, file, { authorization: alice });
      assert.equal(res.status, 200);
      const read = await pythonRead(file, dir);
      assert.deepEqual(read, new Map([['huge/', null], ...(await expected(s, '/tz/home/alice/huge', 'huge/'))]));
      assert.equal(read.get('huge/zeros.bin'), hex(checksum));
      assert.ok(read.has('huge/zz-after.txt'), 'a member whose header lies past 4 GiB (a Zip64 offset)');
    } finally {
      await rm(file, { force: true });
    }
  });
});

async function touch(path: string): Promise<string> {
  await (await open(path, 'w')).close();
  return path;
}

function mkdirAt(s: TestServer, authorization: string, path: string): Promise<Response> {
  return fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ path }) });
}
