/**
 * What each kind of command loads: `--help`, `--version` and the client commands start without
 * the server (the composition root, Fastify, the drivers), which is what keeps them quick on a
 * laptop; a server that has answered requests but served no login has not loaded the OpenID
 * Connect libraries (oidc-provider, openid-client, jose), one that has verified or issued no
 * certificate has not loaded the X.509 library, and one that was not asked for its API
 * document or viewer has not loaded @fastify/swagger, @fastify/swagger-ui, YAML or the static
 * file server, nor Node's undici, which keeps its memory down and its start short; an admin
 * command loads no HTTP server (Fastify, the routes), nor, touching no certificate, the X.509
 * library; neither loads TypeBox's value checker; and only `put` and `get` load the transfer
 * engine and its progress bars. Each runs the real command with a preload that records the
 * modules it loads.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanEnv, runLading } from './run-lading.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-lazy-'));
after(() => rm(dir, { recursive: true, force: true }));
const hook = join(import.meta.dirname, '..', 'helpers', 'module-log.ts');
let n = 0;

/** The environment that makes a command record its modules, and where they will be. */
function recording(extra: Record<string, string> = {}): { env: Record<string, string>; log: string } {
  const log = join(dir, `modules-${n++}.txt`);
  return { log, env: { NODE_OPTIONS: `--import=${hook}`, LADING_TEST_MODULE_LOG: log, HOME: dir, ...extra } };
}

const SERVER = [/\/src\/wiring\/(index|server|deps)\.ts$/, /\/node_modules\/fastify\//, /\/src\/drivers\//, /\/node_modules\/@peculiar\//];
const OIDC = [/\/node_modules\/oidc-provider\//, /\/node_modules\/openid-client\//, /\/node_modules\/jose\//];
const DOCS = [/\/node_modules\/@fastify\/swagger\//, /\/node_modules\/@fastify\/swagger-ui\/(index\.js|lib\/)/, /\/node_modules\/yaml\//, /\/node_modules\/@fastify\/static\//];
// NOTE: Node's copy of undici, which an ES import of node:http loads (for its WebSocket exports).
const UNDICI = [/^node-internal:internal\/deps\/undici\//];
// NOTE: TypeBox's checker, which the configuration needs only to say what is wrong (see
// config.ts); its type builders use value/guard.
const TYPEBOX_CHECKER = [/\/node_modules\/@sinclair\/typebox\/build\/[a-z]+\/(value\/(?!guard\/)|errors\/|compiler\/)/];
const HTTP_SERVER = [/\/node_modules\/fastify\//, /\/src\/wiring\/server\.ts$/, /\/src\/http\/app\.ts$/, /\/src\/http\/routes-[a-z]+\.ts$/];
// NOTE: what `lading put` and `lading get` run, which no other command needs.
const TRANSFER = [/\/src\/client\/transfer\/(?!commands\.ts$)/, /\/node_modules\/cli-progress\//];
const X509 = [/\/node_modules\/@peculiar\//, /\/node_modules\/reflect-metadata\//, /\/node_modules\/tsyringe\//, /\/node_modules\/asn1js\//];

async function loadedBy(log: string): Promise<string[]> {
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
}

function offenders(modules: string[], patterns: RegExp[]): string[] {
  return modules.filter((m) => patterns.some((p) => p.test(m)));
}

describe('lazy loading', () => {
  for (const args of [['--help'], ['--version'], ['token']]) {
    it(`lading ${args.join(' ')} loads no server code`, async () => {
      const { env, log } = recording({ LADING_URL: 'http://127.0.0.1:9', LADING_TOKEN: 'a-token-for-the-test' });
      const res = await runLading(args, { env });
      assert.equal(res.code, 0, res.stderr);
      const modules = await loadedBy(log);
      assert.ok(modules.some((m) => m.endsWith('/src/cli/main.ts')), 'the log records the command itself');
      assert.deepEqual(offenders(modules, SERVER), []);
    });
  }

  it('a server that served no login, no certificate and no API document has not loaded the OpenID Connect, X.509, OpenAPI or undici libraries', async () => {
    const data = join(dir, 'data');
    // NOTE: on a data directory made by `lading init`: the first start of all creates the CA,
    // which needs the X.509 library.
    const init = await runLading(['init', '--data', data], { env: { HOME: dir } });
    assert.equal(init.code, 0, init.stderr);
    const { env, log } = recording({ LADING_LOG_LEVEL: 'warn' });
    const proc = spawn(join(import.meta.dirname, '..', '..', 'bin', 'lading'), ['serve', '--data', data, '--listen', '127.0.0.1:0'], {
      env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c) => { out += String(c); });
    proc.stderr.on('data', (c) => { out += String(c); });
    for (let i = 0; i < 400 && !/listening on (\S+) /.test(out) && proc.exitCode === null; i++) await sleep(50);
    const url = /listening on (\S+) /.exec(out)?.[1];
    try {
      assert.ok(url, `lading serve did not start: ${out}`);
      assert.equal((await fetch(`${url}/api/status`)).status, 200);
      assert.equal((await fetch(`${url}/api/registered/lading/home/nobody/`)).status, 401);
    } finally {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    const modules = await loadedBy(log);
    assert.ok(modules.some((m) => /\/node_modules\/fastify\//.test(m)), 'the log records the server');
    assert.deepEqual(offenders(modules, OIDC), []);
    assert.deepEqual(offenders(modules, X509), []);
    assert.deepEqual(offenders(modules, DOCS), []);
    assert.deepEqual(offenders(modules, TRANSFER), []);
    assert.deepEqual(offenders(modules, UNDICI), []);
    assert.deepEqual(offenders(modules, TYPEBOX_CHECKER), []);
  });

  it('an admin command loads no HTTP server, and, touching no certificate, no X.509 library', async () => {
    const data = join(dir, 'admin-data');
    const init = await runLading(['init', '--data', data], { env: { HOME: dir } });
    assert.equal(init.code, 0, init.stderr);
    const { env, log } = recording();
    const res = await runLading(['user', 'list', '--data', data], { env });
    assert.equal(res.code, 0, res.stderr);
    const modules = await loadedBy(log);
    assert.ok(modules.some((m) => m.endsWith('/src/wiring/deps.ts')), 'the log records the admin service');
    assert.deepEqual(offenders(modules, HTTP_SERVER), []);
    assert.deepEqual(offenders(modules, TYPEBOX_CHECKER), []);
    assert.deepEqual(offenders(modules, X509), []);
    assert.deepEqual(offenders(modules, TRANSFER), []);
  });
});
