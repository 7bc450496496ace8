/**
 * Graceful shutdown: SIGTERM stops new connections but lets an upload in flight finish and be
 * committed, then the process exits 0 (a real `lading serve` process).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { parsePath } from '../../src/core/path.ts';
import { lading, spawnServe } from '../helpers/process.ts';
import { json } from '../helpers/server.ts';

describe('graceful shutdown', () => {
  let data = '';
  after(() => rm(data, { recursive: true, force: true }));

  it('lets an upload in flight finish, then exits 0', async () => {
    data = await mkdtemp(join(tmpdir(), 'lading-shutdown-'));
    const env = { ...process.env, LADING_ZONE: 'tz', LADING_LOG_LEVEL: 'warn' };
    lading(['user', 'add', 'gus', '--data', data], env, 'gus-pw\n');
    const { proc, url } = await spawnServe(data, env);
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    const token = (await json(await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'gus', password: 'gus-pw' }) }))).Response.data.token;
    const u = new URL(`${url}/api/registered/tz/home/gus/inflight.bin`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const total = 8;
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: u.hostname, port: u.port, path: u.pathname, method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': total * chunk.length },
      }, (res) => {
        let body = '';
        res.on('data', (c) => { body += String(c); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      void (async () => {
        for (let i = 0; i < total; i++) {
          req.write(chunk);
          if (i === 2) {
            proc.kill('SIGTERM');
            await sleep(300);
          }
          await sleep(50);
        }
        req.end();
      })();
    });
    const { status, body } = await answer;
    assert.equal(status, 200, body);
    assert.equal(await exited, 0);
    const catalog = createSqliteCatalog({ file: join(data, 'catalog.sqlite') });
    const object = await catalog.getEntity(parsePath('/tz/home/gus/inflight.bin'));
    await catalog.close();
    assert.equal(object?.kind === 'dataobject' && object.size, total * chunk.length);
  });
});
