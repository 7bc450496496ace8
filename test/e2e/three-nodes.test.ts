/**
 * The multi-node deployment end to end: three real `lading serve` processes on one PostgreSQL
 * catalog (a fresh schema) and one S3 store (Swift, a fresh key prefix), with nginx balancing
 * round-robin in front of them. Through nginx a user logs in, uploads, renames, registers a PID
 * with `pid_await`, and regenerates an expired proxy; every node sees each change at once. Then
 * one node is killed with SIGKILL in the middle of 20 concurrent uploads: what was answered 200
 * is intact on the others, nothing is half-visible, and the PID jobs the dead node had claimed
 * run on the survivors once their lease (`jobs.lease`) runs out.
 *
 * The nodes share what a deployment shares: the catalog, the bucket, and the CA and master key,
 * which node 1 creates and which are then copied into the data directories of nodes 2 and 3
 * (each node has its own data directory; nothing else in it is shared). PIDs go to a test double
 * of a Handle.net server, so that registration jobs can be held in flight while the node dies.
 *
 * Needs `.ci/services/postgres.sh`, `.ci/services/swift.sh` and nginx; skips without them,
 * except under CI, where that fails.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { S3Client } from '@aws-sdk/client-s3';
import { startHandleDouble, type HandleDouble } from '../pid/handle-double.ts';
import { json } from '../helpers/server.ts';
import { type Node, clusterServices, emptyS3Prefix, freePort, nginxConfig, startNode, stopProcess } from '../helpers/cluster.ts';

const root = join(import.meta.dirname, '..', '..');
const lading = join(root, 'bin', 'lading');
const ZONE = 'tz';
const PROXY_LIFETIME = 10;
const JOB_LEASE = 3;
const HANDLE_PREFIX = '21.T44444';

const { NGINX, pgUrl, s3, missing } = await clusterServices();

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();
const checksumOf = (data: Buffer) => `sha2:${sha256(data).toString('base64')}`;

if (missing.length > 0) {
  const message = `three nodes behind nginx need ${missing.join(', ')}.`;
  if (process.env.CI) test('three nodes behind nginx on PostgreSQL and S3', () => assert.fail(message));
  else test('three nodes behind nginx on PostgreSQL and S3', { skip: message }, () => {});
} else {
  describe('three nodes behind nginx on PostgreSQL and S3', { timeout: 170_000 }, () => {
    const schema = `lading_test_e2e_${randomBytes(4).toString('hex')}`;
    const prefix = `${schema}/`;
    const s3client = new S3Client({
      endpoint: s3.endpoint!, region: s3.region!, forcePathStyle: true,
      credentials: { accessKeyId: s3.key!, secretAccessKey: s3.secret! },
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
    });
    let dir: string;
    let double: HandleDouble;
    let nodes: Node[] = [];
    let nginx: ChildProcess | undefined;
    let nginxLog = '';
    let lb: string;
    let env: NodeJS.ProcessEnv;

    const home = (base: string, rest = '') => `${base}/api/registered/${ZONE}/home/alice${rest ? '/' + rest : ''}`;
    const login = async (base: string): Promise<string> => {
      const res = await fetch(`${base}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
      const body = await json(res);
      assert.equal(res.status, 200, `login at ${base}: ${JSON.stringify(body)}`);
      return `Bearer ${body.Response.data.token}`;
    };
    const download = async (base: string, auth: string, rest: string): Promise<{ status: number; body: Buffer }> => {
      const res = await fetch(`${home(base, rest)}?download=true`, { headers: { authorization: auth } });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    const metadata = async (base: string, auth: string, rest: string) => {
      const res = await fetch(home(base, rest), { headers: { authorization: auth } });
      const body = await json(res);
      assert.equal(res.status, 200, `metadata of ${rest} at ${base}: ${JSON.stringify(body)}`);
      const name = rest.split('/').at(-1)!;
      return body.Response.data[0][name].metadata as { PID: string | null; checksum: string };
    };
    const jobs = async (): Promise<{ id: string; state: string; lease_owner: string | null; attempts: number }[]> => {
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      try {
        return (await pool.query(`SELECT id::text, state, lease_owner, attempts FROM "${schema}".jobs ORDER BY id`)).rows;
      } finally {
        await pool.end();
      }
    };
    const diagnostics = () => nodes.map((n, i) => `--- node ${i + 1} (${n.url}):\n${n.log().slice(-3000)}`).join('\n') + `\n--- nginx:\n${nginxLog}`;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-e2e-'));
      double = await startHandleDouble(`300:${HANDLE_PREFIX}/ADMIN`, 'handle-pw');
      const lbPort = await freePort();
      lb = `http://127.0.0.1:${lbPort}`;
      await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/** pid.register\n`);
      env = {
        ...process.env, LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn',
        LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: pgUrl, LADING_CATALOG_SCHEMA: schema,
        LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: s3.endpoint, LADING_RESOURCE_S3_BUCKET: s3.bucket,
        LADING_RESOURCE_S3_REGION: s3.region, LADING_RESOURCE_S3_PREFIX: prefix,
        LADING_RESOURCE_S3_ACCESS_KEY_ID: s3.key, LADING_RESOURCE_S3_SECRET_ACCESS_KEY: s3.secret,
        LADING_PUBLIC_URL: lb, LADING_TRUST_PROXY: 'true',
        LADING_PROXY_LIFETIME: String(PROXY_LIFETIME), LADING_JOBS_LEASE: String(JOB_LEASE),
        LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PROVIDER: 'handle', LADING_PID_PREFIX: HANDLE_PREFIX,
        LADING_PID_HANDLE_URL: double.url, LADING_PID_HANDLE_USER: `300:${HANDLE_PREFIX}/ADMIN`, LADING_PID_HANDLE_PASSWORD: 'handle-pw',
      };
      // NOTE: node 1 alone first: it creates the schema (migrations), the CA and the master key;
      // nodes 2 and 3 then get copies of <data>/ca and <data>/keys, as a deployment provisions them.
      const data = [1, 2, 3].map((i) => join(dir, `node${i}`));
      nodes.push(await startNode(data[0]!, env));
      for (const d of data.slice(1)) {
        await mkdir(d, { recursive: true, mode: 0o700 });
        await cp(join(data[0]!, 'ca'), join(d, 'ca'), { recursive: true });
        await cp(join(data[0]!, 'keys'), join(d, 'keys'), { recursive: true });
      }
      nodes.push(...await Promise.all(data.slice(1).map((d) => startNode(d, env))));
      const child = execFile(lading, ['user', 'add', 'alice', '--data', data[0]!], { env });
      child.stdin!.end('alice-pw\n');
      await new Promise<void>((resolve, reject) => child.once('exit', (code) => code === 0 ? resolve() : reject(new Error(`lading user add exited ${code}`))));

      const ngDir = join(dir, 'nginx');
      await mkdir(ngDir);
      await writeFile(join(ngDir, 'nginx.conf'), nginxConfig(ngDir, lbPort, nodes.map((n) => n.url)));
      nginx = spawn(NGINX, ['-p', ngDir, '-c', join(ngDir, 'nginx.conf'), '-e', join(ngDir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
      nginx.stdout!.on('data', (c) => { nginxLog += String(c); });
      nginx.stderr!.on('data', (c) => { nginxLog += String(c); });
      for (let i = 0; i < 100; i++) {
        if (nginx.exitCode !== null) break;
        if (await fetch(`${lb}/api/status`).then((r) => r.ok, () => false)) break;
        await sleep(100);
      }
      assert.ok(await fetch(`${lb}/api/status`).then((r) => r.ok, () => false), `nginx does not answer at ${lb}:\n${nginxLog}`);
    });

    after(async () => {
      await stopProcess(nginx, 'SIGQUIT');
      await Promise.all(nodes.map((n) => stopProcess(n.proc)));
      await double?.close();
      const pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
      pool.on('error', () => {});
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
      await pool.end();
      await emptyS3Prefix(s3client, s3.bucket!, prefix);
      s3client.destroy();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('through nginx: upload, read-after-write on every node, rename seen everywhere', async () => {
      const auth = await login(lb);
      const data = randomBytes(2 * 1024 * 1024 + 3);
      const up = await fetch(home(lb, 'first.bin'), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: data });
      const upBody = await json(up);
      assert.equal(up.status, 200, JSON.stringify(upBody));
      assert.equal(upBody.Response.data.checksum, checksumOf(data));
      assert.equal(upBody.Response.data.link, home(lb, 'first.bin'), 'links use the public URL of the load balancer');
      for (const node of nodes) {
        const got = await download(node.url, auth, 'first.bin');
        assert.equal(got.status, 200, `read-after-write at ${node.url}`);
        assert.ok(got.body.equals(data), `same bytes at ${node.url}`);
        assert.equal((await metadata(node.url, auth, 'first.bin')).checksum, checksumOf(data));
      }
      const renamed = await fetch(home(lb, 'first.bin'), {
        method: 'PATCH', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ newname: 'renamed.bin' }),
      });
      assert.equal(renamed.status, 200, JSON.stringify(await json(renamed)));
      for (const node of nodes) {
        assert.equal((await download(node.url, auth, 'first.bin')).status, 404, `old name gone at ${node.url}`);
        const got = await download(node.url, auth, 'renamed.bin');
        assert.equal(got.status, 200);
        assert.ok(got.body.equals(data), `renamed object intact at ${node.url}`);
      }
    });

    it('through nginx: pid_await returns a PID registered by whichever node claimed the job', async () => {
      const auth = await login(lb);
      const res = await fetch(`${home(lb, 'registered.txt')}?pid_await=true`, {
        method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: 'registered across nodes',
      });
      const up = (await json(res)).Response.data;
      assert.equal(res.status, 200);
      assert.match(up.PID ?? '', new RegExp(`^${HANDLE_PREFIX}/[0-9a-f-]{36}$`));
      for (const node of nodes) {
        assert.equal((await metadata(node.url, auth, 'registered.txt')).PID, up.PID, `PID in the metadata at ${node.url}`);
        const record = await json(await fetch(`${node.url}/api/pids/${up.PID}`));
        assert.equal(record.Meta.status, 200, `PID resolves at ${node.url}`);
        assert.equal(record.Response.data.URL, home(lb, 'registered.txt'), 'the record links through the load balancer');
        assert.equal(record.Response.data['EUDAT/CHECKSUM'], up.checksum);
      }
      const all = await jobs();
      assert.equal(all.length, 2, 'one registration job per object created (first.bin and this one)');
      assert.deepEqual(all.map((j) => j.state), ['done', 'done']);
    });

    it('an expired proxy is expired on every node, and POST /auth/proxy through nginx renews it for all', async () => {
      const auth = await login(lb);
      for (const node of nodes) assert.equal((await fetch(home(node.url), { headers: { authorization: auth } })).status, 200);
      await sleep(PROXY_LIFETIME * 1000 + 1200);
      for (const node of nodes) {
        const res = await fetch(home(node.url), { headers: { authorization: auth } });
        const body = await json(res);
        assert.equal(res.status, 500, `expired at ${node.url}`);
        assert.match(JSON.stringify(body.Response.errors), /Expired proxy credential/);
      }
      const renew = await fetch(`${lb}/auth/proxy`, { method: 'POST', headers: { authorization: auth } });
      const renewed = await json(renew);
      assert.equal(renew.status, 200, JSON.stringify(renewed));
      assert.equal(renewed.Response.data.Completed, 'New proxy was generated.');
      for (const node of nodes) {
        assert.equal((await fetch(home(node.url), { headers: { authorization: auth } })).status, 200, `renewed proxy accepted at ${node.url}`);
        const again = await json(await fetch(`${node.url}/auth/proxy`, { method: 'POST', headers: { authorization: auth } }));
        assert.equal(again.Response.data.Completed, 'Current proxy is still valid.', `${node.url} sees the new proxy`);
      }
    });

    it('a node killed in the middle of 20 uploads: answered uploads intact, none half-visible, its jobs taken over', async (t) => {
      const auth = await login(lb);
      const mkcol = await fetch(`${lb}/api/registered`, {
        method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: `/${ZONE}/home/alice/burst` }),
      });
      assert.equal(mkcol.status, 200);
      const before = new Set((await jobs()).map((j) => j.id));
      // NOTE: every registration job now stays in flight at the handle server, so each node's
      // worker holds what it claimed when the victim dies.
      double.hold(1_000_000);
      const victim = nodes[1]!;
      const CHUNK = 256 * 1024;
      const CHUNKS = 16;
      const bodies = Array.from({ length: 20 }, () => randomBytes(CHUNK * CHUNKS));
      let killed = false;
      const answers = bodies.map((data, i) => new Promise<{ status: number | null; killedFirst: boolean }>((resolve) => {
        const req = httpRequest(home(lb, `burst/f${i}.bin`), {
          method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream', 'content-length': data.length },
        }, (res) => {
          const killedFirst = killed;
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? null, killedFirst }));
          res.on('error', () => resolve({ status: null, killedFirst }));
        });
        req.on('error', () => resolve({ status: null, killedFirst: killed }));
        // NOTE: the uploads are paced differently (about 0.2 s to 5 s each), so some have been
        // answered, and their jobs claimed, while others are still streaming at the kill.
        void (async () => {
          for (let c = 0; c < CHUNKS; c++) {
            if (!req.write(data.subarray(c * CHUNK, (c + 1) * CHUNK))) await new Promise((r) => req.once('drain', r));
            await sleep(10 + 18 * i);
          }
          req.end();
        })().catch(() => {});
      }));

      let victimJobs: string[] = [];
      for (let i = 0; i < 400 && victimJobs.length === 0; i++) {
        await sleep(25);
        victimJobs = (await jobs()).filter((j) => j.state === 'running' && j.lease_owner?.includes(`:${victim.pid}:`)).map((j) => j.id);
      }
      assert.ok(victimJobs.length > 0, `the victim claimed a registration job during the uploads\n${diagnostics()}`);
      killed = true;
      await stopProcess(victim.proc, 'SIGKILL');
      const results = await Promise.all(answers);
      double.hold(0);
      double.release();

      assert.ok(results.some((r) => r.killedFirst), 'some uploads were still in flight when the node died');
      const ok = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
      t.diagnostic(`answers: ${results.map((r) => `${r.status ?? 'reset'}${r.killedFirst ? '' : ' (before the kill)'}`).join(', ')}; killed node held jobs ${victimJobs.join(', ')}`);
      assert.ok(ok.length >= 10, `most uploads were answered 200 (${ok.length} of 20): ${JSON.stringify(results)}`);
      const survivors = nodes.filter((n) => n !== victim);
      // NOTE: a new login (a new proxy of PROXY_LIFETIME seconds) for each group of checks.
      for (const node of survivors) {
        const fresh = await login(node.url);
        for (const i of ok) {
          const got = await download(node.url, fresh, `burst/f${i}.bin`);
          assert.equal(got.status, 200, `f${i}.bin (answered 200) at ${node.url}`);
          assert.ok(sha256(got.body).equals(sha256(bodies[i]!)), `f${i}.bin intact at ${node.url}`);
        }
        const listing = await json(await fetch(home(node.url, 'burst'), { headers: { authorization: fresh } }));
        const listed = (listing.Response.data as Record<string, { metadata: { checksum: string } }>[]).map((e) => Object.entries(e)[0]!);
        for (const i of ok) assert.ok(listed.some(([name]) => name === `f${i}.bin`), `f${i}.bin listed at ${node.url}`);
        for (const [name, entry] of listed) {
          const i = Number(/^f(\d+)\.bin$/.exec(name)?.[1]);
          assert.ok(bodies[i], `only uploaded names are listed, got ${name}`);
          assert.equal(entry.metadata.checksum, checksumOf(bodies[i]), `${name} listed with its full checksum`);
          const got = await download(node.url, fresh, `burst/${name}`);
          assert.equal(got.status, 200);
          assert.ok(sha256(got.body).equals(sha256(bodies[i])), `${name} listed at ${node.url} has its full content`);
        }
      }

      // Jobs the victim held run again on a survivor once their lease ends.
      let settled: Awaited<ReturnType<typeof jobs>> = [];
      for (let i = 0; i < 240; i++) {
        settled = (await jobs()).filter((j) => !before.has(j.id));
        if (settled.length > 0 && settled.every((j) => j.state === 'done' || j.state === 'failed')) break;
        await sleep(250);
      }
      assert.deepEqual(settled.filter((j) => j.state !== 'done'), [], `every registration job done\n${diagnostics()}`);
      const byId = new Map(settled.map((j) => [j.id, j]));
      for (const id of victimJobs) assert.ok(byId.get(id)!.attempts >= 2, `job ${id} of the killed node ran again on a survivor`);
      const fresh = await login(survivors[1]!.url);
      for (const i of ok) {
        const meta = await metadata(survivors[1]!.url, fresh, `burst/f${i}.bin`);
        assert.match(meta.PID ?? '', new RegExp(`^${HANDLE_PREFIX}/`), `f${i}.bin registered`);
        const record = await json(await fetch(`${survivors[0]!.url}/api/pids/${meta.PID}`));
        assert.equal(record.Response.data['EUDAT/CHECKSUM'], checksumOf(bodies[i]!));
      }
      // Uploads keep working through nginx with one node down.
      const more = await fetch(home(lb, 'burst/after.txt'), { method: 'PUT', headers: { authorization: fresh, 'content-type': 'application/octet-stream' }, body: 'still up' });
      assert.equal(more.status, 200);
    });
  });
}
