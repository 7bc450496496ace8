/**
 * What a transfer shows while it runs, in one of four forms: on a terminal, a total bar (files,
 * bytes, rate, time left) and one line per active transfer, drawn by cli-progress and cut to
 * the terminal's width; elsewhere (batch jobs, CI logs) a plain line every few seconds; with
 * `--json` one JSON object per line on standard output for scripts; with `--quiet` nothing but
 * failures. Knows nothing about HTTP.
 */
import cliProgress from 'cli-progress';
import type { ClientError } from '../errors.ts';

/** How one file ended, as reported. */
export interface FileResult {
  status: 'sent' | 'identical';
  /** The destination path (remote for put, local for get). */
  path: string;
  local: string;
  remote: string;
  size: number;
  sha256: string;
  pid: string | null;
  transferred: number;
  resumedFrom: number;
}

export interface Reporter {
  /** Adds files (and their bytes, those known) to the totals. */
  plan(files: number, bytes: number): void;
  start(id: number, name: string, size: number | null): void;
  /** Bytes of transfer `id` done so far (absolute). */
  bytes(id: number, done: number): void;
  done(id: number, result: FileResult): void;
  failed(id: number, name: string, err: ClientError): void;
  retry(name: string, err: ClientError, waitMs: number): void;
  /** Stops drawing and says how it went; `interrupted` when Ctrl-C stopped it. */
  finish(interrupted: boolean): void;
  /** Stops drawing and leaves nothing behind: the command failed before its transfers were planned. */
  abandon(): void;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → '1.5 KiB'. */
export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ${UNITS[u]}`;
}

/** Seconds as m:ss or h:mm:ss; '-:--' when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '-:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Pads or cuts `text` to `width` columns, cutting at the end. */
export function fit(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text.padEnd(width);
  return chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/** Pads or cuts a path to `width` columns, cutting at the start: the file's name matters most. */
export function fitPath(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text.padEnd(width);
  return '…' + chars.slice(chars.length - Math.max(0, width - 1)).join('');
}

function bar(fraction: number, width: number): string {
  const full = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return '█'.repeat(full) + '░'.repeat(width - full);
}

interface Active {
  name: string;
  size: number | null;
  done: number;
}

/** The running totals every form shows: files and bytes done, the rate over the last seconds. */
export class Totals {
  files = 0;
  bytes = 0;
  filesDone = 0;
  /** Bytes of finished files. */
  bytesDone = 0;
  failures = 0;
  identical = 0;
  transferred = 0;
  readonly started = Date.now();
  readonly active = new Map<number, Active>();
  #samples: { at: number; bytes: number }[] = [];

  /** Bytes done, finished files and the part of the active ones. */
  get current(): number {
    let n = this.bytesDone;
    for (const a of this.active.values()) n += a.done;
    return n;
  }

  /** Bytes per second over about the last five seconds. */
  rate(): number {
    const now = Date.now();
    const current = this.current;
    this.#samples.push({ at: now, bytes: current });
    while (this.#samples.length > 2 && now - this.#samples[1]!.at > 5000) this.#samples.shift();
    const first = this.#samples[0]!;
    const span = (now - first.at) / 1000;
    return span > 0.2 ? (current - first.bytes) / span : 0;
  }

  eta(rate: number): number {
    return rate > 0 ? (this.bytes - this.current) / rate : NaN;
  }
}

/** Quiet: only failures, one line each on standard error. */
export class QuietReporter implements Reporter {
  readonly totals = new Totals();
  protected readonly err: NodeJS.WritableStream;

  constructor(err: NodeJS.WritableStream = process.stderr) {
    this.err = err;
  }

  plan(files: number, bytes: number): void {
    this.totals.files += files;
    this.totals.bytes += bytes;
  }

  start(id: number, name: string, size: number | null): void {
    this.totals.active.set(id, { name, size, done: 0 });
  }

  bytes(id: number, done: number): void {
    const a = this.totals.active.get(id);
    if (a) a.done = done;
  }

  done(id: number, result: FileResult): void {
    this.totals.active.delete(id);
    this.totals.filesDone++;
    this.totals.bytesDone += result.size;
    this.totals.transferred += result.transferred;
    if (result.status === 'identical') this.totals.identical++;
  }

  failed(id: number, name: string, err: ClientError): void {
    const a = this.totals.active.get(id);
    this.totals.active.delete(id);
    this.totals.failures++;
    this.totals.filesDone++;
    this.totals.bytesDone += a?.size ?? 0;
    this.say(`lading: ${err.message.startsWith(name) ? '' : `${name}: `}${err.message}`);
  }

  retry(_name: string, _err: ClientError, _waitMs: number): void {}

  finish(_interrupted: boolean): void {}

  abandon(): void {}

  protected say(line: string): void {
    this.err.write(`${line}\n`);
  }

  /** 'sent 12 files (4.0 MiB) in 1.2 s, 3.3 MiB/s; 3 identical, skipped; 1 failed' */
  summary(verb: string): string {
    const t = this.totals;
    const seconds = (Date.now() - t.started) / 1000;
    const sent = t.filesDone - t.identical - t.failures;
    const parts = [`${verb} ${sent} file${sent === 1 ? '' : 's'} (${formatBytes(t.transferred)}) in ${seconds.toFixed(1)} s, ${formatBytes(seconds > 0 ? t.transferred / seconds : 0)}/s`];
    if (t.identical) parts.push(`${t.identical} already there, skipped`);
    if (t.failures) parts.push(`${t.failures} failed`);
    return parts.join('; ');
  }
}

/** Not a terminal: a line of totals every `intervalMs`, retries and failures as they happen, a summary. */
export class LineReporter extends QuietReporter {
  readonly #timer: NodeJS.Timeout;
  readonly #verb: string;

  constructor(verb: string, intervalMs = 10_000, err: NodeJS.WritableStream = process.stderr) {
    super(err);
    this.#verb = verb;
    this.#timer = setInterval(() => this.say(`lading: ${this.line()}`), intervalMs);
    this.#timer.unref();
  }

  line(): string {
    const t = this.totals;
    const rate = t.rate();
    return `${t.filesDone}/${t.files} files, ${formatBytes(t.current)}/${formatBytes(t.bytes)}, ${formatBytes(rate)}/s, ETA ${formatDuration(t.eta(rate))}`;
  }

  override retry(name: string, err: ClientError, waitMs: number): void {
    this.say(`lading: ${name}: ${err.message}; trying again in ${(waitMs / 1000).toFixed(1)} s`);
  }

  override finish(interrupted: boolean): void {
    clearInterval(this.#timer);
    if (!interrupted) this.say(`lading: ${this.summary(this.#verb)}`);
  }

  override abandon(): void {
    clearInterval(this.#timer);
  }
}

/** `--json`: one object per line on standard output (plan, start, done, error, retry, progress, summary). */
export class JsonReporter extends QuietReporter {
  readonly #out: NodeJS.WritableStream;
  readonly #timer: NodeJS.Timeout;

  constructor(out: NodeJS.WritableStream = process.stdout, intervalMs = 1000) {
    super();
    this.#out = out;
    this.#timer = setInterval(() => {
      const t = this.totals;
      this.#emit({ event: 'progress', files_done: t.filesDone, files: t.files, bytes_done: t.current, bytes: t.bytes, rate: Math.round(t.rate()) });
    }, intervalMs);
    this.#timer.unref();
  }

  #emit(event: Record<string, unknown>): void {
    this.#out.write(JSON.stringify(event) + '\n');
  }

  override plan(files: number, bytes: number): void {
    super.plan(files, bytes);
    this.#emit({ event: 'plan', files, bytes });
  }

  override start(id: number, name: string, size: number | null): void {
    super.start(id, name, size);
    this.#emit({ event: 'start', path: name, size });
  }

  override done(id: number, r: FileResult): void {
    super.done(id, r);
    this.#emit({
      event: 'done', status: r.status, path: r.path, local: r.local, remote: r.remote, size: r.size, sha256: r.sha256, pid: r.pid,
      transferred: r.transferred, resumed_from: r.resumedFrom,
    });
  }

  override failed(id: number, name: string, err: ClientError): void {
    // Failures go to standard error as well as into the event stream.
    super.failed(id, name, err);
    this.#emit({ event: 'error', path: name, message: err.message, exit_code: err.exitCode });
  }

  override retry(name: string, err: ClientError, waitMs: number): void {
    this.#emit({ event: 'retry', path: name, message: err.message, wait_ms: waitMs });
  }

  override finish(interrupted: boolean): void {
    clearInterval(this.#timer);
    const t = this.totals;
    this.#emit({
      event: 'summary', interrupted, files: t.files, done: t.filesDone - t.failures, identical: t.identical, failed: t.failures,
      bytes: t.bytes, transferred: t.transferred, seconds: (Date.now() - t.started) / 1000,
    });
  }

  override abandon(): void {
    clearInterval(this.#timer);
  }
}

/** A terminal: the total bar and a line per active transfer, at most `lines` of them. */
export class TtyReporter extends QuietReporter {
  readonly #multi: cliProgress.MultiBar;
  readonly #bars = new Map<number, cliProgress.SingleBar>();
  readonly #verb: string;
  readonly #stream: NodeJS.WriteStream;
  readonly #lines: number;

  constructor(verb: string, lines: number, stream: NodeJS.WriteStream = process.stderr) {
    super(stream);
    this.#verb = verb;
    this.#stream = stream;
    this.#lines = lines;
    this.#multi = new cliProgress.MultiBar({
      stream, fps: 5, hideCursor: true, clearOnComplete: false, linewrap: false, forceRedraw: true,
      format: (_options, _params, payload: { render(): string }) => payload.render(),
    });
    this.#multi.create(1, 0, { render: () => this.#totalLine() });
  }

  #width(): number {
    return Math.max(40, (this.#stream.columns || 80) - 1);
  }

  #totalLine(): string {
    const t = this.totals;
    const rate = t.rate();
    const bytes = t.bytes > 0 ? `${formatBytes(t.current)}/${formatBytes(t.bytes)}` : formatBytes(t.current);
    const right = ` ${t.filesDone}/${t.files} files  ${bytes}  ${formatBytes(rate)}/s  ETA ${formatDuration(t.eta(rate))}`;
    const width = this.#width();
    const barWidth = Math.max(5, Math.min(30, width - right.length - 8));
    const fraction = t.bytes > 0 ? t.current / t.bytes : t.files > 0 ? t.filesDone / t.files : 0;
    return fit(`Total [${bar(fraction, barWidth)}]${right}`, width).trimEnd();
  }

  #fileLine(id: number): string {
    const a = this.totals.active.get(id);
    if (!a) return '';
    const width = this.#width();
    const pct = a.size ? Math.floor((a.done / a.size) * 100) : 0;
    // NOTE: a fixed width for the figures keeps the bars of all lines in one column.
    const right = ` ${a.size !== null ? `${String(pct).padStart(3)}%` : '    '} ${(a.size !== null ? `${formatBytes(a.done)}/${formatBytes(a.size)}` : formatBytes(a.done)).padStart(19)}`;
    const barWidth = 12;
    const nameWidth = Math.max(8, width - right.length - barWidth - 5);
    return fit(`  ${fitPath(a.name, nameWidth)} [${bar(a.size ? a.done / a.size : 0, barWidth)}]${right}`, width).trimEnd();
  }

  override start(id: number, name: string, size: number | null): void {
    super.start(id, name, size);
    if (this.#bars.size < this.#lines) this.#bars.set(id, this.#multi.create(1, 0, { render: () => this.#fileLine(id) }));
  }

  #drop(id: number): void {
    const b = this.#bars.get(id);
    if (b) {
      this.#multi.remove(b);
      this.#bars.delete(id);
    }
  }

  override done(id: number, result: FileResult): void {
    this.#drop(id);
    super.done(id, result);
  }

  override failed(id: number, name: string, err: ClientError): void {
    this.#drop(id);
    super.failed(id, name, err);
  }

  override retry(name: string, err: ClientError, waitMs: number): void {
    this.say(`lading: ${name}: ${err.message}; trying again in ${(waitMs / 1000).toFixed(1)} s`);
  }

  protected override say(line: string): void {
    this.#multi.log(`${line}\n`);
  }

  override finish(interrupted: boolean): void {
    for (const id of [...this.#bars.keys()]) this.#drop(id);
    this.#multi.update();
    this.#multi.stop();
    if (!interrupted) this.err.write(`lading: ${this.summary(this.#verb)}\n`);
  }

  override abandon(): void {
    // NOTE: erases the total line drawn while planning instead of leaving "0/0 files" above the
    // error (cli-progress reads the option when it stops; its types do not list `options`).
    (this.#multi as unknown as { options: { clearOnComplete: boolean } }).options.clearOnComplete = true;
    this.#multi.stop();
  }
}
