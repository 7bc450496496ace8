/**
 * `lading put` and `lading get`: files and directory trees to and from a lading server, N at a
 * time, resumable, verified end to end, with progress for people (`--json` for scripts) and a
 * manifest. Defines the two commands and their options; what they do (`run.ts`: planning, the
 * engine, progress) is loaded when one of them runs, not by every start of `lading`.
 */
import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { withClientOptions } from '../commands.ts';
import { DEFAULT_RETRIES, DEFAULT_RETRY_WAIT_S } from '../api.ts';

const MIB = 1024 * 1024;

export interface TransferOptions {
  server?: string;
  json?: boolean;
  quiet?: boolean;
  recursive?: boolean;
  jobs: number;
  sync?: boolean;
  force?: boolean;
  pidAwait?: boolean;
  manifest?: string;
  resumableAbove: number;
  chunkSize: number;
  progressInterval: number;
  /** Tries after a request's first failure (the server away, a broken connection). */
  retries: number;
  /** The longest pause between two tries, in seconds. */
  retryWait: number;
  /** Globs of the files to transfer (all when none), and of those not to. */
  include?: string[];
  exclude?: string[];
  /** Bytes per second for all transfers together (`--bwlimit`). */
  bwlimit?: number;
  /** Say what would be transferred, transfer nothing. */
  dryRun?: boolean;
  /** `put`: follow symbolic links to directories. */
  follow?: boolean;
  /** `get`: the collection as one ZIP archive (a local file), or as a BagIt bag in one. */
  zip?: boolean;
  bag?: boolean;
}

/** Default parallel transfers: two per core, at most 8 (more only adds contention on one server). */
export function defaultJobs(): number {
  return Math.max(2, Math.min(8, 2 * availableParallelism()));
}

function positiveInt(name: string, min = 1) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number of at least ${min}.`);
    return n;
  };
}

function mebibytes(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number of MiB.`);
    return Math.max(1, Math.round(n * MIB));
  };
}

/** `--bwlimit`'s value in bytes per second. NOTE: the parser is here, not in throttle.ts, which loads only with a transfer. */
function rate(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?(?:\/s)?$/i.exec(value.trim());
  const n = m ? Number(m[1]) * 1024 ** ' KMG'.indexOf((m[2] || ' ').toUpperCase()) : NaN;
  if (!(n >= 1)) throw new InvalidArgumentError('give bytes per second, e.g. 512K, 10M or 1G (KiB, MiB, GiB per second).');
  return n;
}

/** Commander's collector of a repeatable option. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function transferOptions(cmd: Command): Command {
  return withClientOptions(cmd)
    .option('-r, --recursive', 'transfer directories (collections) and everything below them')
    .addOption(new Option('-j, --jobs <n>', 'transfers in flight').default(defaultJobs(), `${defaultJobs()} here: twice the cores, at most 8`).argParser(positiveInt('--jobs')))
    .option('--sync', 'skip files whose size and checksum already match; replace those that differ')
    .option('--force', 'overwrite what exists, even when it is identical')
    .option('--manifest <file>', 'write what was transferred as JSON lines: path, size, sha256, pid')
    .option('-n, --dry-run', 'say what would be transferred (one line each), transfer nothing')
    .addOption(new Option('--bwlimit <rate>', 'at most this many bytes per second, all transfers together: 512K, 10M, 1G (KiB, MiB, GiB)').argParser(rate))
    .option('--include <glob>', 'only files that match (repeatable; a glob with / matches the path below the tree, one without the name: *.h5, raw/**)', collect, [])
    .option('--exclude <glob>', 'not files that match (repeatable; as --include)', collect, [])
    .addOption(new Option('--retries <n>', 'tries after a request failed (the server away, a broken connection); a server that says when to come back (Retry-After) is waited for without using them up').default(DEFAULT_RETRIES).argParser(positiveInt('--retries', 0)))
    .addOption(new Option('--retry-wait <s>', 'the longest pause between two tries, in seconds (pauses double from 1 s)').default(DEFAULT_RETRY_WAIT_S).argParser(positiveInt('--retry-wait')))
    .addOption(new Option('--resumable-above <MiB>', 'files larger than this use resumable uploads').default(64 * MIB, '64').argParser(mebibytes('--resumable-above')).hideHelp())
    .addOption(new Option('--chunk-size <MiB>', 'bytes per resumable-upload request').default(64 * MIB, '64').argParser(mebibytes('--chunk-size')).hideHelp())
    .addOption(new Option('--progress-interval <s>', 'seconds between progress lines when not on a terminal').default(10_000, '10').argParser((v) => positiveInt('--progress-interval')(v) * 1000).hideHelp());
}

function putCommand(cli: Command): void {
  transferOptions(cli.command('put')
    .description('upload files (and with -r directory trees) to a collection; run it again to resume')
    .argument('<source...>', 'local files or directories, then the remote destination')
    .usage('[options] <local>... <remote>')
    .option('--pid-await', 'wait for each file\'s PID (up to 10 s each) and print it')
    .option('-L, --follow', 'follow symbolic links to directories (each directory once); without it they are skipped, with a warning'))
    .action(async (args: string[], opts: TransferOptions) => (await import('./run.ts')).put(args, opts));
}

function getCommand(cli: Command): void {
  transferOptions(cli.command('get')
    .description('download data objects (and with -r collections) to local files; run it again to resume')
    .argument('<source...>', 'remote data objects or collections, then the local destination')
    .usage('[options] <remote>... <local>')
    .option('--zip', 'download one collection as one ZIP archive: <local> is the file (or a directory to put <name>.zip in)')
    .option('--bag', 'as --zip, a BagIt bag (RFC 8493) in a ZIP archive, with SHA-256 manifests and the PIDs'))
    .action(async (args: string[], opts: TransferOptions) => {
      const run = await import('./run.ts');
      return opts.zip || opts.bag ? run.getArchive(args, opts) : run.get(args, opts);
    });
}

/** Adds `put` and `get` to the `lading` command. */
export function registerTransferCommands(cli: Command): void {
  putCommand(cli);
  getCommand(cli);
}
