/**
 * Runs `bin/lading` as an operator runs it, for the command-line tests: in an environment
 * without the caller's `LADING_…` variables (plus the ones a test gives), with standard input,
 * resolving with the exit code and both outputs instead of throwing; and what those tests do
 * to a running server (an upload that sends its body slowly, a `serve` whose output is kept).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { CLIENT_BIN, LADING_BIN } from '../helpers/process.ts';
import { heldUpload } from '../helpers/server.ts';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The process environment without `LADING_…` variables, then `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LADING_'))), ...extra };
}

/** Runs `bin/lading args` with `input` on standard input; `uid`/`gid` run it as another user. */
export function runLading(
  args: string[], options: { env?: Record<string, string>; input?: string; uid?: number; gid?: number; bin?: string } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(options.bin ?? LADING_BIN, args, { env: cleanEnv(options.env), timeout: 60_000, uid: options.uid, gid: options.gid }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(options.input ?? '');
  });
}

/** Runs a client command as `runLading` does, with the client tests' program (`CLIENT_BIN`). */
export function runClient(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<Ran> {
  return runLading(args, { ...options, bin: CLIENT_BIN });
}

/**
 * Asserts the shape of an operator error: the exit code, exactly one line on standard error
 * (`lading: …`, matching `message`), no stack trace, nothing on standard output.
 */
export function oneLineError(res: Ran, code: number, message: RegExp): string | null {
  if (res.code !== code) return `exit code ${res.code}, expected ${code}: ${JSON.stringify(res.stderr)}`;
  if (!/^lading: [^\n]+\n$/.test(res.stderr)) return `not one line on stderr: ${JSON.stringify(res.stderr)}`;
  if (/\n\s+at /.test(res.stderr)) return `a stack trace: ${JSON.stringify(res.stderr)}`;
  if (!message.test(res.stderr)) return `stderr ${JSON.stringify(res.stderr)} does not match ${message}`;
  if (res.stdout !== '') return `output on stdout: ${JSON.stringify(res.stdout)}`;
  return null;
}

/**
 * Starts a PUT of `total` bytes (`chunk` repeated) that sends its body slowly: one chunk, then
 * waits for `resume()` before sending the rest. `done` resolves with the answer.
 */
export function slowUpload(url: string, token: string, chunk: Buffer, total: number): {
  resume(): void;
  done: Promise<{ status: number; body: string }>;
  /** Resolves once the first chunk is on its way. */
  started: Promise<void>;
} {
  let resume = (): void => {};
  const resumed = new Promise<void>((r) => { resume = r; });
  const upload = heldUpload(url, `Bearer ${token}`, { contentLength: total * chunk.length });
  const started = upload.write(chunk);
  void resumed.then(async () => {
    for (let i = 1; i < total; i++) await upload.write(chunk);
    upload.end();
  });
  return { resume, done: upload.answer, started };
}

/** Starts `bin/lading serve` with `args`, collecting its output, without waiting for it. */
export function startServe(args: string[], env: Record<string, string> = {}): { proc: ChildProcess; output: () => string } {
  const proc = spawn(LADING_BIN, ['serve', ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => { out += String(c); });
  proc.stderr!.on('data', (c) => { out += String(c); });
  return { proc, output: () => out };
}

/**
 * Runs `bin/lading serve --data <data> --listen 127.0.0.1:0`: resolves with its exit code and
 * outputs when it exits (a refused start), or with `null` once it listens (it is then stopped).
 */
export function serveOrRefuse(data: string, env: Record<string, string> = {}): Promise<Ran | null> {
  const proc = spawn(LADING_BIN, ['serve', '--data', data, '--listen', '127.0.0.1:0'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    const listening = (): void => {
      if (!/listening on /.test(stdout + stderr)) return;
      proc.kill('SIGKILL');
      resolve(null);
    };
    proc.stdout!.on('data', (c) => { stdout += String(c); listening(); });
    proc.stderr!.on('data', (c) => { stderr += String(c); listening(); });
    proc.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
