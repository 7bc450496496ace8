/**
 * `lading backup` and `lading restore` of an embedded deployment (SQLite catalog, bytes in a
 * directory), while its server runs. A backup is a directory laid out as a data directory:
 * `catalog.sqlite` (a snapshot taken with SQLite's online backup API), `resource/blobs/…` (the
 * bytes that snapshot refers to), `ca/` and `keys/` (the CA, the master key the CA key and
 * every other sealed secret are sealed under, the CA issuer's secret), the configuration file
 * it was taken with (`config.json`, when there was one), and `backup.json`, written last: a
 * directory without it is an unfinished backup.
 *
 * Consistency: the backup first holds the data directory (`backup-hold.ts`: no bytes are
 * deleted meanwhile), then takes the catalog's snapshot, then copies the bytes the snapshot
 * refers to. Stored bytes never change under their key once committed, and objects committed
 * after the snapshot are simply not in it, so the copy is what the catalog said at one instant.
 * Not in a backup: resumable uploads in progress (their staged bytes still change) — after a
 * restore their clients start them again.
 *
 * Prints nothing itself and never reads, prints or logs a secret's content: key files are
 * copied as files.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, open, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DatabaseSync, backup as sqliteBackup } from 'node:sqlite';
import type { Config } from './config.ts';
import { openDataDir } from './data-dir.ts';
import { OperatorError } from './operator-error.ts';
import { takeBackupHold } from './backup-hold.ts';
import { VERSION } from './version.ts';

const MANIFEST = 'backup.json';
const FORMAT = 'lading-backup';
/** Files copied at once: enough to keep a disk busy, few enough for a small machine. */
const PARALLEL = 4;
/** The whole catalog in one step of the backup API: one read transaction, never restarted by a writer. */
const ALL_PAGES = 2 ** 31 - 1;

/** What `backup.json` records. */
interface Manifest {
  format: typeof FORMAT;
  version: 1;
  lading: string;
  created: string;
  zone: string;
  objects: number;
  files: number;
  bytes: number;
  config: boolean;
}

/** What a backup or a restore did, for the command to print. */
export interface BackupSummary {
  dir: string;
  objects: number;
  /** Objects whose bytes are files (the rest are kept in the catalog itself). */
  files: number;
  bytes: number;
  /** Objects whose bytes were missing or did not match their checksum, by path (at most 20). */
  problems: string[];
  problemCount: number;
  /** Whether a configuration file is part of the backup. */
  config: boolean;
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'error';
}

/** Rejects with `OperatorError` unless `config` is the embedded deployment a backup covers. */
function requireEmbedded(config: Config, what: 'backup' | 'restore'): void {
  if (config.catalog.driver !== 'sqlite' || config.resource.driver !== 'fs') {
    throw new OperatorError(`${what}: lading ${what} covers the SQLite catalog with files on disk; with PostgreSQL or S3 follow "Backup and restore" in docs/operators.md.`);
  }
}

/** Creates `dir` (0700) when missing; rejects with `OperatorError` when it holds anything. */
async function emptyDirectory(dir: string, what: string): Promise<void> {
  const entries = await readdir(dir).catch((err: unknown) => {
    if (code(err) === 'ENOENT') return null;
    throw new OperatorError(`${what}: cannot use '${dir}' (${code(err)}).`);
  });
  if (entries === null) {
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch((err: unknown) => {
      throw new OperatorError(`${what}: cannot create '${dir}' (${code(err)}).`);
    });
    return;
  }
  if (entries.length > 0) throw new OperatorError(`${what}: '${dir}' is not empty; name a new or empty directory.`);
}

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir + sep);

/** The data objects whose bytes a catalog file refers to. */
interface ObjectRow {
  path: string;
  blob: string;
  size: number | null;
  checksum: string | null;
  inline: Uint8Array | null;
}

function objectsOf(db: DatabaseSync): Iterable<ObjectRow> {
  const hasInline = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'inline_blobs'").get() !== undefined;
  const sql = hasInline
    ? `SELECT e.path, e.blob, e.size, e.checksum, i.bytes AS inline FROM entities e LEFT JOIN inline_blobs i ON i.blob = e.blob
       WHERE e.kind = 'dataobject' AND e.blob IS NOT NULL ORDER BY e.blob`
    : `SELECT path, blob, size, checksum, NULL AS inline FROM entities WHERE kind = 'dataobject' AND blob IS NOT NULL ORDER BY blob`;
  return db.prepare(sql).iterate() as Iterable<ObjectRow>;
}

/** Where the fs resource keeps the bytes of `blob` under `root` (see `drivers/resource/fs.ts`). */
const blobFile = (root: string, blob: string): string => join(root, 'blobs', blob.slice(0, 2), blob);

const checksumOf = (digest: Buffer): string => `sha2:${digest.toString('base64')}`;

/**
 * Copies `from` to `to` (new, flushed before closing) or, without `to`, only reads it; resolves
 * with its size and iRODS-style checksum.
 */
async function hashFile(from: string, to: string | null): Promise<{ size: number; checksum: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, to ? chunk : undefined);
    },
  });
  if (to) {
    await mkdir(dirname(to), { recursive: true, mode: 0o700 });
    await pipeline(createReadStream(from), meter, createWriteStream(to, { flags: 'wx', mode: 0o600, flush: true }));
  } else {
    await pipeline(createReadStream(from), meter, async (source: AsyncIterable<unknown>) => {
      for await (const _ of source) { /* drained */ }
    });
  }
  return { size, checksum: checksumOf(hash.digest()) };
}

/**
 * Runs `copy` over every object of the catalog `db`, `PARALLEL` at a time, and counts. An object
 * whose bytes are missing or differ from its checksum is a problem, named by path.
 */
async function eachObject(db: DatabaseSync, root: string, to: string | null): Promise<Omit<BackupSummary, 'dir' | 'config'>> {
  const summary = { objects: 0, files: 0, bytes: 0, problems: [] as string[], problemCount: 0 };
  const problem = (path: string, what: string): void => {
    summary.problemCount++;
    if (summary.problems.length < 20) summary.problems.push(`${path} (${what})`);
  };
  const rows = objectsOf(db)[Symbol.iterator]();
  const worker = async (): Promise<void> => {
    for (let next = rows.next(); !next.done; next = rows.next()) {
      const o = next.value;
      summary.objects++;
      let got: { size: number; checksum: string };
      if (o.inline) {
        got = { size: o.inline.length, checksum: checksumOf(createHash('sha256').update(o.inline).digest()) };
      } else {
        summary.files++;
        try {
          got = await hashFile(blobFile(root, o.blob), to === null ? null : blobFile(to, o.blob));
        } catch (err) {
          problem(o.path, code(err) === 'ENOENT' ? 'bytes missing' : `cannot read: ${code(err)}`);
          continue;
        }
      }
      summary.bytes += got.size;
      if (o.checksum !== null && o.checksum !== got.checksum) problem(o.path, 'SHA-256 differs from the catalog');
      else if (o.size !== null && o.size !== got.size) problem(o.path, 'size differs from the catalog');
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return summary;
}

/** Copies the regular files of `from` (not below) into `to`, keeping their modes; a missing `from` copies nothing. */
async function copyFiles(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch((err: unknown) => {
    if (code(err) === 'ENOENT') return [];
    throw err;
  });
  await mkdir(to, { recursive: true, mode: 0o700 });
  for (const e of entries) {
    if (!e.isFile() || e.name.endsWith('.tmp')) continue;
    await copyOne(join(from, e.name), join(to, e.name));
  }
}

async function copyOne(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  await copyFile(from, to);
  await chmod(to, (await stat(from)).mode & 0o777);
  const handle = await open(to, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Backs up the data directory `config.data` into `dest`, a new or empty directory outside it,
 * while a server may be running on it; `configFile` is the configuration file to keep with it.
 * Rejects with `ConfigError` when the data directory does not exist, with `OperatorError` when
 * `dest` is not empty or inside the data directory, the deployment is not the embedded one,
 * there is no catalog, or another backup runs. Resolves with what it copied; `problems` names
 * objects whose bytes the data directory lacked or held damaged (the backup is still whole
 * apart from them).
 */
export async function backupDataDir(config: Config, dest: string, configFile: string | null): Promise<BackupSummary> {
  const dataDir = await openDataDir(config.data, { create: false });
  requireEmbedded(config, 'backup');
  const target = resolve(dest);
  if (within(target, dataDir)) throw new OperatorError(`backup: '${target}' is inside the data directory '${dataDir}'; name a directory outside it.`);
  const catalogFile = join(dataDir, 'catalog.sqlite');
  if (((await stat(catalogFile).catch(() => null))?.size ?? 0) === 0) {
    throw new OperatorError(`backup: '${dataDir}' holds no catalog (catalog.sqlite); is it a lading data directory?`);
  }
  await emptyDirectory(target, 'backup');
  const hold = takeBackupHold(dataDir);
  try {
    const source = new DatabaseSync(catalogFile, { readOnly: true, timeout: 10_000 });
    try {
      await sqliteBackup(source, join(target, 'catalog.sqlite'), { rate: ALL_PAGES });
    } finally {
      source.close();
    }
    // NOTE: the snapshot keeps the source's journal mode (WAL); set back to a rollback journal
    // it is one self-contained file, and the server it is restored for turns WAL on again.
    const snapshot = new DatabaseSync(join(target, 'catalog.sqlite'));
    snapshot.exec('PRAGMA journal_mode = DELETE');
    await chmod(join(target, 'catalog.sqlite'), 0o600);
    let copied: Awaited<ReturnType<typeof eachObject>>;
    try {
      copied = await eachObject(snapshot, config.resource.path ?? join(dataDir, 'resource'), join(target, 'resource'));
    } finally {
      snapshot.close();
    }
    // NOTE: the bytes are copied; deletions may go on while the keys are.
    hold.release();
    await copyFiles(join(dataDir, 'ca'), join(target, 'ca'));
    await copyFiles(join(dataDir, 'keys'), join(target, 'keys'));
    // Keys kept outside the data directory go where a data directory keeps them by default.
    if (config.credentials.key_file) await copyOne(config.credentials.key_file, join(target, 'keys', 'master.key'));
    if (config.ca.issuer_secret_file && config.ca.issuer === 'embedded') {
      await copyOne(config.ca.issuer_secret_file, join(target, 'keys', 'ca-issuer.secret'));
    }
    if (configFile) await copyOne(configFile, join(target, 'config.json'));
    const manifest: Manifest = {
      format: FORMAT, version: 1, lading: VERSION, created: new Date().toISOString(), zone: config.zone,
      objects: copied.objects, files: copied.files, bytes: copied.bytes, config: configFile !== null,
    };
    await writeFile(join(target, MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600, flush: true });
    return { dir: target, ...copied, config: manifest.config };
  } finally {
    hold.release();
  }
}

/**
 * Restores the backup in `from` into the data directory `config.data`, which must be new or
 * empty (as must `resource.path` when set), then checks every object's bytes against the
 * SHA-256 the catalog records. Rejects with `OperatorError` when `from` is not a finished
 * backup or a target is not empty; resolves with what it restored, `problems` naming objects
 * whose bytes did not verify.
 */
export async function restoreDataDir(config: Config, from: string): Promise<BackupSummary> {
  requireEmbedded(config, 'restore');
  const source = resolve(from);
  const manifest = await readFile(join(source, MANIFEST), 'utf8').then((text) => JSON.parse(text) as Manifest, (err: unknown) => {
    if (code(err) === 'ENOENT') throw new OperatorError(`restore: '${source}' is not a finished lading backup (no ${MANIFEST}).`);
    throw new OperatorError(`restore: cannot read '${join(source, MANIFEST)}' (${code(err)}).`);
  }).catch((err: unknown) => {
    if (err instanceof OperatorError) throw err;
    throw new OperatorError(`restore: '${join(source, MANIFEST)}' is not a lading backup's manifest.`);
  });
  if (manifest.format !== FORMAT || manifest.version !== 1) throw new OperatorError(`restore: '${source}' is not a lading backup this version can read.`);
  const dataDir = resolve(config.data);
  if (within(dataDir, source) || within(source, dataDir)) throw new OperatorError(`restore: the data directory '${dataDir}' and the backup '${source}' overlap; name another --data.`);
  await emptyDirectory(dataDir, 'restore');
  const root = config.resource.path ? resolve(config.resource.path) : join(dataDir, 'resource');
  if (config.resource.path) await emptyDirectory(root, 'restore (resource.path)');
  await copyOne(join(source, 'catalog.sqlite'), join(dataDir, 'catalog.sqlite'));
  await copyFiles(join(source, 'ca'), join(dataDir, 'ca'));
  await copyFiles(join(source, 'keys'), join(dataDir, 'keys'));
  const db = new DatabaseSync(join(dataDir, 'catalog.sqlite'), { readOnly: true });
  let restored: Awaited<ReturnType<typeof eachObject>>;
  try {
    // NOTE: copied, then read back from where they now are: what is verified is what stays.
    restored = await eachObject(db, join(source, 'resource'), root);
    if (restored.problemCount === 0) restored = await eachObject(db, root, null);
  } finally {
    db.close();
  }
  return { dir: dataDir, ...restored, config: manifest.config };
}

/** The lines a command prints for `s`; `dir` of a restore's backup for its configuration. */
export function describeBackup(kind: 'backup' | 'restore', s: BackupSummary, backupDir?: string): string {
  const counts = `${s.objects} object${s.objects === 1 ? '' : 's'} (${s.files} as files), ${s.bytes} bytes`;
  const lines = kind === 'backup'
    ? [`backup written to ${s.dir}: ${counts}; catalog snapshot, CA and keys copied${s.config ? ', with the configuration file' : ''}`]
    : [`restored into ${s.dir}: ${counts}; ${s.problemCount === 0 ? `every object matches its SHA-256` : `${s.problemCount} did not verify`}`];
  if (kind === 'restore' && s.config && backupDir) lines.push(`the configuration it was taken with is ${join(resolve(backupDir), 'config.json')}: check its data and path keys before using it`);
  return lines.join('\n') + '\n';
}
