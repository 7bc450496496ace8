/**
 * The real tus client (tus-js-client, in Node) uploads 256 MiB through a TCP relay to real
 * `lading serve` processes and is interrupted twice: once the relay cuts its connection in the
 * middle of a PATCH, once the node serving it is killed with SIGKILL. It resumes each time and
 * finishes with the file's SHA-256 and exactly one PID.
 *
 * - On one node with the embedded defaults (SQLite catalog, files on disk): after kill -9 the
 *   node is started again on the same data directory, and the client resumes on it.
 * - On two nodes sharing a PostgreSQL catalog and an S3 bucket: after kill -9 of the first, the
 *   relay sends the client to the second, which resumes the upload the first had begun (that
 *   test needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; it skips without them,
 *   except under CI, where that fails).
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { cleanEnv } from '../cli/run-lading.ts';
import { lading, spawnServe, stopProcess } from '../helpers/process.ts';
import { json } from '../helpers/server.ts';
import { emptyS3Prefix } from '../helpers/cluster.ts';
import { Relay, downloadHash, generateFile, tusUpload } from './tus-support.ts';

const MIB = 1024 * 1024;
const SIZE = 256 * MIB;
const ZONE = 'tz';
const PREFIX = '21.T55555';

async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
  const body = await json(res);
  assert.equal(res.status, 200, JSON.stringify(body));
  return `Bearer ${body.Response.data.token}`;
}

/** The upload's state once complete, waiting for its PID. */
async function completed(url: string, authorization: string) {
  const res = await fetch(`${url}?pid_await=true`, { headers: { authorization } });
  const body = await json(res);
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.Response.data as { state: string; offset: number; path: string; object: { link: string; metadata: { PID: string | null; checksum: string } } };
}

describe('tus-js-client: 256 MiB, a cut connection and kill -9, on one node (SQLite, files)', { timeout: 240_000 }, () => {
  let dir: string;
  let data: string;
  let env: NodeJS.ProcessEnv;
  let node: ChildProcess | undefined;
  let relay: Relay;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-tus-e2e-'));
    data = join(dir, 'data');
    await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/** pid.register\n`);
    env = cleanEnv({
      LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn', LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PREFIX: PREFIX,
      LADING_UPLOADS_LEASE: '3',
    });
    lading(['init', '--data', data], env);
    lading(['user', 'add', 'alice', '--data', data], env, 'alice-pw\n');
  });
  after(async () => {
    await relay?.close();
    if (node) await stopProcess(node, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('resumes after each interruption and ends with the file\'s SHA-256 and one PID', async (t) => {
    const file = join(dir, 'big.bin');
    const sha256 = await generateFile(file, SIZE);
    let started = await spawnServe(data, env);
    node = started.proc;
    relay = new Relay(started.url);
    const base = await relay.listen();
    const auth = await login(base);
    let killedAt = 0;
    relay.triggers.push({ at: 64 * MIB, action: 'cut' });
    relay.triggers.push({
      at: 160 * MIB,
      action: async (bytes) => {
        killedAt = bytes;
        await stopProcess(started.proc, 'SIGKILL');
        // The node comes back on the same data directory, at another port.
        started = await spawnServe(data, env);
        node = started.proc;
        relay.switchTo(started.url);
      },
    });

    const run = await tusUpload(file, `${base}/api/uploads`, auth, { filename: 'big.bin', filetype: 'application/octet-stream' });
    t.diagnostic(`killed after ${(killedAt / MIB).toFixed(1)} MiB; resumed at ${run.resumedAt.map((o) => (o / MIB).toFixed(1)).join(', ')} MiB; ${(relay.sent / MIB).toFixed(1)} MiB sent; ${run.statuses.join(', ')}`);
    assert.equal(relay.cuts, 1, 'the connection was cut once');
    assert.ok(killedAt > 0, 'the node was killed mid-upload');
    assert.equal(run.statuses.filter((s) => s.startsWith('POST')).length, 1, `one upload was created: ${run.statuses.join(', ')}`);
    assert.ok(run.resumedAt.length >= 2 && run.resumedAt.every((offset) => offset > 0), `the client resumed twice, each time past 0: ${run.resumedAt.join(', ')}`);
    assert.ok(relay.sent < SIZE + 140 * MIB, `each interruption cost at most what was in flight (${(relay.sent / MIB).toFixed(0)} MiB sent)`);

    const state = await completed(run.url, auth);
    assert.equal(state.state, 'complete');
    assert.equal(state.offset, SIZE);
    assert.equal(state.object.metadata.checksum, `sha2:${sha256}`);
    assert.equal(await downloadHash(`${state.object.link}?download=true`, auth), sha256);
    const pid = state.object.metadata.PID;
    assert.ok(pid?.startsWith(`${PREFIX}/`), `a PID: ${pid}`);
    const handle = await fetch(`${base}/api/handles/${pid}`);
    assert.equal(handle.status, 200);

    await stopProcess(started.proc);
    node = undefined;
    const db = new DatabaseSync(join(data, 'catalog.sqlite'), { readOnly: true });
    try {
      assert.deepEqual(db.prepare('SELECT handle FROM handles').all().map((r) => r.handle), [pid], 'the handle service holds one record');
      assert.deepEqual(db.prepare(`SELECT state FROM jobs`).all().map((r) => r.state), ['done'], 'one PID job ran');
    } finally {
      db.close();
    }
    assert.deepEqual(await readdir(join(data, 'resource', 'staging')), [], 'nothing is left staged');
  });
});

const pgUrl = process.env.LADING_TEST_PG_URL;
const s3 = {
  endpoint: process.env.LADING_TEST_S3_ENDPOINT, bucket: process.env.LADING_TEST_S3_BUCKET,
  key: process.env.LADING_TEST_S3_ACCESS_KEY, secret: process.env.LADING_TEST_S3_SECRET_KEY, region: process.env.LADING_TEST_S3_REGION,
};
const missing: string[] = [];
if (!pgUrl) missing.push('PostgreSQL (LADING_TEST_PG_URL: `source .ci/services/postgres.sh`)');
if (!s3.endpoint || !s3.bucket || !s3.key || !s3.secret || !s3.region) missing.push('S3 (LADING_TEST_S3_*: `source .ci/services/swift.sh`)');
const TITLE = 'tus-js-client: 256 MiB, a cut connection and kill -9, resumed on a second node (PostgreSQL, S3)';

if (missing.length > 0) {
  const message = `${TITLE} needs ${missing.join(' and ')}.`;
  if (process.env.CI) test(TITLE, () => assert.fail(message));
  else test(TITLE, { skip: message }, () => {});
} else {
  describe(TITLE, { timeout: 300_000 }, () => {
    const schema = `lading_test_tus_${randomBytes(4).toString('hex')}`;
    const prefix = `${schema}/`;
    const s3client = new S3Client({
      endpoint: s3.endpoint!, region: s3.region!, forcePathStyle: true, credentials: { accessKeyId: s3.key!, secretAccessKey: s3.secret! },
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const query = async (sql: string) => {
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      try {
        return (await pool.query(sql)).rows;
      } finally {
        await pool.end();
      }
    };
    let dir: string;
    let env: NodeJS.ProcessEnv;
    const nodes: ChildProcess[] = [];
    let relay: Relay;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-tus-2n-'));
      await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/** pid.register\n`);
      env = cleanEnv({
        LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn', LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PREFIX: PREFIX,
        LADING_UPLOADS_LEASE: '3',
        LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: pgUrl!, LADING_CATALOG_SCHEMA: schema,
        LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: s3.endpoint!, LADING_RESOURCE_S3_BUCKET: s3.bucket!,
        LADING_RESOURCE_S3_REGION: s3.region!, LADING_RESOURCE_S3_PREFIX: prefix,
        LADING_RESOURCE_S3_ACCESS_KEY_ID: s3.key!, LADING_RESOURCE_S3_SECRET_ACCESS_KEY: s3.secret!,
      });
    });
    after(async () => {
      await relay?.close();
      for (const n of nodes) await stopProcess(n, 'SIGKILL');
      await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await emptyS3Prefix(s3client, s3.bucket!, prefix);
      s3client.destroy();
      await rm(dir, { recursive: true, force: true });
    });

    it('resumes on the second node after kill -9 of the first and ends with the file\'s SHA-256 and one PID', async (t) => {
      const file = join(dir, 'big.bin');
      const sha256 = await generateFile(file, SIZE);
      // NOTE: node 1 creates the schema, the CA and the master key; node 2 gets copies of
      // <data>/ca and <data>/keys, as a deployment provisions them.
      const [data1, data2] = [join(dir, 'node1'), join(dir, 'node2')];
      const first = await spawnServe(data1, env);
      nodes.push(first.proc);
      await mkdir(data2, { recursive: true, mode: 0o700 });
      await cp(join(data1, 'ca'), join(data2, 'ca'), { recursive: true });
      await cp(join(data1, 'keys'), join(data2, 'keys'), { recursive: true });
      const second = await spawnServe(data2, env);
      nodes.push(second.proc);
      lading(['user', 'add', 'alice', '--data', data1], env, 'alice-pw\n');

      relay = new Relay(first.url);
      const base = await relay.listen();
      const auth = await login(base);
      let killedAt = 0;
      relay.triggers.push({ at: 64 * MIB, action: 'cut' });
      relay.triggers.push({
        at: 160 * MIB,
        action: async (bytes) => {
          killedAt = bytes;
          await stopProcess(first.proc, 'SIGKILL');
          relay.switchTo(second.url);
        },
      });

      const run = await tusUpload(file, `${base}/api/uploads`, auth, { filename: 'big.bin' });
      t.diagnostic(`killed after ${(killedAt / MIB).toFixed(1)} MiB; resumed at ${run.resumedAt.map((o) => (o / MIB).toFixed(1)).join(', ')} MiB; ${(relay.sent / MIB).toFixed(1)} MiB sent; ${run.statuses.join(', ')}`);
      assert.equal(relay.cuts, 1, 'the connection was cut once');
      assert.ok(killedAt > 0, 'the first node was killed mid-upload');
      assert.equal(run.statuses.filter((s) => s.startsWith('POST')).length, 1, `one upload was created: ${run.statuses.join(', ')}`);
      assert.ok(run.resumedAt.length >= 2 && run.resumedAt.every((offset) => offset > 0), `the client resumed twice, each time past 0: ${run.resumedAt.join(', ')}`);

      const state = await completed(run.url, auth);
      assert.equal(state.state, 'complete');
      assert.equal(state.offset, SIZE);
      assert.equal(state.object.metadata.checksum, `sha2:${sha256}`);
      assert.equal(await downloadHash(`${second.url}/api/registered${state.path}?download=true`, auth), sha256);
      const pid = state.object.metadata.PID;
      assert.ok(pid?.startsWith(`${PREFIX}/`), `a PID: ${pid}`);
      assert.deepEqual((await query(`SELECT handle FROM "${schema}".handles`)).map((r) => r.handle), [pid], 'the handle service holds one record');
      assert.deepEqual((await query(`SELECT state FROM "${schema}".jobs`)).map((r) => r.state), ['done'], 'one PID job ran');
      const left = await s3client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket!, Prefix: prefix }));
      assert.deepEqual(left.Uploads ?? [], [], 'no multipart upload is left');
      const objects = await s3client.send(new ListObjectsV2Command({ Bucket: s3.bucket!, Prefix: prefix }));
      assert.equal((objects.Contents ?? []).filter((o) => o.Key!.includes('.tail-')).length, 0, 'no tail object is left');
    });
  });
}
