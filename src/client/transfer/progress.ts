/**
 * What a transfer shows while it runs, in one of four forms: on a terminal, a total bar (files,
 * bytes, rate, time left) and one line per active transfer, drawn by cli-progress and cut to
 * the terminal's width; elsewhere (batch jobs, CI logs) a plain line every few seconds; with
 * `--json` one JSON object per line on standard output for scripts; with `--quiet` nothing but
 * failures. Knows nothing about HTTP.
 */
import cliProgress from 'cli-progress';
import { type ClientError, printable } from '../errors.ts';
import { formatBytes, formatDuration, formatElapsed, formatRate } from '../format.ts';

export { formatBytes, formatDuration, formatElapsed, formatRate };

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
  /** Transfer `id` begins at `done` bytes, which are there already (resumed, or identical): not moved by this run. */
  base(id: number, done: number): void;
  /** Bytes of transfer `id` done so far (absolute: after a retry it may go back). */
  bytes(id: number, done: number): void;
  done(id: number, result: FileResult): void;
  failed(id: number, name: string, err: ClientError): void;
  /** Transfer `id` failed in a way no other can avoid: the run stops, said once at its end. */
  stopped(id: number, name: string, err: ClientError): void;
  /** Transfer `id` was cut off by the run's stop (Ctrl-C, or another's fatal failure): neither done nor failed. */
  abandoned(id: number): void;
  retry(name: string, err: ClientError, waitMs: number): void;
  /** Stops drawing and says how it went; `interrupted` when Ctrl-C stopped it. */
  finish(interrupted: boolean): void;
  /** Stops drawing and leaves nothing behind: the command failed before its transfers were planned. */
  abandon(): void;
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

/** How long the rate looks back, in milliseconds. */
const RATE_WINDOW_MS = 5000;
/** The rate's resolution: bytes moved are counted per slot of this many milliseconds. */
const SLOT_MS = 250;

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
  /** Transfers cut off by the run's stop, neither done nor failed. */
  cutOff = 0;
  /** Bytes moved over the network by this run so far: only ever grows (a retry sends bytes again). */
  moved = 0;
  readonly started: number;
  readonly active = new Map<number, Active>();
  readonly #now: () => number;
  /** Bytes moved per time slot (its number: time / SLOT_MS), oldest first, the last window's only. */
  #slots: { slot: number; bytes: number }[] = [];

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.started = now();
  }

  /** Bytes done, finished files and the part of the active ones. */
  get current(): number {
    let n = this.bytesDone;
    for (const a of this.active.values()) n += a.done;
    return n;
  }

  /** Transfer `a` is at `done` bytes: what it gained counts as moved. */
  advance(a: Active, done: number): void {
    if (done > a.done) {
      const gained = done - a.done;
      this.moved += gained;
      const slot = Math.floor(this.#now() / SLOT_MS);
      const last = this.#slots.at(-1);
      if (last?.slot === slot) last.bytes += gained;
      else this.#slots.push({ slot, bytes: gained });
    }
    a.done = done;
  }

  /**
   * Bytes per second over the last five seconds (since the start while the run is younger):
   * of the bytes moved, so never negative, and no jump for bytes that were there already.
   */
  rate(): number {
    const now = this.#now();
    const from = Math.floor((now - RATE_WINDOW_MS) / SLOT_MS);
    while (this.#slots.length > 0 && this.#slots[0]!.slot <= from) this.#slots.shift();
    const span = Math.min(RATE_WINDOW_MS, now - this.started) / 1000;
    if (span < 0.2) return 0;
    return this.#slots.reduce((n, s) => n + s.bytes, 0) / span;
  }

  eta(rate: number): number {
    return rate > 0 ? Math.max(0, this.bytes - this.current) / rate : NaN;
  }
}

/** Quiet: only failures, one line each on standard error. */
export class QuietReporter implements Reporter {
  readonly totals = new Totals();
  protected readonly err: NodeJS.WritableStream;
  /** The failure that stopped the run, said once at its end. */
  protected stop: string | null = null;
  /** The reason of the retries being waited out, said once until transfers move again. */
  #waiting: string | null = null;

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

  base(id: number, done: number): void {
    const a = this.totals.active.get(id);
    if (a) a.done = done;
  }

  bytes(id: number, done: number): void {
    const a = this.totals.active.get(id);
    if (!a) return;
    this.totals.advance(a, done);
  }

  done(id: number, result: FileResult): void {
    this.totals.active.delete(id);
    this.totals.filesDone++;
    this.totals.bytesDone += result.size;
    this.totals.transferred += result.transferred;
    if (result.status === 'identical') this.totals.identical++;
    this.#waiting = null;
  }

  failed(id: number, name: string, err: ClientError): void {
    this.#count(id);
    this.say(`lading: ${this.#line(name, err)}`);
  }

  stopped(id: number, name: string, err: ClientError): void {
    this.#count(id);
    this.stop ??= this.#line(name, err);
  }

  abandoned(id: number): void {
    if (this.totals.active.delete(id)) this.totals.cutOff++;
  }

  #count(id: number): void {
    const a = this.totals.active.get(id);
    this.totals.active.delete(id);
    this.totals.failures++;
    this.totals.filesDone++;
    this.totals.bytesDone += a?.size ?? 0;
  }

  /** The failure as one line, naming the file once (the message may name it already). */
  #line(name: string, err: ClientError): string {
    return printable(`${err.message.includes(name) ? '' : `${name}: `}${err.message}`);
  }

  /**
   * Says a retry once: every transfer waiting out the same kind of trouble (the server away,
   * a busy server) makes one line, until a transfer is done again. NOTE: not until bytes move:
   * a request may send its body before its answer says the server is busy.
   */
  retry(name: string, err: ClientError, waitMs: number): void {
    const reason = err.status === undefined ? 'unreachable' : String(err.status);
    if (this.#waiting === reason) return;
    this.#waiting = reason;
    this.sayRetry(name, err, waitMs);
  }

  protected sayRetry(_name: string, _err: ClientError, _waitMs: number): void {}

  finish(_interrupted: boolean): void {
    if (this.stop !== null) this.say(`lading: ${this.stop}`);
  }

  abandon(): void {}

  protected say(line: string): void {
    this.err.write(`${line}\n`);
  }

  /** 'sent 12 files (4.00 MiB) in 1.2 s, 3.33 MiB/s; 3 already there, skipped; 1 failed; 2 cut off; 5 not attempted' */
  summary(verb: string): string {
    const t = this.totals;
    const seconds = (Date.now() - t.started) / 1000;
    const sent = t.filesDone - t.identical - t.failures;
    // NOTE: the bytes this run moved, those of transfers cut off by Ctrl-C included.
    const parts = [`${verb} ${sent} file${sent === 1 ? '' : 's'} (${formatBytes(t.moved)}) in ${formatElapsed(seconds)}, ${formatRate(seconds > 0 ? t.moved / seconds : 0)}`];
    if (t.identical) parts.push(`${t.identical} already there, skipped`);
    if (t.failures) parts.push(`${t.failures} failed`);
    if (t.cutOff) parts.push(`${t.cutOff} cut off`);
    if (t.files > t.filesDone + t.cutOff) parts.push(`${t.files - t.filesDone - t.cutOff} not attempted`);
    return parts.join('; ');
  }

  /** The last line: the summary, after the failure that stopped the run when one did. */
  protected closing(verb: string): string {
    return this.stop === null ? `lading: ${this.summary(verb)}` : `lading: ${this.stop}; stopped: ${this.summary(verb)}`;
  }
}

/**
 * What a retry says: the trouble and when the next try comes. The path only for a trouble of
 * one file (a busy upload), not for the server being away, which every transfer meets alike.
 */
function retryLine(name: string, err: ClientError, waitMs: number): string {
  const message = err.status === undefined || err.status >= 500 || err.status === 429 ? err.message.replace(/^.*?: (?=(cannot reach|the download broke off))/, '') : err.message;
  const who = err.status === 409 && !message.startsWith(name) ? `${name}: ` : '';
  return `${who}${message}; trying again in ${formatElapsed(waitMs / 1000)} (further tries not shown)`;
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
    return `${t.filesDone}/${t.files} files, ${formatBytes(t.current)}/${formatBytes(t.bytes)}, ${formatRate(rate)}, ETA ${formatDuration(t.eta(rate))}`;
  }

  protected override sayRetry(name: string, err: ClientError, waitMs: number): void {
    this.say(`lading: ${retryLine(name, err, waitMs)}`);
  }

  override finish(_interrupted: boolean): void {
    clearInterval(this.#timer);
    this.say(this.closing(this.#verb));
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

  override stopped(id: number, name: string, err: ClientError): void {
    super.stopped(id, name, err);
    this.#emit({ event: 'error', path: name, message: err.message, exit_code: err.exitCode, stopped: true });
  }

  override retry(name: string, err: ClientError, waitMs: number): void {
    this.#emit({ event: 'retry', path: name, message: err.message, wait_ms: waitMs });
  }

  override finish(interrupted: boolean): void {
    clearInterval(this.#timer);
    super.finish(interrupted);
    const t = this.totals;
    this.#emit({
      event: 'summary', interrupted, files: t.files, done: t.filesDone - t.failures, identical: t.identical, failed: t.failures,
      cut_off: t.cutOff, not_attempted: t.files - t.filesDone - t.cutOff, bytes: t.bytes, transferred: t.transferred, seconds: (Date.now() - t.started) / 1000,
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
    return Math.max(20, (this.#stream.columns || 80) - 1);
  }

  /** The total line: the richest of its forms that fits the terminal, down to files and rate. */
  #totalLine(): string {
    const t = this.totals;
    const rate = formatRate(t.rate());
    const files = `${t.filesDone}/${t.files}`;
    const bytes = t.bytes > 0 ? `${formatBytes(t.current)}/${formatBytes(t.bytes)}` : formatBytes(t.current);
    const eta = `ETA ${formatDuration(t.eta(t.rate()))}`;
    const width = this.#width();
    const right = ` ${files} files  ${bytes}  ${rate}  ${eta}`;
    const barWidth = Math.min(30, width - right.length - 8);
    if (barWidth >= 5) {
      const fraction = t.bytes > 0 ? t.current / t.bytes : t.files > 0 ? t.filesDone / t.files : 0;
      return `Total [${bar(fraction, barWidth)}]${right}`;
    }
    const forms = [`Total${right}`, `${files}  ${bytes}  ${rate}  ${eta}`, `${files}  ${bytes}  ${rate}`, `${files}  ${rate}`];
    return fit(forms.find((f) => [...f].length <= width) ?? forms.at(-1)!, width).trimEnd();
  }

  /** A transfer's line: its name (cut at the start), and on wide terminals a bar and its bytes. */
  #fileLine(id: number): string {
    const a = this.totals.active.get(id);
    if (!a) return '';
    const width = this.#width();
    const pct = a.size ? Math.floor((a.done / a.size) * 100) : 0;
    const percent = a.size !== null ? `${String(pct).padStart(3)}%` : '    ';
    if (width < 60) {
      const right = ` ${percent} ${formatBytes(a.done).padStart(9)}`;
      return fit(`  ${fitPath(a.name, Math.max(4, width - right.length - 3))} ${right}`, width).trimEnd();
    }
    // NOTE: a fixed width for the figures keeps the bars of all lines in one column.
    const right = ` ${percent} ${(a.size !== null ? `${formatBytes(a.done)}/${formatBytes(a.size)}` : formatBytes(a.done)).padStart(19)}`;
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

  override stopped(id: number, name: string, err: ClientError): void {
    this.#drop(id);
    super.stopped(id, name, err);
  }

  override abandoned(id: number): void {
    this.#drop(id);
    super.abandoned(id);
  }

  protected override sayRetry(name: string, err: ClientError, waitMs: number): void {
    this.say(`lading: ${retryLine(name, err, waitMs)}`);
  }

  protected override say(line: string): void {
    this.#multi.log(`${line}\n`);
  }

  override finish(_interrupted: boolean): void {
    for (const id of [...this.#bars.keys()]) this.#drop(id);
    this.#multi.update();
    this.#multi.stop();
    this.err.write(`${this.closing(this.#verb)}\n`);
  }

  override abandon(): void {
    // NOTE: erases the total line drawn while planning instead of leaving "0/0 files" above the
    // error (cli-progress reads the option when it stops; its types do not list `options`).
    (this.#multi as unknown as { options: { clearOnComplete: boolean } }).options.clearOnComplete = true;
    this.#multi.stop();
  }
}
