/**
 * Runs the real `bin/lading` command for tests that need a separate process (kill -9, memory
 * of the server alone): `serve` until it prints where it listens, and the admin commands.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const LADING_BIN = join(import.meta.dirname, '..', '..', 'bin', 'lading');

/**
 * The program the client tests run for client commands: the single-file client
 * (`npm run build:client`, dist/lading) when LADING_TEST_CLIENT_BIN names it, as CI does after
 * the suite, else `bin/lading`. Servers and admin commands always run from `bin/lading`.
 */
export const CLIENT_BIN = process.env.LADING_TEST_CLIENT_BIN || LADING_BIN;
/** True when the client tests run the single-file client. */
export const SINGLE_FILE_CLIENT = CLIENT_BIN !== LADING_BIN;

/**
 * Starts `lading serve --data <data> --listen 127.0.0.1:0` (or `listen`) and resolves once it listens, with
 * what it has printed so far and since (`output`).
 */
export async function spawnServe(data: string, env: NodeJS.ProcessEnv, listen = '127.0.0.1:0'): Promise<{ proc: ChildProcess; url: string; output: () => string }> {
  const proc = spawn(LADING_BIN, ['serve', '--data', data, '--listen', listen], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => { out += String(c); });
  proc.stderr!.on('data', (c) => { out += String(c); });
  for (let i = 0; i < 200 && !/listening on (\S+)/.test(out) && proc.exitCode === null; i++) await sleep(50);
  const m = /listening on (\S+)/.exec(out);
  if (!m) {
    proc.kill('SIGKILL');
    throw new Error(`lading serve did not start: ${out}`);
  }
  return { proc, url: m[1]!, output: () => out };
}

/** Sends `signal` and waits for the process to exit. */
export async function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill(signal);
  await exited;
}

/** Runs an admin command (`user add`, `jobs`, …) with `input` on standard input; returns its output. */
export function lading(args: string[], env: NodeJS.ProcessEnv, input?: string): string {
  return execFileSync(LADING_BIN, args, { env, input }).toString();
}
