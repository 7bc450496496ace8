/**
 * Share links as someone without an account uses them: the real `curl` (a subprocess, never
 * given a token) against a running node with PID rules. A download link serves the whole
 * object, a range and the file name, and is refused the moment it is revoked; an expiring link
 * is refused once it expired (the node's clock is moved); a password-protected link takes
 * `curl -u :PASSWORD`; a drop box takes `curl -T` and `curl -F`, and what it stored belongs to
 * the link's owner, who sees it with a PID.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parsePath } from '../../src/core/path.ts';
import type { Clock } from '../../src/core/ports.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

interface Curl { code: number | null; stdout: string; stderr: string }

describe('share links with curl, without an account', () => {
  let s: TestServer;
  let alice: string;
  let cwd: string;
  const clock = new OffsetClock();
  const content = '>chr1\nACGTACGTACGTACGTACGT\n';

  /** Runs curl in `cwd`; asynchronous, since the server answering it runs in this process. */
  const curl = (...args: string[]): Promise<Curl> => new Promise((resolve) => {
    const child = spawn('curl', ['-sS', ...args], { cwd, timeout: 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += String(c); });
    child.stderr.on('data', (c) => { stderr += String(c); });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  /** The status curl got, with the body saved to `file`. */
  const status = async (file: string, ...args: string[]): Promise<number> => {
    const run = await curl('-o', file, '-w', '%{http_code}', ...args);
    assert.equal(run.code, 0, run.stderr);
    return Number(run.stdout);
  };
  const link = async (body: Record<string, unknown>): Promise<{ id: string; url: string }> => {
    const res = await fetch(`${s.url}/api/shares`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const made = await json(res);
    assert.equal(res.status, 201, JSON.stringify(made));
    return made.Response.data as { id: string; url: string };
  };

  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'lading-curl-'));
    await writeFile(join(cwd, 'rules.txt'), 'object.created /tz/home/** pid.register\n');
    s = await startTestServer({ 'pid.rules': join(cwd, 'rules.txt') }, { overrides: { clock } });
    alice = await s.bearer('alice');
    for (const dir of ['study', 'incoming']) {
      await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/tz/home/alice/${dir}` }) });
    }
    const put = await fetch(s.home('alice', 'study/genome.fa'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: content });
    assert.equal(put.status, 200);
  });
  after(async () => {
    await s?.stop();
    await rm(cwd, { recursive: true, force: true });
  });

  it('downloads through a link, a range with 206, under the object\'s name; refused (404) the moment the link is revoked', async () => {
    const l = await link({ path: '/tz/home/alice/study/genome.fa', kind: 'read' });
    const whole = await curl('--fail-with-body', l.url);
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(whole.stdout, content);
    assert.equal(await status('range.out', '-H', 'Range: bytes=6-13', l.url), 206);
    assert.equal(await readFile(join(cwd, 'range.out'), 'utf8'), 'ACGTACGT');
    const named = await curl('--fail-with-body', '-O', '-J', l.url);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(await readFile(join(cwd, 'genome.fa'), 'utf8'), content);

    const revoked = await fetch(`${s.url}/api/shares/${l.id}`, { method: 'DELETE', headers: { authorization: alice } });
    assert.equal(revoked.status, 200);
    assert.equal(await status('revoked.out', l.url), 404);
    assert.match(await readFile(join(cwd, 'revoked.out'), 'utf8'), /"Not found"/);
  });

  it('refuses (410) a link once it expired', async () => {
    const l = await link({ path: '/tz/home/alice/study', kind: 'read', expires_in: 60 });
    assert.equal(await status('before.out', `${l.url}/genome.fa`), 200);
    assert.equal(await readFile(join(cwd, 'before.out'), 'utf8'), content);
    clock.offsetMs += 60_000;
    try {
      assert.equal(await status('after.out', `${l.url}/genome.fa`), 410);
      assert.match(await readFile(join(cwd, 'after.out'), 'utf8'), /"Gone":"This link expired/);
    } finally {
      clock.offsetMs -= 60_000;
    }
  });

  it('takes the password of a protected link with curl -u :PASSWORD, and asks for it without', async () => {
    const l = await link({ path: '/tz/home/alice/study/genome.fa', kind: 'read', password: 's3cret pass' });
    const asked = await curl('-D', '-', '-o', 'asked.out', l.url);
    assert.match(asked.stdout, /^HTTP\/1\.1 401/);
    assert.match(asked.stdout, /^www-authenticate: Basic realm="lading share link"/im);
    assert.equal(await status('wrong.out', '-u', ':wrong', l.url), 401);
    const given = await curl('--fail-with-body', '-u', ':s3cret pass', l.url);
    assert.equal(given.code, 0, given.stderr);
    assert.equal(given.stdout, content);
  });

  it('deposits into a drop box with curl -T and curl -F; the owner sees the objects as hers, with PIDs', async () => {
    const l = await link({ path: '/tz/home/alice/incoming', kind: 'upload' });
    await writeFile(join(cwd, 'results.csv'), 'sample,value\nA,1\n');
    await writeFile(join(cwd, 'notes.txt'), 'measured on 2026-05-04\n');
    const put = await curl('--fail-with-body', '-T', 'results.csv', `${l.url}/`);
    assert.equal(put.code, 0, put.stderr);
    assert.equal(JSON.parse(put.stdout).Response.data.filename, 'results.csv');
    const form = await curl('--fail-with-body', '-F', 'file=@notes.txt', l.url);
    assert.equal(form.code, 0, form.stderr);
    assert.equal(JSON.parse(form.stdout).Meta.status, 201);
    assert.equal(await status('again.out', '-T', 'results.csv', `${l.url}/`), 409);
    assert.equal(await status('list.out', l.url), 403, 'a drop box does not list');

    for (const name of ['results.csv', 'notes.txt']) {
      const entity = await s.deps.catalog.getEntity(parsePath(`/tz/home/alice/incoming/${name}`));
      assert.equal(entity?.owner, 'alice', `${name} belongs to the link's owner`);
      let pid: string | null = null;
      for (let i = 0; i < 100 && pid === null; i++) {
        const meta = await json(await fetch(s.home('alice', `incoming/${name}`), { headers: { authorization: alice } }));
        pid = meta.Response.data[0][name].metadata.PID as string | null;
        if (pid === null) await sleep(100);
      }
      assert.match(pid ?? '', /^21\.T99999\//, `${name} has a PID`);
    }
    assert.equal(await (await fetch(`${s.home('alice', 'incoming/results.csv')}?download=true`, { headers: { authorization: alice } })).text(), 'sample,value\nA,1\n');
  });
});
