/**
 * What the tests of `lading put` and `lading get` share: a real `lading serve` process on a
 * temporary data directory with a logged-in user, the real `bin/lading` run as a subprocess
 * with that server in LADING_URL/LADING_TOKEN and its own state directory, and trees of
 * random files with their SHA-256s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { cleanEnv } from '../cli/run-lading.ts';
import { CLIENT_BIN, lading, spawnServe, stopProcess } from '../helpers/process.ts';

export const ZONE = 'tz';

export interface Node {
  dir: string;
  data: string;
  url: string;
  token: string;
  home: string;
  /** The environment the CLI runs with: this server, this token, state and config under `dir`. */
  env: Record<string, string>;
  /** Kills the server (SIGKILL), as a crash or an outage would; `restart` brings it back on the same address. */
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `lading serve` on a fresh data directory with user alice, logged in. */
export async function startNode(): Promise<Node> {
  const dir = await mkdtemp(join(tmpdir(), 'lading-transfer-'));
  const data = join(dir, 'data');
  const env = cleanEnv({ LADING_ZONE: ZONE, LADING_LOG_LEVEL: 'warn' });
  lading(['init', '--data', data], env);
  lading(['user', 'add', 'alice', '--data', data], env, 'alice-pw\n');
  let { proc, url } = await spawnServe(data, env);
  const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'alice', password: 'alice-pw' }) });
  const body = (await res.json()) as { Response: { data: { token: string } } };
  if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(body)}`);
  const token = body.Response.data.token;
  return {
    dir, data, url, token, home: `/${ZONE}/home/alice`,
    env: { LADING_URL: url, LADING_TOKEN: token, XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(dir, 'config'), HOME: dir },
    async kill() {
      await stopProcess(proc, 'SIGKILL');
    },
    async restart() {
      ({ proc } = await spawnServe(data, env, new URL(url).host));
    },
    async stop() {
      await stopProcess(proc, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `bin/lading args`; `done` resolves with how it ended and what it printed. */
export function startCli(args: string[], env: Record<string, string>): { proc: ChildProcess; done: Promise<Ran> } {
  const proc = spawn(CLIENT_BIN, args, { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (c) => { stdout += String(c); });
  proc.stderr!.on('data', (c) => { stderr += String(c); });
  const done = new Promise<Ran>((resolve) => {
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { proc, done };
}

export function runCli(args: string[], env: Record<string, string>): Promise<Ran> {
  return startCli(args, env).done;
}

/** The `--json` events of a run. */
export function events(ran: Ran): Record<string, any>[] {
  return ran.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
}

/**
 * Writes `count` files of random sizes (0 to `maxBytes`) into `root`, spread over nested
 * directories, plus one empty directory; resolves with relative path → SHA-256 (hex).
 */
export async function makeTree(root: string, count: number, maxBytes: number): Promise<Map<string, string>> {
  const hashes = new Map<string, string>();
  await mkdir(join(root, 'empty', 'dir'), { recursive: true });
  for (let i = 0; i < count; i++) {
    const rel = join(`d${i % 7}`, i % 3 === 0 ? `e${i % 5}` : '', i % 11 === 0 ? 'deep/er' : '', `f${i}.bin`);
    const bytes = randomBytes(i === 0 ? 0 : Math.floor(Math.random() * maxBytes));
    await mkdir(join(root, rel, '..'), { recursive: true });
    await writeFile(join(root, rel), bytes);
    hashes.set(rel.split('\\').join('/'), createHash('sha256').update(bytes).digest('hex'));
  }
  return hashes;
}

/** Relative path → SHA-256 (hex) of every file below `root`, and its directories. */
export async function readTree(root: string): Promise<{ files: Map<string, string>; dirs: string[] }> {
  const files = new Map<string, string>();
  const dirs: string[] = [];
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    const rel = relative(root, join(e.parentPath, e.name));
    if (e.isDirectory()) dirs.push(rel);
    else files.set(rel, createHash('sha256').update(await readFile(join(root, rel))).digest('hex'));
  }
  return { files, dirs: dirs.sort() };
}
