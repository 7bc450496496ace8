/**
 * PID registration end to end: rules from a file, durable jobs, the embedded handle service,
 * `pid_await`, `/api/pids` and `/api/handles`, and the record following renames and
 * overwrites — through the HTTP API of a whole node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import type { PidProvider } from '../../src/core/ports.ts';
import type { HandleValues } from '../../src/core/types.ts';

const RULES = `
object.created      /tz/home/*/reg/**   pid.register
object.overwritten  /tz/home/*/reg/**   pid.update
object.renamed      /tz/home/**         pid.update
collection.renamed  /tz/home/**         pid.update
`;

/** Waits until no job is pending or running (fan-out jobs included). */
export async function settle(s: TestServer): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = (await s.deps.catalog.listJobs(null, 100_000)).filter((j) => j.state === 'pending' || j.state === 'running');
    if (open.length === 0) return;
    await s.deps.jobs.waitFor(open.map((j) => j.id), 10_000);
  }
  throw new Error('jobs did not settle');
}

describe('PID registration', () => {
  let dir: string;
  let s: TestServer;
  let auth: string;
  const put = (rest: string, body: string, query = '') => fetch(`${s.home('alice', rest)}${query}`, {
    method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body,
  });
  const mkdir = (rest: string) => fetch(`${s.url}/api/registered`, {
    method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/tz/home/alice/${rest}`, force: true }),
  });
  const rename = (rest: string, newname: string) => fetch(s.home('alice', rest), {
    method: 'PATCH', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ newname }),
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-rules-'));
    await writeFile(join(dir, 'rules.txt'), RULES);
    s = await startTestServer({ 'pid.rules': join(dir, 'rules.txt'), 'pid.prefix': '21.T11111', 'resource.fsync': false });
    auth = await s.bearer('alice');
    await mkdir('reg');
  });
  after(async () => {
    await s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('pid_await=true returns the PID; the record resolves to the link and checksum and downloads', async () => {
    const res = await put('reg/data.csv', 'a,b\n1,2\n', '?pid_await=true');
    assert.equal(res.status, 200);
    const up = (await json(res)).Response.data;
    assert.match(up.PID, /^21\.T11111\/[0-9a-f-]{36}$/);
    const meta = (await json(await fetch(s.home('alice', 'reg/data.csv'), { headers: { authorization: auth } }))).Response.data[0]['data.csv'];
    assert.equal(meta.metadata.PID, up.PID);
    const record = await json(await fetch(`${s.url}/api/pids/${up.PID}`));
    assert.equal(record.Meta.status, 200);
    assert.equal(record.Response.data.URL, s.home('alice', 'reg/data.csv'));
    assert.equal(record.Response.data['EUDAT/CHECKSUM'], up.checksum);
    assert.equal(record.Response.data['EUDAT/ROR'], up.PID);
    assert.ok(!Number.isNaN(Date.parse(record.Response.data['EUDAT/CHECKSUM_TIMESTAMP'])));
    const dl = await fetch(`${s.url}/api/pids/${up.PID}?download=true`, { headers: { authorization: auth } });
    assert.equal(dl.status, 200);
    assert.equal(await dl.text(), 'a,b\n1,2\n');
    assert.equal((await fetch(`${s.url}/api/pids/${up.PID}?download=true`)).status, 401, 'downloading needs a token');
    const head = await fetch(`${s.url}/api/pids/${up.PID}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    const handle = (await (await fetch(`${s.url}/api/handles/${up.PID}`)).json()) as { responseCode: number; handle: string; values: { index: number; type: string; data: { value: string } }[] };
    assert.equal(handle.responseCode, 1);
    assert.equal(handle.handle, up.PID);
    assert.deepEqual(handle.values.find((v) => v.type === 'URL'), { index: 1, type: 'URL', data: { format: 'string', value: s.home('alice', 'reg/data.csv') }, ttl: 86400 });
    const unknown = await fetch(`${s.url}/api/pids/21.T11111/no-such-thing`);
    assert.equal(unknown.status, 404);
    assert.equal((await json(unknown)).Meta.status, 404);
    assert.equal((await fetch(`${s.url}/api/handles/21.T11111/no-such-thing`)).status, 404);
    assert.equal((await fetch(`${s.url}/api/pids/not-a-pid`)).status, 400);
  });

  it('the PID survives a rename and an overwrite, and its record follows both', async () => {
    const up = (await json(await put('reg/move-me.txt', 'v1', '?pid_await=true'))).Response.data;
    assert.ok(up.PID);
    assert.equal((await rename('reg/move-me.txt', 'moved.txt')).status, 200);
    await settle(s);
    let record = (await json(await fetch(`${s.url}/api/pids/${up.PID}`))).Response.data;
    assert.equal(record.URL, s.home('alice', 'reg/moved.txt'));
    const over = (await json(await put('reg/moved.txt', 'v2', '?force=true&pid_await=true'))).Response.data;
    assert.equal(over.PID, up.PID, 'overwriting keeps the PID');
    assert.notEqual(over.checksum, up.checksum);
    record = (await json(await fetch(`${s.url}/api/pids/${up.PID}`))).Response.data;
    assert.equal(record['EUDAT/CHECKSUM'], over.checksum);
    assert.equal(await (await fetch(`${s.url}/api/pids/${up.PID}?download=true`, { headers: { authorization: auth } })).text(), 'v2');
  });

  it('pid_await answers at once with null where no rule matches', async () => {
    const started = Date.now();
    const up = (await json(await put('outside.txt', 'x', '?pid_await=true'))).Response.data;
    assert.equal(up.PID, null);
    assert.ok(Date.now() - started < 5000);
  });

  it('renaming a collection of 1,000 registered objects updates every record, without holding up the request', async () => {
    await mkdir('reg/big');
    const { parsePath } = await import('../../src/core/path.ts');
    const { Readable } = await import('node:stream');
    const cred = s.deps.sessions ? (await s.deps.sessions.authenticate(auth.slice('Bearer '.length))).credential : null;
    for (let i = 0; i < 1000; i++) {
      await s.deps.backend.upload(cred!, parsePath(`/tz/home/alice/reg/big/f${String(i).padStart(4, '0')}`), Readable.from([Buffer.from(`object ${i}`)]), { overwrite: false });
    }
    await settle(s);
    const before = await s.deps.catalog.listDescendants(parsePath('/tz/home/alice/reg/big'), 2000);
    assert.equal(before.length, 1000);
    assert.ok(before.every((e) => e.pid), 'all registered');
    assert.equal(new Set(before.map((e) => e.pid)).size, 1000);
    assert.equal((await rename('reg/big', 'renamed-big')).status, 200);
    await settle(s);
    const after = await s.deps.catalog.listDescendants(parsePath('/tz/home/alice/reg/renamed-big'), 2000);
    assert.equal(after.length, 1000);
    for (const e of after) {
      const values = (await s.deps.pids.resolve(e.pid!))!;
      assert.equal(values.URL, `${s.url}/api/registered${e.path}`);
    }
  });

  it('100 parallel uploads are each registered exactly once', async () => {
    await mkdir('reg/par');
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => put(`reg/par/p${i}`, `parallel ${i}`)));
    assert.ok(results.every((r) => r.status === 200));
    await settle(s);
    const { parsePath } = await import('../../src/core/path.ts');
    const objects = await s.deps.catalog.listDescendants(parsePath('/tz/home/alice/reg/par'), 1000);
    assert.equal(objects.length, 100);
    assert.equal(new Set(objects.map((e) => e.pid)).size, 100);
    for (const e of objects) assert.deepEqual((await s.deps.catalog.listMeta(e.path)).filter((m) => m.attribute === 'PID').length, 1);
    const jobs = await s.deps.catalog.listJobs(null, 100_000);
    assert.equal(jobs.filter((j) => j.state === 'failed').length, 0);
  });
});

describe('pid_await waits at most the configured time', () => {
  it('returns null when registration is slow, and registration finishes in the background', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-rules-'));
    await writeFile(join(dir, 'rules.txt'), 'object.created /tz/** pid.register\n');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const records = new Map<string, HandleValues>();
    const slow: PidProvider = {
      prefix: '21.T22222',
      async put(handle, values) { await gate; records.set(handle, values); },
      async resolve(handle) { return records.get(handle) ?? null; },
    };
    const s = await startTestServer({ 'pid.rules': join(dir, 'rules.txt'), 'pid.await_timeout': 1 }, { overrides: { pids: slow } });
    try {
      const auth = await s.bearer('bob');
      const started = Date.now();
      const res = await fetch(`${s.home('bob', 'slow.txt')}?pid_await=true`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: 'x' });
      const elapsed = Date.now() - started;
      assert.equal((await json(res)).Response.data.PID, null);
      assert.ok(elapsed >= 900, `waited ${elapsed} ms`);
      release();
      const { settle: done } = { settle };
      await done(s);
      const meta = (await json(await fetch(s.home('bob', 'slow.txt'), { headers: { authorization: auth } }))).Response.data[0]['slow.txt'];
      assert.match(meta.metadata.PID, /^21\.T22222\//);
    } finally {
      release();
      await s.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('without a rules file', () => {
  it('every PID is null and pid_await answers at once', async () => {
    const s = await startTestServer();
    try {
      const auth = await s.bearer('carol');
      const res = await fetch(`${s.home('carol', 'plain.txt')}?pid_await=true`, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: 'x' });
      assert.equal((await json(res)).Response.data.PID, null);
      const meta = (await json(await fetch(s.home('carol', 'plain.txt'), { headers: { authorization: auth } }))).Response.data[0]['plain.txt'];
      assert.equal(meta.metadata.PID, null);
      assert.deepEqual(await s.deps.catalog.listJobs(null, 10), []);
    } finally {
      await s.stop();
    }
  });

  it('an invalid rules file stops the start with a message naming the line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-rules-'));
    await writeFile(join(dir, 'bad.txt'), 'object.created /tz/** pid.register\nobject.deleted /tz/** pid.register\n');
    await assert.rejects(startTestServer({ 'pid.rules': join(dir, 'bad.txt') }), /bad\.txt: line 2: unknown event 'object\.deleted'/);
    await rm(dir, { recursive: true, force: true });
  });
});
