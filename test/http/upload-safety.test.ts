/**
 * Uploads lose nothing and never show half-written data: a client that disconnects, a reader
 * racing an overwrite, small objects kept in the catalog, a server killed with SIGKILL mid-upload, and the memory an upload
 * costs (a real `lading serve` process, measured from /proc, not timed).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { DatabaseSync } from 'node:sqlite';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { lading, spawnServe, stopProcess } from '../helpers/process.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

/** Sends headers and part of a body, then cuts the connection. */
async function partialUpload(url: string, auth: string, declared: number, sent: number): Promise<void> {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`PUT ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 9);
  for (let n = 0; n < sent; n += chunk.length) {
    if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve));
  }
  await sleep(100);
  socket.destroy();
}

describe('upload safety (in-process server)', () => {
  let s: TestServer;
  let alice: string;
  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
  });
  after(() => s.stop());

  it('a client that disconnects mid-upload leaves no object, no row, no blob and no temporary', async () => {
    await partialUpload(s.home('alice', 'cut.bin'), alice, 50 * 1024 * 1024, 4 * 1024 * 1024);
    let status = 0;
    for (let i = 0; i < 50; i++) {
      await sleep(50);
      status = (await fetch(s.home('alice', 'cut.bin'), { headers: { authorization: alice } })).status;
      if ((await filesUnder(join(s.dataDir, 'resource', 'tmp'))).length === 0) break;
    }
    assert.equal(status, 404);
    assert.deepEqual(await filesUnder(join(s.dataDir, 'resource', 'tmp')), []);
    assert.deepEqual(await filesUnder(join(s.dataDir, 'resource', 'blobs')), []);
    assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
  });

  it('a reader racing a force overwrite gets the whole old or the whole new content', async () => {
    const size = 8 * 1024 * 1024;
    const put = (fill: number) => fetch(`${s.home('alice', 'race.bin')}?force=true`, {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, fill),
    });
    assert.equal((await put(1)).status, 200);
    const reads: Promise<Buffer>[] = [];
    const writes: Promise<Response>[] = [];
    for (let i = 0; i < 6; i++) {
      reads.push(fetch(`${s.home('alice', 'race.bin')}?download=true`, { headers: { authorization: alice } }).then(async (r) => Buffer.from(await r.arrayBuffer())));
      writes.push(put(2 + (i % 2)));
    }
    for (const w of await Promise.all(writes)) assert.equal(w.status, 200);
    for (const body of await Promise.all(reads)) {
      assert.equal(body.length, size);
      const first = body[0]!;
      assert.ok(body.every((b) => b === first), 'one version, never a mix');
    }
    await s.deps.backend.settled();
    const blobs = await filesUnder(join(s.dataDir, 'resource', 'blobs'));
    const objects = (await s.deps.catalog.listChildren((await import('../../src/core/path.ts')).parsePath(`/${s.zone}/home/alice`))).filter((e) => e.kind === 'dataobject');
    assert.equal(blobs.length, objects.length, 'every replaced blob was removed');
  });

  it('small objects live in the catalog: no file, and an overwrite and the sweeper remove their bytes', async () => {
    const inlineRows = (): number => {
      const db = new DatabaseSync(join(s.dataDir, 'catalog.sqlite'), { readOnly: true });
      try {
        return Number((db.prepare('SELECT count(*) AS n FROM inline_blobs').get() as { n: number }).n);
      } finally {
        db.close();
      }
    };
    const before = inlineRows();
    const put = (body: Buffer, force = false): Promise<Response> => fetch(`${s.home('alice', 'small.txt')}${force ? '?force=true' : ''}`, {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body,
    });
    const blobsBefore = await filesUnder(join(s.dataDir, 'resource', 'blobs'));
    assert.equal((await put(Buffer.from('first small content\n'))).status, 200);
    assert.equal((await put(Buffer.alloc(64 * 1024, 7), true)).status, 200, 'the default limit, 64 KiB, is kept inline');
    await s.deps.backend.settled();
    assert.deepEqual(await filesUnder(join(s.dataDir, 'resource', 'blobs')), blobsBefore, 'no file for a small object');
    assert.equal(inlineRows(), before + 1, 'the replaced content is gone');
    const got = await fetch(`${s.home('alice', 'small.txt')}?download=true`, { headers: { authorization: alice, range: 'bytes=10-19' } });
    assert.equal(got.status, 206);
    assert.deepEqual(Buffer.from(await got.arrayBuffer()), Buffer.alloc(10, 7));

    // A small body written but never committed (an upload cut off between the two) is no row:
    // its bytes wait in memory for their commit, so a crash leaves only the tracked blob,
    // which the sweeper untracks, dropping the bytes too.
    await s.deps.catalog.trackBlob('leftover-00000001', new Date(Date.now() - 60_000));
    await s.deps.resource.write('leftover-00000001', Readable.from([Buffer.from('orphan')]));
    assert.equal(inlineRows(), before + 1, 'no row before the commit');
    assert.equal(await s.deps.resource.size('leftover-00000001'), 6);
    assert.equal(await s.deps.backend.sweep(new Date()), 1);
    assert.equal(await s.deps.resource.size('leftover-00000001'), null, 'the sweeper removes it');
    assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
  });

  it('tracks a large upload\'s blob until its commit, and never a small one\'s, whose bytes wait for the commit in memory', async () => {
    const catalog = s.deps.catalog;
    const track = catalog.trackBlob;
    const tracked: string[] = [];
    catalog.trackBlob = (blob, now, owner) => {
      tracked.push(blob);
      return track.call(catalog, blob, now, owner);
    };
    try {
      const put = (name: string, body: Buffer): Promise<Response> => fetch(s.home('alice', name), {
        method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body,
      });
      const small = randomBytes(1000);
      assert.equal((await put('tracked-small.bin', small)).status, 200);
      assert.deepEqual(tracked, [], 'a small upload is never tracked');
      assert.equal((await put('tracked-large.bin', randomBytes(100 * 1024))).status, 200);
      assert.equal(tracked.length, 1, 'a large upload is tracked');
      assert.deepEqual(await catalog.trackedBlobs(new Date(Date.now() + 1000)), [], 'and untracked by its commit');
      const got = await fetch(`${s.home('alice', 'tracked-small.bin')}?download=true`, { headers: { authorization: alice } });
      assert.equal(got.status, 200);
      assert.deepEqual(Buffer.from(await got.arrayBuffer()), small, 'its bytes came with its commit');
    } finally {
      catalog.trackBlob = track;
    }
  });

  it('concurrent uploads to one new path without force: one wins, the others get 409', async () => {
    const results = await Promise.all([1, 2, 3, 4].map((n) => fetch(s.home('alice', 'once.bin'), {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(1024 * 1024, n),
    })));
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses.filter((x) => x === 200).length, 1, `statuses ${statuses}`);
    assert.ok(statuses.every((x) => x === 200 || x === 409));
    assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
  });
});

describe('upload safety (a real lading serve process)', () => {
  let data: string;
  let child: ChildProcess | null = null;
  let url = '';

  async function serve(): Promise<ChildProcess> {
    const started = await spawnServe(data, { ...process.env, LADING_LOG_LEVEL: 'warn', LADING_ZONE: 'tz' });
    url = started.url;
    return started.proc;
  }

  async function login(): Promise<string> {
    const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'dave', password: 'dave-pw' }) });
    return `Bearer ${(await json(res)).Response.data.token}`;
  }

  before(async () => {
    data = await mkdtemp(join(tmpdir(), 'lading-crash-'));
    lading(['user', 'add', 'dave', '--data', data], { ...process.env, LADING_ZONE: 'tz' }, 'dave-pw\n');
  });
  after(async () => {
    child?.kill('SIGKILL');
    await rm(data, { recursive: true, force: true });
  });

  it('kill -9 mid-upload: nothing visible, and the next start removes the temporary', async () => {
    child = await serve();
    const auth = await login();
    const target = `${url}/api/registered/tz/home/dave/crash.bin`;
    const u = new URL(target);
    const socket = connect(Number(u.port), u.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    socket.write(`PUT ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`);
    socket.write(Buffer.alloc(8 * 1024 * 1024, 5));
    let temps: string[] = [];
    for (let i = 0; i < 100 && temps.length === 0; i++) {
      await sleep(50);
      temps = await filesUnder(join(data, 'resource', 'tmp'));
    }
    assert.equal(temps.length, 1, 'the upload is being written to a temporary');
    await stopProcess(child, 'SIGKILL');
    socket.destroy();

    child = await serve();
    assert.deepEqual(await filesUnder(join(data, 'resource', 'tmp')), [], 'the temporary is gone after restart');
    assert.deepEqual(await filesUnder(join(data, 'resource', 'blobs')), []);
    const auth2 = await login();
    assert.equal((await fetch(`${url}/api/registered/tz/home/dave/crash.bin`, { headers: { authorization: auth2 } })).status, 404);
    const catalog = createSqliteCatalog({ file: join(data, 'catalog.sqlite') });
    assert.deepEqual(await catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
    await catalog.close();
    await stopProcess(child);
    child = null;
  });

  it('a 512 MiB upload and download cost no more memory than a small one: the body is never held', async () => {
    child = await serve();
    const auth = await login();
    const status = () => readFile(`/proc/${child!.pid}/status`, 'utf8');
    const small = `${url}/api/registered/tz/home/dave/small.bin`;
    assert.equal((await fetch(small, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: 'x'.repeat(10 * 1024) })).status, 200);
    assert.equal(await (await fetch(`${small}?download=true`, { headers: { authorization: auth } })).text(), 'x'.repeat(10 * 1024));
    const baseline = Number(/VmHWM:\s+(\d+) kB/.exec(await status())![1]) * 1024;
    const big = `${url}/api/registered/tz/home/dave/big.bin`;
    const block = randomBytes(1024 * 1024);
    const blocks = 512;
    const expected = createHash('sha256');
    for (let i = 0; i < blocks; i++) expected.update(block);
    const uploaded = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(big);
      const req = request({
        host: u.hostname, port: u.port, path: u.pathname, method: 'PUT',
        headers: { authorization: auth, 'content-type': 'application/octet-stream', 'content-length': blocks * block.length },
      }, (res) => {
        let text = '';
        res.on('data', (c) => { text += String(c); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      let sent = 0;
      const pump = () => {
        while (sent < blocks) {
          sent++;
          if (!req.write(block)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.equal(uploaded.status, 200, uploaded.body);
    const expectedDigest = expected.digest('base64');
    assert.equal(JSON.parse(uploaded.body).Response.data.checksum, 'sha2:' + expectedDigest);
    const total = blocks * block.length;
    const dl = await fetch(`${big}?download=true`, { headers: { authorization: auth } });
    const got = createHash('sha256');
    let n = 0;
    for await (const c of dl.body!) { got.update(c); n += c.length; }
    assert.equal(n, total);
    const peak = Number(/VmHWM:\s+(\d+) kB/.exec(await status())![1]) * 1024;
    assert.equal(got.digest('base64'), expectedDigest);
    // NOTE: the growth allowed is a fraction of the body: consumed chunks wait for V8's
    // external-memory collection threshold (about 64 MiB), whatever the body's size.
    const growth = peak - baseline;
    assert.ok(growth < 128 * 1024 * 1024, `peak RSS grew by ${Math.round(growth / 1048576)} MiB (from ${Math.round(baseline / 1048576)} MiB) for a ${total / 1048576} MiB transfer`);
    await stopProcess(child);
    child = null;
  });
});

