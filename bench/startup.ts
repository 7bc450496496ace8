/**
 * Benchmark helper: how long `lading` takes to start, per kind of command, and how much memory
 * an idle server holds. Runs `bin/lading --help`, a client command (`ls` against a running
 * server, with LADING_URL and LADING_TOKEN in the environment), an admin command (`user list
 * --data DIR`) to their exit, and `lading serve` on a fresh data directory to its first answer
 * (`GET /api/status`, polled every 5 ms); prints the median of each over `rounds`, in ms, and
 * the idle server's VmRSS one second after its first answer, in MiB. Only talks to 127.0.0.1.
 *
 * Usage: BENCH_TOKEN=… node bench/startup.ts <lading-root> <data-dir> <server-url> <port> [rounds=5]
 * Prints one line: `help <ms> client <ms> admin <ms> serve <ms> idle_rss <MiB>`.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const [root, dataDir, serverUrl, portArg, roundsArg] = process.argv.slice(2);
const token = process.env.BENCH_TOKEN;
if (!root || !dataDir || !serverUrl || !portArg || !token) {
  console.error('usage: BENCH_TOKEN=… node bench/startup.ts <lading-root> <data-dir> <server-url> <port> [rounds]');
  process.exit(2);
}
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(serverUrl)) {
  console.error('startup: only loopback servers are allowed');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 5);
const lading = join(root, 'bin', 'lading');
// NOTE: HOME points at an empty directory so no remembered login of the user is read.
const env = { ...process.env, HOME: join(dataDir, '..'), LADING_URL: serverUrl, LADING_TOKEN: token };

/** Milliseconds from spawning `lading args` to its exit; rejects when it fails. */
function run(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(lading, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += String(d); });
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`lading ${args.join(' ')}: exit ${code}: ${stderr}`))));
  });
}

/** Milliseconds from spawning `lading serve` to its first answer, and its VmRSS (MiB) a second later. */
async function serve(round: number): Promise<{ ms: number; rss: number }> {
  const data = `${dataDir}-serve-${round}`;
  const url = `http://127.0.0.1:${portArg}/api/status`;
  const started = performance.now();
  const child = spawn(lading, ['serve', '--data', data, '--listen', `127.0.0.1:${portArg}`], { env: { ...env, LADING_LOG_LEVEL: 'warn' }, stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`lading serve exited with ${child.exitCode}`);
      const ok = await fetch(url).then((r) => r.ok, () => false);
      if (ok) break;
      await sleep(5);
    }
    const ms = performance.now() - started;
    await sleep(1000);
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    return { ms, rss };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    await rm(data, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const times: Record<string, number[]> = { help: [], client: [], admin: [], serve: [], rss: [] };
// One untimed round first (file system cache, compile cache), then the timed ones, interleaved.
for (let r = 0; r <= rounds; r++) {
  const help = await run(['--help']);
  const client = await run(['ls']);
  const admin = await run(['user', 'list', '--data', dataDir]);
  const { ms, rss } = await serve(r);
  if (r === 0) continue;
  times.help!.push(help);
  times.client!.push(client);
  times.admin!.push(admin);
  times.serve!.push(ms);
  times.rss!.push(rss);
}
const f = (k: string): string => median(times[k]!).toFixed(0);
console.log(`help ${f('help')} client ${f('client')} admin ${f('admin')} serve ${f('serve')} idle_rss ${f('rss')}`);
