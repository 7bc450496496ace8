/**
 * The hold a `lading backup` puts on a data directory: while it is held, no process working on
 * that directory deletes stored bytes (replaced contents, purged trash, swept leftovers stay
 * until the hold ends; the catalog keeps tracking them, and the sweeper deletes them later).
 * That is what makes copying the bytes after the catalog's snapshot consistent: nothing the
 * snapshot refers to can vanish before it is copied. Knows nothing of what a backup copies.
 *
 * NOTE: the hold is the kernel's, as the serve lock is (see `lockDataDir`): an exclusive
 * SQLite transaction on `<dir>/backup.lock`, kept open by the backup. The kernel drops it when
 * the backup ends, however it ends, so a crashed backup never leaves bytes undeletable. A
 * process that deletes first asks for the file's write lock, without waiting: busy means held.
 *
 * Why a look just before the delete is enough: bytes are deleted only after the catalog commit
 * that stopped referring to them. If the look finds no hold, the backup takes it later, and
 * takes its snapshot later still, so that snapshot already does not refer to those bytes.
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { LadingError } from '../core/errors.ts';
import type { Resource } from '../core/ports.ts';
import { OperatorError } from './operator-error.ts';

/** SQLite's "database is locked" result code. */
const SQLITE_BUSY = 5;

const LOCK_FILE = 'backup.lock';

/** Whether a backup holds the data directory `dir`, asked anew at each call. */
export interface BackupHoldProbe {
  held(): boolean;
  close(): void;
}

/**
 * A probe of the hold on the data directory `dir` (an existing directory). A look costs one
 * lock request to the kernel; the file is opened once.
 */
export function probeBackupHold(dir: string): BackupHoldProbe {
  let db: DatabaseSync | null = null;
  return {
    held() {
      try {
        db ??= new DatabaseSync(join(dir, LOCK_FILE), { timeout: 0 });
        db.exec('BEGIN IMMEDIATE');
        db.exec('ROLLBACK');
        return false;
      } catch (err) {
        if ((err as { errcode?: number }).errcode === SQLITE_BUSY) return true;
        // NOTE: a lock file that cannot be opened cannot be held by a backup either (the backup
        // opens it with the same rights): deletions go on.
        return false;
      }
    },
    close() {
      db?.close();
      db = null;
    },
  };
}

/** Held by a running backup; `release` ends the hold (idempotent). */
export interface BackupHold {
  release(): void;
}

/**
 * Takes the hold on the data directory `dir`, waiting up to `waitMs` for a process that is
 * looking at it right now. Rejects with `OperatorError` when another backup holds it.
 */
export function takeBackupHold(dir: string, waitMs = 10_000): BackupHold {
  const file = join(dir, LOCK_FILE);
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { timeout: waitMs });
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db?.close();
    if ((err as { errcode?: number }).errcode === SQLITE_BUSY) {
      throw new OperatorError(`backup: another lading backup of '${dir}' is running; wait for it to end.`);
    }
    throw new OperatorError(`backup: cannot lock '${file}' (${(err as Error).message}).`);
  }
  let held: DatabaseSync | null = db;
  return {
    release() {
      held?.close();
      held = null;
    },
  };
}

/**
 * `resource` whose `delete` is refused with `UNAVAILABLE` while `probe` says a backup holds the
 * data directory. Every caller of `delete` keeps the bytes tracked in the catalog when it
 * fails, so they are deleted by a later sweep instead.
 */
export function holdDeletionsDuringBackup(resource: Resource, probe: BackupHoldProbe): Resource {
  return new Proxy(resource, {
    get(target, key, receiver) {
      if (key === 'delete') {
        return async (blob: string) => {
          if (probe.held()) throw new LadingError('UNAVAILABLE', 'A backup of the data directory is running: bytes are kept until it ends, then swept.');
          return target.delete(blob);
        };
      }
      if (key === 'close') {
        return async () => {
          probe.close();
          return target.close();
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
