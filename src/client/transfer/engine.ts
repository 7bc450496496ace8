/**
 * Runs a list of transfers, N at a time: reports each to the `Reporter`, appends each finished
 * one to the manifest (JSON lines: path, size, sha256, pid), stops starting new ones on Ctrl-C
 * (the signal aborts those in flight) or once the server refused the token, and tells which
 * exit code the whole run deserves. Knows nothing about the direction of the transfers.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { ApiClient, RetryOptions } from '../api.ts';
import { ClientError, RunStopped } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import type { FileResult, Reporter } from './progress.ts';
import type { Outcome, TransferContext } from './upload.ts';
import type { Throttle } from './throttle.ts';

export interface Task {
  /** What the user sees: the destination path. */
  name: string;
  /** A shorter name for the progress lines: the path below the destination. */
  label?: string;
  local: string;
  remote: string;
  /** Bytes, when known before the transfer. */
  size: number | null;
  run(ctx: TransferContext): Promise<Outcome>;
}

export interface RunResult {
  results: FileResult[];
  failures: ClientError[];
  interrupted: boolean;
}

/** Appends manifest lines as files finish, so even a killed run leaves what it finished. */
export class Manifest {
  readonly #out: WriteStream;

  constructor(file: string) {
    this.#out = createWriteStream(file, { flags: 'w', mode: 0o644 });
    this.#out.on('error', () => {});
  }

  add(r: FileResult): void {
    this.#out.write(JSON.stringify({ path: r.path, local: r.local, remote: r.remote, size: r.size, sha256: r.sha256, pid: r.pid, status: r.status }) + '\n');
  }

  async close(): Promise<void> {
    this.#out.end();
    await once(this.#out, 'close');
  }
}

/** Runs `tasks` with `jobs` in flight; never rejects for a failed file (see `failures`). */
export async function runTasks(api: ApiClient, tasks: Task[], options: {
  jobs: number; reporter: Reporter; signal: AbortSignal; manifest?: Manifest; destinationOf(task: Task): string;
  /** Tries and pauses of each transfer's requests (`--retries`, `--retry-wait`). */
  retry?: Pick<RetryOptions, 'retries' | 'maxWaitMs'>;
  /** One bandwidth limit for all the transfers (`--bwlimit`). */
  throttle?: Throttle;
}): Promise<RunResult> {
  const { reporter } = options;
  const results: FileResult[] = [];
  const failures: ClientError[] = [];
  let next = 0;
  // NOTE: the transfers see a signal of their own: Ctrl-C aborts it, and so does a failure no
  // other transfer can avoid (a full disk, a refused token), which stops the run at once.
  const run = new AbortController();
  const signal = run.signal;
  const onAbort = (): void => run.abort(options.signal.reason);
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  const worker = async (): Promise<void> => {
    while (!signal.aborted && next < tasks.length) {
      const id = next++;
      const task = tasks[id]!;
      reporter.start(id, task.label ?? task.name, task.size);
      const onRetry = (err: ClientError, waitMs: number): void => reporter.retry(task.name, err, waitMs);
      const ctx: TransferContext = {
        api, signal, onBytes: (done) => reporter.bytes(id, done), onBase: (done) => reporter.base(id, done), onRetry,
        retry: { ...options.retry, signal, onRetry },
        ...(options.throttle ? { throttle: options.throttle } : {}),
      };
      try {
        const outcome = await task.run(ctx);
        const result: FileResult = {
          status: outcome.status, path: options.destinationOf(task), local: task.local, remote: task.remote, size: outcome.size,
          sha256: outcome.sha256.toString('hex'), pid: outcome.pid, transferred: outcome.transferred, resumedFrom: outcome.resumedFrom,
        };
        results.push(result);
        options.manifest?.add(result);
        reporter.done(id, result);
      } catch (raw) {
        if (signal.aborted) {
          reporter.abandoned(id);
          break;
        }
        const err = raw instanceof ClientError ? raw : new ClientError(raw instanceof Error ? raw.message : String(raw), EXIT.FAILED, { cause: raw });
        failures.push(err);
        // NOTE: a refused token refuses every other file too, and a full disk takes no other
        // file either: say it once, not N times, and stop the transfers in flight.
        if (err.fatal || (err.exitCode === EXIT.AUTH && (err.status === 401 || err.status === undefined))) {
          reporter.stopped(id, task.name, err);
          run.abort(new RunStopped());
          break;
        }
        reporter.failed(id, task.name, err);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, tasks.length)) }, worker));
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
  return { results, failures, interrupted: options.signal.aborted };
}

/**
 * The exit code of a run: 130 when interrupted, 0 without failures, the failures' code when
 * they share one, else 6 when any was an integrity failure (damaged data matters most), else 1.
 */
export function exitCodeOf(run: Pick<RunResult, 'failures' | 'interrupted'>): number {
  if (run.interrupted) return EXIT.INTERRUPTED;
  if (run.failures.length === 0) return EXIT.OK;
  const codes = new Set(run.failures.map((f) => f.exitCode));
  if (codes.size === 1) return [...codes][0]!;
  if (codes.has(EXIT.INTEGRITY)) return EXIT.INTEGRITY;
  return EXIT.FAILED;
}
