/**
 * What `lading put` and `lading get` do once their arguments are parsed (`commands.ts`): plan
 * what goes where (the rules of `rclone copy`: a directory's contents go into the destination,
 * so running the same command again means the same thing), and hand the plan to the engine.
 * Every failure ends as one line `lading: …` and an exit code of the table in docs/researchers.md; Ctrl-C stops
 * cleanly with 130.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { onStopSignals, runClient } from '../commands.ts';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { posix } from 'node:path';
import { ApiClient, discard } from '../api.ts';
import { resolveTarget } from '../config.ts';
import { ClientError, localFailure, printable, usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import type { TransferOptions } from './commands.ts';
import { digestOfChecksum, digestOfHeader, sha256File } from './digest.ts';
import { downloadFile } from './download.ts';
import { Manifest, type Task, exitCodeOf, runTasks } from './engine.ts';
import { JsonReporter, LineReporter, QuietReporter, type Reporter, TtyReporter, formatBytes } from './progress.ts';
import { getToStream, putFromStream } from './streams.ts';
import { Throttle, throttled } from './throttle.ts';
import { ResumeStore } from './resume-store.ts';
import { type RemoteEntry, localKind, remoteStat, walkLocal, walkRemote } from './trees.ts';
import { uploadFile } from './upload.ts';

function reporterFor(opts: TransferOptions, verb: string): Reporter {
  if (opts.json) return new JsonReporter(process.stdout);
  if (opts.quiet) return new QuietReporter();
  if (process.stderr.isTTY) return new TtyReporter(verb, Math.max(1, Math.min(opts.jobs, (process.stderr.rows || 24) - 4)));
  return new LineReporter(verb, opts.progressInterval);
}

/** An absolute, normalized remote path; a relative one is taken from the home collection. */
async function remotePath(api: ApiClient, path: string, home: () => Promise<string>): Promise<string> {
  const absolute = path.startsWith('/') ? path : posix.join(await home(), path);
  const normal = posix.normalize(absolute);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

/** The caller's home collection: from the login, else asked of the server (once). */
function homeOf(api: ApiClient): () => Promise<string> {
  let found: Promise<string> | null = null;
  return () => {
    found ??= api.target.home !== undefined ? Promise.resolve(api.target.home)
      : api.json<{ storage_home: string }>('GET', '/auth/proxy').then((state) => state.storage_home);
    return found;
  };
}

/** `--dry-run`: what the command would transfer, one line each (or JSON), and how much; nothing is sent or written. */
function dryRun(opts: TransferOptions, verb: string, tasks: Task[], destinationOf: (t: Task) => string): void {
  let bytes = 0;
  for (const t of tasks) {
    bytes += t.size ?? 0;
    if (opts.json) process.stdout.write(`${JSON.stringify({ event: 'would', local: t.local, remote: t.remote, path: destinationOf(t), size: t.size })}\n`);
    else if (!opts.quiet) process.stdout.write(`${printable(verb === 'sent' ? `${t.local} -> ${t.remote}` : `${t.remote} -> ${t.local}`)}\n`);
  }
  const what = verb === 'sent' ? 'send' : 'receive';
  process.stderr.write(`lading: dry run: would ${what} ${tasks.length} file${tasks.length === 1 ? '' : 's'} (${formatBytes(bytes)}${opts.sync || verb !== 'sent' ? ', fewer where identical ones are there already' : ''}); nothing was transferred\n`);
}

/** Runs a transfer command: the one place that turns failures into a line and an exit code. */
async function execute(opts: TransferOptions, verb: string, plan: (api: ApiClient, signal: AbortSignal, reporter: Reporter) => Promise<{ tasks: Task[]; destinationOf(t: Task): string; before?(): Promise<void> }>): Promise<void> {
  const controller = onStopSignals();
  let api: ApiClient | null = null;
  let reporter: Reporter | null = null;
  let planned = false;
  let manifest: Manifest | undefined;
  try {
    const target = await resolveTarget({ server: opts.server });
    api = new ApiClient(target, { connections: opts.jobs });
    reporter = reporterFor(opts, verb);
    const work = await plan(api, controller.signal, reporter);
    if (opts.dryRun) {
      reporter.abandon();
      reporter = null;
      dryRun(opts, verb, work.tasks, work.destinationOf);
      return;
    }
    await work.before?.();
    planned = true;
    manifest = opts.manifest ? new Manifest(opts.manifest) : undefined;
    const run = await runTasks(api, work.tasks, {
      jobs: opts.jobs, reporter, signal: controller.signal, manifest, destinationOf: work.destinationOf,
      retry: { retries: opts.retries, maxWaitMs: opts.retryWait * 1000 },
      ...(opts.bwlimit ? { throttle: new Throttle(opts.bwlimit) } : {}),
    });
    reporter.finish(run.interrupted);
    reporter = null;
    await manifest?.close();
    manifest = undefined;
    if (opts.pidAwait && !opts.json) {
      for (const r of [...run.results].sort((a, b) => (a.path < b.path ? -1 : 1))) process.stdout.write(`${r.path}\t${r.pid ?? 'no PID'}\n`);
    }
    if (run.interrupted) process.stderr.write(`lading: ${controller.said()}: run the same command again to resume\n`);
    process.exitCode = run.interrupted ? controller.exitCode() : exitCodeOf(run);
  } catch (raw) {
    // NOTE: a failure before anything was planned (a usage error, a missing file) is said alone,
    // without a summary of nothing sent.
    if (planned) reporter?.finish(controller.signal.aborted);
    else reporter?.abandon();
    await manifest?.close();
    if (controller.signal.aborted) {
      process.stderr.write(`lading: ${controller.said()}: run the same command again to resume\n`);
      process.exitCode = controller.exitCode();
    } else {
      const err = raw instanceof ClientError ? raw : localFailure(raw, (raw as NodeJS.ErrnoException | null)?.path ?? 'a local file');
      process.stderr.write(`lading: ${printable(err ? err.message : `unexpected ${raw instanceof Error ? `${raw.name}: ${raw.message}` : String(raw)}`)}\n`);
      process.exitCode = err ? err.exitCode : EXIT.FAILED;
    }
  } finally {
    controller.off();
    await api?.close();
  }
}

/**
 * Whether the file at `rel` (below the tree given) is transferred, by `--include` and
 * `--exclude` (globs, as `path.matchesGlob` reads them): a pattern with a '/' is matched
 * against the whole relative path, one without against the file's name, wherever it is. With
 * includes, only what matches one of them; never what matches an exclude.
 */
export function selected(rel: string, opts: Pick<TransferOptions, 'include' | 'exclude'>): boolean {
  const hit = (pattern: string): boolean => posix.matchesGlob(pattern.includes('/') ? rel : posix.basename(rel), pattern.replace(/^\//, ''));
  if (opts.include?.length && !opts.include.some(hit)) return false;
  return !opts.exclude?.some(hit);
}

/** The collections to create so that every one of `dirs` exists: only the deepest ones (parents come with force). */
function leaves(dirs: Iterable<string>): string[] {
  const all = [...new Set(dirs)].sort();
  return all.filter((d, i) => !(all[i + 1]?.startsWith(d === '/' ? '/' : `${d}/`)));
}

/** Creates the collections `dirs` (and their parents), `jobs` at a time. */
async function createCollections(api: ApiClient, dirs: string[], jobs: number, signal: AbortSignal): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < dirs.length && !signal.aborted) {
      const path = dirs[next++]!;
      await api.request('POST', '/api/registered', {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path, force: true }), signal,
      }).then((r) => r.body?.cancel());
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, dirs.length) }, worker));
}

/** Bytes of standard input held at a time by `put -`: what a broken request sends again. */
const STREAM_BLOCK_MAX = 8 * 1024 * 1024;

/** `lading put - <remote>` and `lading get <remote> -`: standard input or output as the file. */
function stream(direction: 'put' | 'get', args: string[], opts: TransferOptions): Promise<void> {
  return runClient(async (signal) => {
    if (args.length !== 2) throw usageError(direction === 'put' ? 'put - takes one remote data object: lading put - <remote>' : 'get … - takes one remote data object: lading get <remote> -');
    if (opts.recursive || opts.sync || opts.manifest) throw usageError('-r, --sync and --manifest do not apply to standard input or output');
    const api = new ApiClient(await resolveTarget({ server: opts.server }));
    const retry = { retries: opts.retries, maxWaitMs: opts.retryWait * 1000, signal };
    const throttle = opts.bwlimit ? new Throttle(opts.bwlimit) : undefined;
    try {
      const home = homeOf(api);
      if (direction === 'get') {
        const path = await remotePath(api, args[0]!, home);
        const entry = await remoteStat(api, path, signal);
        if (!entry) throw new ClientError(`${path}: no such data object`, EXIT.NOT_FOUND);
        if (entry.kind === 'collection') throw usageError(`${path} is a collection: only a data object can go to standard output`);
        const done = await getToStream(api, entry, process.stdout, retry, throttle);
        if (opts.json) process.stderr.write(`${JSON.stringify({ event: 'done', status: 'received', ...done })}\n`);
        return;
      }
      if (args[1]!.endsWith('/')) throw usageError('standard input needs a name: lading put - <collection>/<name>');
      const path = await remotePath(api, args[1]!, home);
      if ((await remoteStat(api, path, signal))?.kind === 'collection') throw usageError(`${path} is a collection: standard input needs a name, e.g. ${path}/data.bin`);
      if (process.stdin.isTTY) throw usageError('standard input is a terminal: pipe the data in, e.g. producer | lading put - name');
      const done = await putFromStream(api, process.stdin, path, { force: opts.force === true, blockBytes: Math.min(opts.chunkSize, STREAM_BLOCK_MAX), retry, ...(throttle ? { throttle } : {}) });
      if (opts.json) process.stdout.write(`${JSON.stringify({ event: 'done', status: 'sent', ...done })}\n`);
      else if (!opts.quiet) process.stderr.write(`lading: sent standard input as ${done.path} (${formatBytes(done.size)}, sha256 ${done.sha256})\n`);
    } finally {
      await api.close();
    }
  });
}

/**
 * `lading get <share link> [<local>|-]`: a data object from a share link, without an account
 * (a password from LADING_SHARE_PASSWORD), into `<local>` (default: its name, here), verified
 * against the server's Repr-Digest and renamed into place only whole.
 */
function getShared(args: string[], opts: TransferOptions): Promise<void> {
  return runClient(async (signal) => {
    if (args.length > 2) throw usageError('get <share link> takes one link and at most one local destination');
    const link = new URL(args[0]!);
    const password = process.env.LADING_SHARE_PASSWORD;
    const api = new ApiClient({ url: link.origin, token: '' });
    try {
      const headers: Record<string, string> = { accept: 'application/octet-stream' };
      if (password) headers.authorization = `Basic ${Buffer.from(`:${password}`).toString('base64')}`;
      const response = await api.stream('GET', link.pathname + link.search, { headers, signal });
      if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
        discard(response.body);
        throw usageError('this link shares a collection: lading get takes a data object\'s link (the collection\'s link followed by /<name>)');
      }
      const name = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(response.headers.get('content-disposition') ?? '')?.[1];
      const fallback = decodeURIComponent(name ?? posix.basename(link.pathname));
      const out = args[1] === undefined ? resolve(basename(fallback)) : args[1] === '-' ? null : resolve(args[1]);
      const local = out && (await localKind(out)).kind === 'dir' ? join(out, basename(fallback)) : out;
      if (local && !opts.force && (await localKind(local)).kind !== 'none') {
        discard(response.body);
        throw new ClientError(`${local} exists: use --force to replace it`, EXIT.CONFLICT);
      }
      const hash = createHash('sha256');
      const throttle = opts.bwlimit ? new Throttle(opts.bwlimit) : undefined;
      const hashed = async function* (body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
        for await (const chunk of throttled(body, throttle, signal)) {
          hash.update(chunk);
          yield chunk;
        }
      };
      const part = local ? `${local}.lading-part` : null;
      try {
        if (part) await pipeline(response.body, hashed, createWriteStream(part), { signal });
        else for await (const chunk of hashed(response.body)) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
      } catch (cause) {
        if (part) await rm(part, { force: true });
        if (signal.aborted) throw cause;
        throw new ClientError(`the download from the link broke off: ${cause instanceof Error ? cause.message : String(cause)}; nothing was kept`, EXIT.FAILED, { cause });
      }
      const sha256 = hash.digest();
      const repr = digestOfHeader(response.headers.get('repr-digest'));
      if (repr && !repr.equals(sha256)) {
        if (part) await rm(part, { force: true });
        throw new ClientError(`the bytes from the link have sha2:${sha256.toString('base64')}, but the server's Repr-Digest is sha2:${repr.toString('base64')}; refused, nothing was kept`, EXIT.INTEGRITY);
      }
      if (part && local) await rename(part, local);
      if (opts.json) process.stderr.write(`${JSON.stringify({ event: 'done', status: 'received', local, sha256: sha256.toString('hex'), verified: repr !== null })}\n`);
      else if (!opts.quiet && local) process.stderr.write(`lading: received ${printable(local)} from the link (sha256 ${sha256.toString('hex')}${repr ? ', verified' : ''})\n`);
    } finally {
      await api.close();
    }
  });
}

/** `lading put <local>... <remote>`. */
export function put(args: string[], opts: TransferOptions): Promise<void> {
  if (args[0] === '-') return stream('put', args, opts);
  return execute(opts, 'sent', async (api, signal, reporter) => {
    if (args.length < 2) throw usageError('put needs a local file or directory and a remote destination');
    const home = homeOf(api);
    const dest = await remotePath(api, args.at(-1)!, home);
    const sources = args.slice(0, -1).map((s) => resolve(s));
    const kinds = await Promise.all(sources.map(localKind));
    kinds.forEach((k, i) => {
      if (k.kind === 'none') throw new ClientError(`${args[i]}: no such file or directory`, EXIT.NOT_FOUND);
      if (k.kind === 'dir' && !opts.recursive) throw usageError(`${args[i]} is a directory: use -r to upload it and everything below it`);
    });
    const there = await remoteStat(api, dest, signal);
    const intoCollection = args.at(-1)!.endsWith('/') || sources.length > 1 || kinds.some((k) => k.kind === 'dir') || there?.kind === 'collection';
    if (intoCollection && there?.kind === 'dataobject') throw new ClientError(`${dest} is a file, not a collection`, EXIT.CONFLICT);
    const files: { abs: string; remote: string; size: number; mtimeMs: number }[] = [];
    const dirs = new Set<string>();
    if (intoCollection) dirs.add(dest);
    for (const [i, source] of sources.entries()) {
      const k = kinds[i]!;
      if (k.kind === 'file') {
        files.push({ abs: source, remote: intoCollection ? posix.join(dest, basename(source)) : dest, size: k.size, mtimeMs: k.mtimeMs });
      } else {
        const tree = await walkLocal(source, { follow: opts.follow === true });
        for (const d of tree.dirs) dirs.add(posix.join(dest, d));
        for (const f of tree.files) if (selected(f.rel, opts)) files.push({ abs: f.abs, remote: posix.join(dest, f.rel), size: f.size, mtimeMs: f.mtimeMs });
        // NOTE: said, not dropped silently: a tree that arrives without them must not look whole.
        for (const k of tree.skipped) process.stderr.write(`lading: warning: skipped ${printable(join(source, ...k.rel.split('/')))}: ${k.why}\n`);
      }
    }
    // What is there already, for --sync: one listing per collection below the destination.
    const existing = new Map<string, RemoteEntry>();
    if (opts.sync && there) {
      if (there.kind === 'dataobject') existing.set(there.path, there);
      else for (const e of (await walkRemote(api, dest, opts.jobs, signal)).files) existing.set(e.path, e);
    }
    const store = new ResumeStore();
    const upload = { resumableAbove: opts.resumableAbove, chunkBytes: opts.chunkSize, store };
    const tasks: Task[] = files.map((f) => ({
      name: f.remote, label: posix.relative(intoCollection ? dest : posix.dirname(dest), f.remote), local: f.abs, remote: f.remote, size: f.size,
      async run(ctx) {
        const job = { local: f.abs, remote: f.remote, size: f.size, mtimeMs: f.mtimeMs, force: opts.force === true, pidAwait: opts.pidAwait === true };
        const known = existing.get(f.remote);
        if (!opts.sync || !known) return uploadFile(ctx, job, upload);
        const theirs = digestOfChecksum(known.checksum);
        if (theirs && (known.size === null || known.size === f.size)) {
          const sha256 = await sha256File(f.abs, f.size);
          if (sha256.equals(theirs)) {
            ctx.onBase(f.size);
            return { status: 'identical', size: f.size, sha256, pid: known.pid, transferred: 0, resumedFrom: 0 };
          }
          return uploadFile(ctx, { ...job, force: true, sha256 }, upload);
        }
        return uploadFile(ctx, { ...job, force: true }, upload);
      },
    }));
    reporter.plan(tasks.length, files.reduce((n, f) => n + f.size, 0));
    return {
      tasks, destinationOf: (t) => t.remote,
      before: () => createCollections(api, leaves(dirs), opts.jobs, signal),
    };
  });
}

/** `lading get <remote>... <local>`. */
export function get(args: string[], opts: TransferOptions): Promise<void> {
  if (/^https?:\/\/[^/]+\/(.+\/)?api\/shared\/./.test(args[0] ?? '')) return getShared(args, opts);
  if (args.at(-1) === '-') return stream('get', args, opts);
  return execute(opts, 'received', async (api, signal, reporter) => {
    if (args.length < 2) throw usageError('get needs a remote data object or collection and a local destination');
    const home = homeOf(api);
    const destArg = args.at(-1)!;
    const dest = resolve(destArg);
    const sources = await Promise.all(args.slice(0, -1).map((s) => remotePath(api, s, home)));
    const entries = await Promise.all(sources.map(async (s) => {
      const e = await remoteStat(api, s, signal);
      if (!e) throw new ClientError(`${s}: no such data object or collection`, EXIT.NOT_FOUND);
      if (e.kind === 'collection' && !opts.recursive) throw usageError(`${s} is a collection: use -r to download it and everything below it`);
      return e;
    }));
    const local = await localKind(dest);
    const intoDir = destArg.endsWith('/') || destArg.endsWith(sep) || sources.length > 1 || entries.some((e) => e.kind === 'collection') || local.kind === 'dir';
    if (intoDir && local.kind === 'file') throw new ClientError(`${dest} is a file, not a directory`, EXIT.CONFLICT);
    const files: { entry: RemoteEntry; local: string }[] = [];
    const dirs = new Set<string>();
    for (const e of entries) {
      if (e.kind === 'dataobject') {
        files.push({ entry: e, local: intoDir ? join(dest, e.name) : dest });
      } else {
        const tree = await walkRemote(api, e.path, opts.jobs, signal);
        for (const d of tree.dirs) dirs.add(join(dest, ...d.split('/')));
        for (const f of tree.files) if (selected(f.rel, opts)) files.push({ entry: f, local: join(dest, ...f.rel.split('/')) });
      }
    }
    if (intoDir) dirs.add(dest);
    const tasks: Task[] = files.map(({ entry, local: path }) => ({
      name: path, label: relative(intoDir ? dest : dirname(dest), path), local: path, remote: entry.path, size: entry.size,
      run: (ctx) => downloadFile(ctx, {
        remote: entry.path, local: path, checksum: entry.checksum, size: entry.size, pid: entry.pid, force: opts.force === true, sync: opts.sync === true,
        modified: entry.modified,
      }),
    }));
    reporter.plan(tasks.length, files.reduce((n, f) => n + (f.entry.size ?? 0), 0));
    return {
      tasks, destinationOf: (t) => t.local,
      before: async () => {
        for (const d of [...dirs].sort()) {
          await mkdir(d, { recursive: true }).catch(async (err: unknown) => {
            // NOTE: a recursive mkdir says ENOENT for a read-only parent; one level says why.
            await mkdir(d).catch((once: unknown) => { throw localFailure(once, d) ?? once; });
            throw localFailure(err, d) ?? err;
          });
        }
      },
    };
  });
}

/**
 * `lading get --zip` / `--bag <remote collection> <local>`: the collection as one archive the
 * server writes, streamed into `<local>.lading-part` and renamed into place only once the
 * transfer ended whole. A transfer the server cuts (a member it could not read whole, whose
 * bytes were not the stored ones) leaves nothing under the name, and exits 1: a cut
 * connection does not say why.
 */
export async function getArchive(args: string[], opts: TransferOptions): Promise<void> {
  await runClient(async (signal) => {
    if (opts.zip && opts.bag) throw usageError('give --zip or --bag, not both');
    if (opts.recursive || opts.sync || opts.manifest) throw usageError('--zip and --bag write one archive: -r, --sync and --manifest do not apply');
    if (args.length !== 2) throw usageError('get --zip needs one remote collection and a local file or directory');
    const format = opts.bag ? 'bag' : 'zip';
    const api = new ApiClient(await resolveTarget({ server: opts.server }));
    try {
      const path = await remotePath(api, args[0]!, homeOf(api));
      const destArg = args[1]!;
      const local = await localKind(resolve(destArg));
      const dest = local.kind === 'dir' || destArg.endsWith('/') || destArg.endsWith(sep)
        ? join(resolve(destArg), `${posix.basename(path) || 'collection'}.zip`) : resolve(destArg);
      if (!opts.force && (await localKind(dest)).kind !== 'none') throw new ClientError(`${dest} exists: use --force to replace it`, EXIT.CONFLICT);
      const part = `${dest}.lading-part`;
      const response = await api.stream('GET', `${api.registeredUrl(path)}?download=${format}`, { signal });
      try {
        await pipeline(response.body, createWriteStream(part), { signal });
        await rename(part, dest);
      } catch (cause) {
        await rm(part, { force: true });
        if (signal.aborted) throw cause;
        throw new ClientError(`${path}: the archive's transfer broke off before its end (a member could not be read whole, or the connection failed); nothing was kept`, EXIT.FAILED, { cause });
      }
      const { size } = await stat(dest);
      if (opts.json) process.stdout.write(`${JSON.stringify({ path, local: dest, format, size, status: 'received' })}\n`);
      else if (!opts.quiet) process.stderr.write(`received ${path} as ${dest} (${size} bytes)\n`);
    } finally {
      await api.close();
    }
  });
}
