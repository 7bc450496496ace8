/**
 * Two `lading serve` nodes on one PostgreSQL catalog ride out PostgreSQL restarts: while a few
 * clients upload and download through both nodes, PostgreSQL is stopped (`pg_ctl -m fast`) and
 * started again three times. Both nodes stay up; every answer that is not a success is 503 in
 * the error envelope with `Retry-After` (never a 500, never a broken connection); every upload
 * answered 200 reads back byte for byte from both nodes, and one answered 503 is either absent
 * or whole; the nodes serve again by themselves; and their LISTEN connections come back, so a
 * `pid_await` upload on one node is woken by the job that the other node finished.
 *
 * PostgreSQL is a private cluster of this test (`helpers/private-postgres.ts`): the shared one
 * must never be stopped. It needs root and the PostgreSQL server binaries; without them it
 * skips, except under CI, where that fails. The bytes live on a directory both nodes share;
 * PIDs go to a test double of a Handle.net server, which holds registrations on demand.
 */
import { after, before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type HandleDouble, startHandleDouble } from '../pid/handle-double.ts';
import { type Node, startNode, stopProcess } from '../helpers/cluster.ts';
import { LADING_BIN } from '../helpers/process.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.ts';

const ZONE = 'tz';
const HANDLE_PREFIX = '21.T55555';
const ROUNDS = 3;
const CLIENTS = 4;

/** One answer the clients got (or the error of a request that got none). */
interface Outcome { what: string; status: number; retryAfter: string | null; body: string; error?: string }

const postgres = await startPrivatePostgres();

if (typeof postgres === 'string') {
  const message = `PostgreSQL restarts need a private PostgreSQL cluster: ${postgres}.`;
  if (process.env.CI) test('two nodes ride out PostgreSQL restarts', () => assert.fail(message));
  else test('two nodes ride out PostgreSQL restarts', { skip: message }, () => {});
} else {
  ridesOutRestarts(postgres);
}

function ridesOutRestarts(db: PrivatePostgres): void {
  describe('two nodes ride out PostgreSQL restarts', { timeout: 300_000 }, () => {
    let dir: string;
    let double: HandleDouble;
    const nodes: Node[] = [];
    let auth: string;

    const home = (base: string, rest = '') => `${base}/api/registered/${ZONE}/home/alice${rest ? '/' + rest : ''}`;
    const query = async (sql: string): Promise<Record<string, unknown>[]> => {
      const client = new pg.Client({ connectionString: db.url });
      client.on('error', () => {});
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };
    const diagnostics = () => nodes.map((n, i) => `--- node ${i + 1} (${n.url}, pid ${n.pid}):\n${n.log().slice(-4000)}`).join('\n');
    /** Polls `probe` every 200 ms until it is true, for at most `ms`; false when it never was. */
    const eventually = async (ms: number, probe: () => Promise<boolean>): Promise<boolean> => {
      for (const end = Date.now() + ms; Date.now() < end; await sleep(200)) {
        if (await probe().catch(() => false)) return true;
      }
      return false;
    };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-pg-restart-'));
      double = await startHandleDouble(`300:${HANDLE_PREFIX}/ADMIN`, 'handle-pw');
      await writeFile(join(dir, 'rules.txt'), `object.created /${ZONE}/home/alice/pid/** pid.register\n`);
      const env: NodeJS.ProcessEnv = {
        ...process.env, LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn',
        LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: db.url,
        LADING_RESOURCE_DRIVER: 'fs', LADING_RESOURCE_PATH: join(dir, 'resource'),
        LADING_PID_RULES: join(dir, 'rules.txt'), LADING_PID_PROVIDER: 'handle', LADING_PID_PREFIX: HANDLE_PREFIX,
        LADING_PID_HANDLE_URL: double.url, LADING_PID_HANDLE_USER: `300:${HANDLE_PREFIX}/ADMIN`, LADING_PID_HANDLE_PASSWORD: 'handle-pw',
        // NOTE: far longer than the test may take: a pid_await upload answers only when woken.
        LADING_PID_AWAIT_TIMEOUT: '900',
      };
      // NOTE: node 1 alone first: it creates the schema, the CA and the keys, which node 2 then
      // gets copies of, as a deployment provisions them.
      const data = [join(dir, 'node1'), join(dir, 'node2')];
      nodes.push(await startNode(data[0]!, env));
      await mkdir(data[1]!, { recursive: true, mode: 0o700 });
      await cp(join(data[0]!, 'ca'), join(data[1]!, 'ca'), { recursive: true });
      await cp(join(data[0]!, 'keys'), join(data[1]!, 'keys'), { recursive: true });
      nodes.push(await startNode(data[1]!, env));
      const child = execFile(LADING_BIN, ['user', 'add', 'alice', '--data', data[0]!], { env });
      child.stdin!.end('alice-pw\n');
      await new Promise<void>((resolve, reject) => child.once('exit', (code) => code === 0 ? resolve() : reject(new Error(`lading user add exited ${code}`))));
      const res = await fetch(`${nodes[0]!.url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
      const login = await res.text();
      assert.equal(res.status, 200, login);
      auth = `Bearer ${(JSON.parse(login) as { Response: { data: { token: string } } }).Response.data.token}`;
      const made = await fetch(`${nodes[0]!.url}/api/registered`, {
        method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${ZONE}/home/alice/pid` }),
      });
      assert.equal(made.status, 200, await made.text());
    });

    after(async () => {
      await Promise.all(nodes.map((n) => stopProcess(n.proc)));
      await double?.close();
      await db.destroy();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('keeps both nodes up, answers only 503 while it is down, loses nothing, and notifies again after', async (t) => {
      const outcomes: Outcome[] = [];
      const committed = new Map<string, Buffer>();
      const unsure = new Map<string, Buffer>();
      const corrupt: string[] = [];
      let running = true;

      const call = async (what: string, send: () => Promise<Response>): Promise<Outcome> => {
        let outcome: Outcome;
        try {
          const res = await send();
          outcome = { what, status: res.status, retryAfter: res.headers.get('retry-after'), body: '' };
          const bytes = Buffer.from(await res.arrayBuffer());
          outcome.body = res.ok ? '' : bytes.toString('utf8');
          if (res.ok && what.startsWith('GET ')) (outcome as Outcome & { bytes?: Buffer }).bytes = bytes;
        } catch (err) {
          const e = err as Error & { cause?: { code?: string; message?: string } };
          outcome = { what, status: 0, retryAfter: null, body: '', error: `${e.message} (${e.cause?.code ?? e.cause?.message ?? ''})` };
        }
        outcomes.push(outcome);
        return outcome;
      };

      const client = async (k: number): Promise<void> => {
        for (let i = 0; running; i++) {
          const node = nodes[(k + i) % 2]!;
          const name = `c${k}-${i}.bin`;
          const data = randomBytes(1024 + randomInt(32 * 1024));
          const put = await call(`PUT ${name} via ${node.url}`, () => fetch(home(node.url, name), {
            method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: data,
          }));
          (put.status === 200 ? committed : unsure).set(name, data);
          const names = [...committed.keys()];
          if (names.length === 0) continue;
          const pick = names[randomInt(names.length)]!;
          const other = nodes[(k + i + 1) % 2]!;
          const got = await call(`GET ${pick} via ${other.url}`, () => fetch(`${home(other.url, pick)}?download=true`, { headers: { authorization: auth } }));
          const bytes = (got as Outcome & { bytes?: Buffer }).bytes;
          if (got.status === 200 && !bytes?.equals(committed.get(pick)!)) corrupt.push(`${pick} via ${other.url}`);
        }
      };

      const clients = Array.from({ length: CLIENTS }, (_, k) => client(k));
      try {
        for (let round = 0; round < ROUNDS; round++) {
          await sleep(1500);
          await db.stop();
          await sleep(2500);
          await db.start();
        }
        await sleep(2000);
      } finally {
        running = false;
        await Promise.all(clients);
      }

      const count = (status: number) => outcomes.filter((o) => o.status === status).length;
      t.diagnostic(`${outcomes.length} requests: ${count(200)} answered 200, ${count(503)} answered 503; ${committed.size} uploads committed, ${unsure.size} not`);
      for (const [i, node] of nodes.entries()) {
        assert.ok(node.proc.exitCode === null && node.proc.signalCode === null, `node ${i + 1} died (${node.proc.exitCode ?? node.proc.signalCode}):\n${diagnostics()}`);
      }
      const broken = outcomes.filter((o) => o.error);
      assert.deepEqual(broken.map((o) => `${o.what}: ${o.error}`), [], 'no request lost its connection');
      const wrong = outcomes.filter((o) => {
        if (o.status >= 200 && o.status < 300) return false;
        if (o.status !== 503 || o.retryAfter === null || !/^[1-9][0-9]*$/.test(o.retryAfter)) return true;
        try {
          const body = JSON.parse(o.body) as { Meta: { status: number }; Response: { data: unknown; errors: Record<string, string>[] } };
          return body.Meta.status !== 503 || body.Response.data !== null || !body.Response.errors.some((e) => 'Service unavailable' in e);
        } catch {
          return true;
        }
      });
      assert.deepEqual(wrong.slice(0, 10).map((o) => `${o.what}: ${o.status} Retry-After ${o.retryAfter} ${o.body.slice(0, 300)}`), [],
        `every answer that is not a success is 503 in the envelope with Retry-After (${wrong.length} of ${outcomes.length} are not)`);
      assert.ok(outcomes.some((o) => o.status === 503), `the outages were seen (${outcomes.length} requests, none answered 503)`);
      assert.ok(committed.size > 0, 'uploads succeeded');
      assert.deepEqual(corrupt, [], 'every download of a committed object had its bytes');

      // The nodes serve again by themselves.
      for (const node of nodes) {
        assert.ok(await eventually(60_000, async () => (await fetch(home(node.url), { headers: { authorization: auth } })).status === 200),
          `${node.url} serves again once PostgreSQL is back:\n${diagnostics()}`);
      }
      // What was answered 200 is there, whole, on both nodes; what was answered 503 is absent, or whole.
      for (const node of nodes) {
        for (const [name, data] of committed) {
          const res = await fetch(`${home(node.url, name)}?download=true`, { headers: { authorization: auth } });
          assert.equal(res.status, 200, `${name} (answered 200) at ${node.url}`);
          assert.ok(Buffer.from(await res.arrayBuffer()).equals(data), `${name} intact at ${node.url}`);
        }
        for (const [name, data] of unsure) {
          const res = await fetch(`${home(node.url, name)}?download=true`, { headers: { authorization: auth } });
          const bytes = Buffer.from(await res.arrayBuffer());
          assert.ok(res.status === 404 || (res.status === 200 && bytes.equals(data)), `${name} (answered 503) at ${node.url}: ${res.status}, ${bytes.length} bytes`);
        }
      }

      // Both nodes listen again (their LISTEN sessions are back) ...
      assert.ok(await eventually(60_000, async () => (await query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`))[0]!.n === 2),
        `both nodes' LISTEN connections come back:\n${diagnostics()}`);
      // ... and a pid_await upload on node 1 is woken by a job node 2 finished: with the Handle
      // server holding registrations, a job node 1 claimed keeps its worker busy, so the next
      // job goes to node 2.
      const [a, b] = nodes as [Node, Node];
      double.hold(1_000_000);
      const awaitPid = (name: string) => fetch(`${home(a.url, `pid/${name}`)}?pid_await=true`, {
        method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: `registered ${name}`,
        signal: AbortSignal.timeout(120_000),
      });
      const ownerOf = async (held: number): Promise<number> => {
        assert.ok(await eventually(60_000, async () => double.held() >= held), `a node runs registration ${held}:\n${diagnostics()}`);
        const rows = await query(`SELECT lease_owner FROM public.jobs WHERE state = 'running' ORDER BY id DESC LIMIT 1`);
        return Number(String(rows[0]!.lease_owner).split(':').at(-2));
      };
      const waits = [awaitPid('x.txt')];
      if (await ownerOf(1) !== b.pid) {
        t.diagnostic('node 1 took the first registration; the second goes to node 2');
        waits.push(awaitPid('y.txt'));
        assert.equal(await ownerOf(2), b.pid, 'node 2 runs the job node 1\'s busy worker cannot take');
      }
      double.hold(0);
      double.release();
      const answers = await Promise.all(waits.map((w) => w.catch((err: unknown) => {
        assert.fail(`a pid_await upload on node 1 was not woken by node 2's job (${String(err)}):\n${diagnostics()}`);
      })));
      for (const res of answers) {
        const body = (await res.json()) as { Response: { data: { PID: string | null } } };
        assert.equal(res.status, 200);
        assert.match(body.Response.data.PID ?? '', new RegExp(`^${HANDLE_PREFIX}/`), 'the PID registered on node 2 is in node 1\'s answer');
      }
    });
  });
}
