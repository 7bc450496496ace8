/**
 * One `lading serve` owns a data directory with the SQLite catalog: a second one on the same
 * directory (on another port) exits non-zero with one line naming the holder's pid, before it
 * recovers anything, so an upload in flight on the first completes; admin commands keep
 * working beside the running server; the lock goes with the process that held it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnServe, stopProcess } from '../helpers/process.ts';
import { json } from '../helpers/server.ts';
import { cleanEnv, oneLineError, runLading, slowUpload } from './run-lading.ts';

describe('a data directory has one server', () => {
  let data = '';
  after(() => rm(data, { recursive: true, force: true }));

  it('refuses a second serve in one line naming the holder, and the first one\'s upload completes', async () => {
    data = await mkdtemp(join(tmpdir(), 'lading-lock-'));
    assert.equal((await runLading(['user', 'add', 'ann', '--data', data], { input: 'ann-pw\n' })).code, 0);
    const first = await spawnServe(data, cleanEnv({ LADING_LOG_LEVEL: 'warn' }));
    try {
      const login = await fetch(`${first.url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'ann', password: 'ann-pw' }) });
      const token = (await json(login)).Response.data.token as string;
      const chunk = Buffer.alloc(1024 * 1024, 42);
      const total = 20;
      const upload = slowUpload(`${first.url}/api/registered/lading/home/ann/slow1.bin`, token, chunk, total);
      await upload.started;
      await sleep(200);

      const second = await runLading(['serve', '--data', data, '--listen', '127.0.0.1:0']);
      assert.equal(oneLineError(second, 1, new RegExp(`in use by another lading serve \\(pid ${first.proc.pid}\\)`)), null);

      // Admin commands that write do not take the lock.
      assert.equal((await runLading(['group', 'add', 'team', '--data', data])).stdout, 'created group team\n');

      upload.resume();
      const { status, body } = await upload.done;
      assert.equal(status, 200, body);
      const expected = createHash('sha256');
      for (let i = 0; i < total; i++) expected.update(chunk);
      assert.equal(JSON.parse(body).Response.data.checksum, `sha2:${expected.digest('base64')}`);
    } finally {
      await stopProcess(first.proc);
    }
    // The lock went with the process: the directory can be served again.
    const again = await spawnServe(data, cleanEnv({ LADING_LOG_LEVEL: 'warn' }));
    await stopProcess(again.proc);
  });

  it('lets a server take over the directory of one killed with SIGKILL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lading-lock-kill-'));
    try {
      const killed = await spawnServe(dir, cleanEnv({ LADING_LOG_LEVEL: 'warn' }));
      await stopProcess(killed.proc, 'SIGKILL');
      const next = await spawnServe(dir, cleanEnv({ LADING_LOG_LEVEL: 'warn' }));
      await stopProcess(next.proc);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
