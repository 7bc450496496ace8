/**
 * The port of ceph/s3-tests (`ceph/` here: the cases about the operations lading serves, run
 * as a peer suite by `run_port.py` with boto3 under /usr/bin/python3) against one lading node
 * on the embedded defaults. "New buckets" are the homes of pooled users the main user may
 * write (lading's buckets are homes). Every case that passed once must keep passing: the list
 * of those is `ceph/passing.txt`, and this test fails on any of them failing; the counts and the
 * reasons of the others are printed (and kept in `ceph/RESULTS.md`).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePath } from '../../src/core/path.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeKey, run } from './s3-clients-suite.ts';

const POOL = 420;
let server: TestServer;
let env: Record<string, string>;

before(async () => {
  server = await startTestServer({ 's3.listen': '127.0.0.1:0', zone: 'lading' });
  const alice = await server.bearer('alice');
  const bob = await server.bearer('bob');
  const main = await makeKey(server.url, alice);
  const alt = await makeKey(server.url, bob);
  const buckets: string[] = [];
  for (let i = 1; i <= POOL; i++) {
    const name = `cephb${String(i).padStart(4, '0')}`;
    await server.deps.backend.addUser(name);
    await server.deps.catalog.setAccess(parsePath(`/lading/home/${name}`), 'alice', 'own');
    buckets.push(name);
  }
  env = {
    S3_URL: server.s3Url!, AWS_ACCESS_KEY_ID: main.id, AWS_SECRET_ACCESS_KEY: main.secret, ALT_ACCESS_KEY_ID: alt.id, ALT_SECRET_ACCESS_KEY: alt.secret,
    S3_BUCKETS: buckets.join(','), MAIN_USER: 'alice', ALT_USER: 'bob', HOME: server.dataDir,
  };
});
after(async () => {
  await server?.stop();
});

it('runs the ported ceph/s3-tests cases: every case that passed before still passes', { timeout: 1_200_000 }, async () => {
  const res = await run('/usr/bin/python3', [join(import.meta.dirname, 'ceph', 'run_port.py')], env);
  assert.equal(res.code, 0, res.stderr);
  const outcome = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as { passed: string[]; failed: Record<string, string>; skipped: Record<string, string> };
  const expected = (await readFile(join(import.meta.dirname, 'ceph', 'passing.txt'), 'utf8')).split('\n').filter((l) => l && !l.startsWith('#'));
  const total = outcome.passed.length + Object.keys(outcome.failed).length + Object.keys(outcome.skipped).length;
  console.log(`ceph/s3-tests port: ${outcome.passed.length} of ${total} passed, ${Object.keys(outcome.failed).length} failed, ${Object.keys(outcome.skipped).length} skipped`);
  for (const name of outcome.passed) console.log(`  passed ${name}`);
  for (const [name, why] of Object.entries(outcome.failed)) console.log(`  failed ${name}: ${why}`);
  for (const [name, why] of Object.entries(outcome.skipped)) console.log(`  skipped ${name}: ${why}`);
  const regressed = expected.filter((name) => !outcome.passed.includes(name));
  assert.deepEqual(regressed.map((name) => `${name}: ${outcome.failed[name] ?? outcome.skipped[name]}`), [], 'cases that passed before fail now');
});
