/**
 * Benchmark helper: how long `lading` takes to start, per kind of command, and how much memory
 * an idle server holds. Runs `bin/lading --help`, a client command (`ls` against a running
 * server, with LADING_URL and LADING_TOKEN in the environment), an admin command (`user list
 * --data DIR`) to their exit, and `lading serve` on a fresh data directory made by `lading init`
 * (not timed), as an operator makes it, to its first answer (`GET /api/status`, polled every
 * 5 ms); prints the median of each over `rounds`, in ms, and the idle server's VmRSS one second
 * after its first answer, in MiB; and the CPU time (user + system) each used to get there,
 * which a loaded machine disturbs far less than the wall time.
 * Only talks to 127.0.0.1.
 *
 * Usage: BENCH_TOKEN=… node bench/startup.ts <lading-root> <data-dir> <server-url> <port> [rounds=5]
 * Prints two lines: `help <ms> client <ms> admin <ms> serve <ms> idle_rss <MiB>`, then the
 * same keys with CPU milliseconds (`cpu help <ms> client <ms> admin <ms> serve <ms>`).
 *
 * Peer mode, for the servers lading is compared with, measured the same way:
 *   node bench/startup.ts --peer <url> <rounds> <command> [args…]
 * starts the command, polls `url` every 5 ms until any HTTP answer, stops it (SIGTERM), and
 * prints the median milliseconds to that first answer.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

if (process.argv[2] === '--peer') {
  const [url, roundsText, command, ...args] = process.argv.slice(3);
  if (!url || !command || !/^http:\/\/127\.0\.0\.1:\d+\//.test(url)) {
    console.error('usage: node bench/startup.ts --peer http://127.0.0.1:<port>/… <rounds> <command> [args…]');
    process.exit(2);
  }
  const times: number[] = [];
  for (let r = 0; r <= Number(roundsText); r++) {
    const started = performance.now();
    const child = spawn(command, args, { stdio: 'ignore' });
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
        if (await fetch(url, { method: 'HEAD' }).then(() => true, () => false)) break;
        await sleep(5);
      }
      if (r > 0) times.push(performance.now() - started);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
  }
  console.log(median(times).toFixed(0));
  process.exit(0);
}

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

/**
 * Milliseconds from spawning `lading args` to its exit, and the CPU milliseconds it used (from
 * GNU time, which reports the whole process tree); rejects when it fails.
 */
function run(args: string[]): Promise<{ ms: number; cpu: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', 'CPU %U %S', lading, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += String(d); });
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      const cpu = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
      if (code !== 0 || !cpu) reject(new Error(`lading ${args.join(' ')}: exit ${code}: ${stderr}`));
      else resolve({ ms, cpu: (Number(cpu[1]) + Number(cpu[2])) * 1000 });
    });
  });
}

/** CPU milliseconds (user + system, all threads) process `pid` has used so far. */
async function cpuOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
  // NOTE: utime and stime are fields 14 and 15 of stat, 12 and 13 after the name; 100 ticks a second on Linux.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Milliseconds (wall and CPU) from spawning `lading serve` on a data directory `lading init`
 * made to its first answer, and its VmRSS (MiB) a second later.
 */
async function serve(round: number): Promise<{ ms: number; cpu: number; rss: number }> {
  const data = `${dataDir}-serve-${round}`;
  // NOTE: the start the targets are about; the very first start on an empty directory
  // also creates the CA (an RSA key, and the X.509 library loaded to sign it).
  await run(['init', '--data', data]);
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
    const cpu = await cpuOf(child.pid!);
    await sleep(1000);
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    return { ms, cpu, rss };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    await rm(data, { recursive: true, force: true });
  }
}

const times: Record<string, number[]> = {};
const note = (key: string, value: number): void => {
  (times[key] ??= []).push(value);
};
// One untimed round first (file system cache, compile cache), then the timed ones, interleaved.
for (let r = 0; r <= rounds; r++) {
  const help = await run(['--help']);
  const client = await run(['ls']);
  const admin = await run(['user', 'list', '--data', dataDir]);
  const started = await serve(r);
  if (r === 0) continue;
  for (const [key, m] of [['help', help], ['client', client], ['admin', admin], ['serve', started]] as const) {
    note(key, m.ms);
    note(`cpu ${key}`, m.cpu);
  }
  note('rss', started.rss);
}
const f = (k: string): string => median(times[k]!).toFixed(0);
console.log(`help ${f('help')} client ${f('client')} admin ${f('admin')} serve ${f('serve')} idle_rss ${f('rss')}`);
console.log(`cpu help ${f('cpu help')} client ${f('cpu client')} admin ${f('cpu admin')} serve ${f('cpu serve')}`);
