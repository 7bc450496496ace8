/**
 * A node on the SQLite catalog killed (-9) while a resumable upload's PATCH runs: the restarted
 * node holds the data directory's lock, so no other process can be appending, and the upload
 * resumes at once from its offset rather than waiting for the dead process's lease to run out.
 * A PATCH refused because another request holds the upload says when that lease ends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanEnv } from '../cli/run-lading.ts';
import { lading, spawnServe, stopProcess } from '../helpers/process.ts';
import { heldUpload, json } from '../helpers/server.ts';

const OFFSET_TYPE = 'application/offset+octet-stream';
const LENGTH = 300_000;

describe('a resumable upload across kill -9 of its node (SQLite)', () => {
  let dir: string;
  let data: string;
  let env: NodeJS.ProcessEnv;
  let node: ChildProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-tus-restart-'));
    data = join(dir, 'data');
    // NOTE: the default lease (60 s): a lease left behind would refuse every PATCH for a minute.
    env = cleanEnv({ LADING_ZONE: 'tz', LADING_LOG_LEVEL: 'warn', LADING_UPLOADS_CHECKPOINT_BYTES: '1024' });
    lading(['init', '--data', data], env);
    lading(['user', 'add', 'alice', '--data', data], env, 'alice-pw\n');
  });
  after(async () => {
    if (node) await stopProcess(node, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('resumes at once on the restarted node: the dead process\'s lease is released at start', async () => {
    let started = await spawnServe(data, env);
    node = started.proc;
    const login = await fetch(`${started.url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
    const auth = `Bearer ${(await json(login)).Response.data.token}`;
    const tus = { 'tus-resumable': '1.0.0', authorization: auth };
    const create = await fetch(`${started.url}/api/uploads`, {
      method: 'POST', headers: { ...tus, 'upload-length': String(LENGTH), 'upload-metadata': `filename ${Buffer.from('big.bin').toString('base64')}` },
    });
    assert.equal(create.status, 201);
    const path = new URL(create.headers.get('location')!).pathname;
    const offsetAt = async (base: string) => Number((await fetch(`${base}${path}`, { method: 'HEAD', headers: tus })).headers.get('upload-offset'));

    // A PATCH that sends part of its body and then stalls: its request holds the upload's lease.
    const held = heldUpload(`${started.url}${path}`, auth, {
      method: 'PATCH', contentLength: LENGTH, headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': OFFSET_TYPE },
    });
    held.answer.catch(() => {});
    await held.write(Buffer.alloc(100_000, 1));
    for (let i = 0; i < 100 && (await offsetAt(started.url)) < 100_000; i++) await sleep(50);
    assert.equal(await offsetAt(started.url), 100_000, 'the bytes sent are recorded');
    const busy = await fetch(`${started.url}${path}`, { method: 'PATCH', headers: { ...tus, 'upload-offset': '100000', 'content-type': OFFSET_TYPE }, body: Buffer.alloc(10, 2) });
    assert.equal(busy.status, 409, 'the running PATCH holds the upload');
    const retryAfter = Number(busy.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After gives the seconds left on the lease: ${busy.headers.get('retry-after')}`);

    await stopProcess(started.proc, 'SIGKILL');
    started = await spawnServe(data, env);
    node = started.proc;
    const offset = await offsetAt(started.url);
    assert.equal(offset, 100_000);
    const resumed = await fetch(`${started.url}${path}`, {
      method: 'PATCH', headers: { ...tus, 'upload-offset': String(offset), 'content-type': OFFSET_TYPE }, body: Buffer.alloc(LENGTH - offset, 3),
    });
    assert.equal(resumed.status, 204, `the upload resumes at once after the restart: ${await resumed.text()}`);
    assert.equal(resumed.headers.get('upload-offset'), String(LENGTH));
    const download = await fetch(`${started.url}/api/registered/tz/home/alice/big.bin?download=true`, { headers: { authorization: auth } });
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(Buffer.concat([Buffer.alloc(100_000, 1), Buffer.alloc(LENGTH - 100_000, 3)])));
  });
});
