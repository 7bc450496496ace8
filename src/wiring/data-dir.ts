/**
 * The data directory: checking that it is a directory lading can write (only `serve` and
 * `init` create one, so a mistyped `--data` never becomes a new deployment), and the lock that
 * makes one `lading serve` its owner. Knows nothing of what is stored inside it.
 */
import { constants } from 'node:fs';
import { access, mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ConfigError } from './config.ts';
import { OperatorError } from './operator-error.ts';

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'error';
}

/**
 * Resolves with the absolute path of the data directory `dir`, creating it (mode 0700) when
 * `create` is set. Rejects with `ConfigError` naming the directory when it is missing (and
 * `create` is not set), is not a directory, or cannot be created or written.
 */
export async function openDataDir(dir: string, options: { create: boolean }): Promise<string> {
  const path = resolve(dir);
  const info = await stat(path).catch((err: unknown) => {
    if (errorCode(err) === 'ENOENT') return null;
    throw new ConfigError(`data: cannot use '${path}' (${errorCode(err)}).`);
  });
  if (!info) {
    if (!options.create) {
      throw new ConfigError(`data: '${path}' does not exist; name an existing data directory with --data, or create one with 'lading init' or 'lading serve'.`);
    }
    await mkdir(path, { recursive: true, mode: 0o700 }).catch((err: unknown) => {
      throw new ConfigError(`data: cannot create '${path}' (${errorCode(err)}).`);
    });
    return path;
  }
  if (!info.isDirectory()) throw new ConfigError(`data: '${path}' is not a directory.`);
  await access(path, constants.W_OK | constants.X_OK).catch((err: unknown) => {
    throw new ConfigError(`data: cannot write in '${path}' (${errorCode(err)}).`);
  });
  return path;
}

/** Held by the `lading serve` that owns a data directory; `release` ends the ownership. */
export interface DataDirLock {
  release(): void;
}

/** SQLite's "database is locked" result code. */
const SQLITE_BUSY = 5;

/**
 * Makes this process the one `lading serve` of the data directory `dir` (an existing, writable
 * directory) until `release` or its exit, however it exits. Rejects with `OperatorError` naming
 * the process that holds the directory when another one does.
 *
 * NOTE: the lock is the kernel's, not a file's existence: an exclusive SQLite transaction on
 * `<dir>/serve.lock`, kept open. SQLite takes it with POSIX record locks (fcntl), which Node
 * cannot take by itself; the kernel drops them when the process ends — even by kill -9 — so
 * no stale lock is ever left to clean up or misjudge, and a recycled pid cannot fool it, as it
 * could a pid file checked for liveness. The holder's pid comes from the kernel too
 * (`/proc/locks`, on Linux).
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = join(dir, 'serve.lock');
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { timeout: 0 });
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db?.close();
    if ((err as { errcode?: number }).errcode !== SQLITE_BUSY) {
      throw new OperatorError(`data: cannot lock '${file}' (${(err as Error).message}).`);
    }
    const pid = await lockHolder(file);
    throw new OperatorError(`the data directory '${dir}' is in use by another lading serve (${pid ? `pid ${pid}` : 'a process this one cannot see'}): with the SQLite catalog one server owns a data directory; stop that one first, or give this one another --data.`);
  }
  const held = db;
  return { release: () => held.close() };
}

/**
 * The pid of the process holding a POSIX lock on `file`, as the kernel lists it in
 * `/proc/locks` (`1: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>`), or
 * null where there is no such list or the holder lives in another pid namespace (pid 0).
 */
async function lockHolder(file: string): Promise<number | null> {
  try {
    const { dev, ino } = await stat(file, { bigint: true });
    // NOTE: glibc's encoding of st_dev; /proc/locks prints major and minor in hex.
    const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
    const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
    const id = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${ino}`;
    for (const line of (await readFile('/proc/locks', 'utf8')).split('\n')) {
      const m = /^\d+:\s+POSIX\s+\S+\s+\S+\s+(\d+)\s+(\S+)\s/.exec(line);
      if (m && m[2] === id && m[1] !== '0') return Number(m[1]);
    }
  } catch { /* no /proc/locks (not Linux): the holder stays unnamed */ }
  return null;
}
