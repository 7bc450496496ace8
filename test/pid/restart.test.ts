/**
 * A registration job interrupted by SIGKILL runs again at the next start, and the object still
 * gets exactly one PID (a real `lading serve` process, and a test double of a Handle.net
 * server that holds the first write so the process dies mid-job).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHandleDouble } from './handle-double.ts';
import { json } from '../helpers/server.ts';
import { lading, spawnServe, stopProcess } from '../helpers/process.ts';

describe('PID jobs across a crash', () => {
  let child: ChildProcess | null = null;
  const cleanup: (() => Promise<unknown>)[] = [];
  after(async () => {
    child?.kill('SIGKILL');
    for (const c of cleanup.reverse()) await c();
  });

  it('a job interrupted by kill -9 runs again on the next start; the object is registered once', async () => {
    const data = await mkdtemp(join(tmpdir(), 'lading-pidcrash-'));
    cleanup.push(() => rm(data, { recursive: true, force: true }));
    const double = await startHandleDouble('300:21.T33333/ADMIN', 'handle-pw');
    cleanup.push(() => double.close());
    await writeFile(join(data, 'rules.txt'), 'object.created /tz/** pid.register\n');
    const env = {
      ...process.env, LADING_ZONE: 'tz', LADING_LOG_LEVEL: 'warn', LADING_PID_RULES: join(data, 'rules.txt'),
      LADING_PID_PROVIDER: 'handle', LADING_PID_PREFIX: '21.T33333', LADING_PID_HANDLE_URL: double.url,
      LADING_PID_HANDLE_USER: '300:21.T33333/ADMIN', LADING_PID_HANDLE_PASSWORD: 'handle-pw',
    };
    lading(['user', 'add', 'erin', '--data', data], env, 'erin-pw\n');
    const serve = () => spawnServe(data, env);
    const login = async (url: string) => `Bearer ${(await json(await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'erin', password: 'erin-pw' }) }))).Response.data.token}`;

    double.hold(1);
    let { proc, url } = await serve();
    child = proc;
    const res = await fetch(`${url}/api/registered/tz/home/erin/once.dat`, {
      method: 'PUT', headers: { authorization: await login(url), 'content-type': 'application/octet-stream' }, body: 'registered once',
    });
    assert.equal(res.status, 200);
    for (let i = 0; i < 200 && double.held() === 0; i++) await sleep(25);
    assert.equal(double.held(), 1, 'the registration job is running');
    await stopProcess(proc, 'SIGKILL');
    double.release();

    ({ proc, url } = await serve());
    child = proc;
    const auth = await login(url);
    let pid: string | null = null;
    for (let i = 0; i < 200 && !pid; i++) {
      await sleep(50);
      pid = (await json(await fetch(`${url}/api/registered/tz/home/erin/once.dat`, { headers: { authorization: auth } }))).Response.data[0]['once.dat'].metadata.PID;
    }
    assert.match(pid ?? '', /^21\.T33333\//);
    assert.deepEqual([...double.records.keys()], [pid], 'one handle, the one in the object\'s metadata');
    assert.ok(double.writes.length >= 2 && double.writes.every((w) => w.handle === pid), 'the job ran again with the same handle');
    const jobs = lading(['jobs', '--data', data], env);
    assert.match(jobs, /\tdone\t2\t/, `lading jobs shows the job done after two attempts:\n${jobs}`);
    await stopProcess(proc);
    child = null;
  });
});
