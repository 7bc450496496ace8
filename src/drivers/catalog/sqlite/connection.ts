/**
 * The connection the roles of the SQLite catalog share: opens the database file, brings its
 * schema up to date, and gives the roles a write transaction, statements prepared once, and
 * the group commit that makes committed transactions durable. It holds no role's SQL.
 */
import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementResultingChanges, type StatementSync } from 'node:sqlite';
import { fileFlushGroup, flushGroup } from '../../flush-group.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';

export type Row = Record<string, SQLInputValue>;

/** A prepared statement as the roles use it (positional parameters). */
export interface Statement {
  run(...params: SQLInputValue[]): StatementResultingChanges;
  get(...params: SQLInputValue[]): Record<string, SQLOutputValue> | undefined;
  all(...params: SQLInputValue[]): Record<string, SQLOutputValue>[];
  iterate(...params: SQLInputValue[]): ReturnType<StatementSync['iterate']>;
}

/** An open SQLite catalog database. */
export interface SqliteConnection {
  /**
   * Runs `fn` in one write transaction (`BEGIN IMMEDIATE`), committed when it returns and
   * rolled back when it throws. Not re-entrant: helpers meant for use inside a transaction
   * take the connection and never open one.
   */
  tx<T>(fn: () => T): T;
  /** The statement for `sql`, prepared on its first use and reused after. */
  q(sql: string): Statement;
  /**
   * How many statements run through `q` have changed rows so far (rolled-back ones included):
   * a caller compares two readings to learn whether it wrote.
   */
  changes(): number;
  /**
   * The value `read` returns for `key`, remembered until the database next changes: a
   * statement of this connection that changed rows, a rolled-back transaction, or a commit by
   * any other connection to the file (another process included; seen from the next turn of the
   * event loop after it, see `epoch` below). For the reads on every
   * request's path (the session, the user, the entity, the access level). `read` must be a
   * pure function of the database's contents for `key`; the value is frozen (shallowly) and
   * shared by every caller until then. At most `MEMO_ENTRIES` values are kept.
   */
  memo<T>(key: string, read: () => T): T;
  /**
   * Resolves once every transaction committed before the call is on disk (it survives a power
   * cut); concurrent callers share one flush of the write-ahead log (group commit). Rejects
   * when the flush fails, and always once a flush of the database file has failed (the disk
   * is failing: nothing more is confirmed; the log keeps what it holds).
   */
  durable(): Promise<void>;
  /** Flushes of the write-ahead log so far (tests). */
  readonly flushes: number;
  /** Closes the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * The tables no remembered read looks at, and that no table a remembered read looks at
 * references (so no cascade reaches one from them): a statement that changes only one of
 * these leaves what `memo` remembers valid. Blob tracking, jobs, PID records, uploads, shares
 * and the provider's records change at every upload; dropping the remembered session, user
 * and access levels for each of them made a write-heavy load read them again.
 * NOTE: a read of one of these tables must never be remembered; a test holds `memo`'s
 * callers to that.
 */
export const UNREMEMBERED_TABLES: ReadonlySet<string> = new Set([
  'blobs', 'inline_blobs', 'nodes', 'jobs', 'handles', 'uploads', 'shares', 'publication_events', 'oidc_records', 'oidc_counters', 'schema_migrations',
]);

const WRITTEN_TABLE = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?[\s(]/i;

/**
 * Whether a statement may change what a remembered read returns: any statement but a plain
 * INSERT, UPDATE or DELETE of one of `UNREMEMBERED_TABLES` (reads change nothing, but are
 * counted only when they report changed rows, which they never do).
 */
export function mayChangeRemembered(sql: string): boolean {
  const table = WRITTEN_TABLE.exec(sql)?.[1];
  return table === undefined || !UNREMEMBERED_TABLES.has(table.toLowerCase());
}

/** How many values `memo` keeps at most (a session row holds its sealed credential, ~8 KiB). */
export const MEMO_ENTRIES = 2048;

/** How many changed statements of a connection lead to a checkpoint of the log (see `checkpoint`). */
export const CHECKPOINT_AFTER = 512;
/**
 * How many pages the log may hold before a checkpoint also copies, blocking, what was committed
 * while it ran, so that the log can start again from its beginning (see `checkpoint`): 64 MiB
 * of 4 KiB pages.
 */
export const LOG_PAGES = 16384;

/** The steps of a checkpoint, in order, as `OpenSqliteOptions.onCheckpoint` reports them. */
export type CheckpointStep = 'snapshot' | 'log flushed' | 'copied' | 'database flushed' | 'released';

export interface OpenSqliteOptions {
  /** Changed statements between checkpoints (default `CHECKPOINT_AFTER`; tests use fewer). */
  checkpointAfter?: number;
  /** Pages in the log past which a checkpoint catches up (default `LOG_PAGES`; tests use fewer). */
  logPages?: number;
  /** Called at each step of a checkpoint (tests). */
  onCheckpoint?: (step: CheckpointStep) => void;
}

/** Opens (creating when missing) the database at `file` and applies the missing migrations. */
export function openSqlite(file: string, options: OpenSqliteOptions = {}): SqliteConnection {
  const db = new DatabaseSync(file);
  // NOTE: in WAL mode SQLite flushes nothing at a commit unless synchronous = FULL, which
  // flushes at every commit, one at a time, blocking the event loop for each. Instead
  // `durable` flushes the log from the thread pool, once for all the commits waiting on it,
  // and a commit is answered only after that (see sqlite.ts): what a crash loses was never
  // acknowledged. What synchronous = NORMAL adds to that are the flushes around checkpoints,
  // which SQLite runs inside a commit, on the event loop: waiting for them was a fifth of a
  // small upload's time. So synchronous is OFF and `checkpoint` does those flushes from the
  // thread pool, in the order SQLite would (see there); automatic checkpoints are off.
  // A file system without shared memory for the log keeps the rollback journal: SQLite then
  // flushes at every commit itself (FULL), and there is no log to flush here.
  const walMode = String((db.prepare('PRAGMA journal_mode = WAL').get() as Row).journal_mode) === 'wal';
  const memory = !walMode || file === ':memory:' || file === '';
  db.exec(`PRAGMA synchronous = ${memory ? 'FULL' : 'OFF'}; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;`);
  // NOTE: a log that grew past its usual size under a burst is cut back when it starts again.
  if (!memory) db.exec(`PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${(options.logPages ?? LOG_PAGES) * 4096}`);
  migrate(db);
  let written = 0;
  // NOTE: `epoch` moves whenever what a read may see could have changed. PRAGMA data_version
  // changes with every commit of another connection (not this one's); this connection's own
  // changes move `written`, and a rollback undoes changes already counted, so it moves the
  // epoch as well. Asking data_version opens a read transaction (shared-memory locks: ~15 µs,
  // as much as the reads it saves), so it is asked once per turn of the event loop: a commit of
  // another process is seen from the next turn on.
  let epoch = 0;
  const dataVersionStatement = db.prepare('PRAGMA data_version');
  const dataVersion = (): number => Number((dataVersionStatement.get() as Row).data_version);
  let seenDataVersion = dataVersion();
  let askedThisTurn = false;
  const nextTurn = (): void => {
    askedThisTurn = false;
  };
  let memoEpoch = -1;
  // NOTE: a plain map, emptied whenever the epoch moves and trimmed oldest first: on a busy
  // server it rarely lives long enough for recency to matter, and a hit costs one lookup.
  const memos = new Map<string, { value: unknown }>();
  // NOTE: the log file stays the same while this connection is open (SQLite removes it only
  // when the last connection closes), so one descriptor serves every flush, SQLite's writes
  // included.
  const wal = memory ? null : fileFlushGroup(`${file}-wal`, 'datasync');
  const group = wal ?? flushGroup(async () => {});
  const database = fileFlushGroup(file, 'datasync');

  // NOTE: a checkpoint copies pages of the log into the database file, after which SQLite may
  // start writing the log from its beginning again. With synchronous = OFF it flushes neither
  // file, so this does what NORMAL would, without blocking the event loop while the disk works:
  //  1. a second connection (`guard`) opens a read transaction: its snapshot is the log as it
  //     is now, and while it reads, no checkpoint copies a page past that snapshot and the log
  //     is not restarted;
  //  2. the log is flushed (the group's flush, shared with commits): every page the checkpoint
  //     may copy is on disk in the log, so the database file never holds a page of a
  //     transaction a power cut could take back;
  //  3. the checkpoint copies the pages (PASSIVE: it waits for no one, on the event loop, with
  //     no flush; writes go to the page cache);
  //  4. the database file is flushed, from the thread pool;
  //  5. the guard's transaction ends: only now may the log be restarted over the copied pages;
  //     what was committed since the snapshot is copied as SQLite would (see there).
  // If a flush of the database file fails, the guard is kept: the log is never restarted and
  // keeps every page, and every later `durable` rejects with that error (the disk is failing).
  const checkpointAfter = options.checkpointAfter ?? CHECKPOINT_AFTER;
  const logPages = options.logPages ?? LOG_PAGES;
  let checkpointedAt = 0;
  let checkpointing: Promise<void> | null = null;
  let guard: DatabaseSync | null = null;
  let broken: { err: unknown } | null = null;
  const step = (name: CheckpointStep): void => options.onCheckpoint?.(name);
  const checkpoint = async (): Promise<void> => {
    const reader = (guard ??= new DatabaseSync(file, { timeout: 10000 }));
    try {
      reader.exec('BEGIN');
      // The read transaction, and with it the snapshot, begins at the first read.
      reader.prepare('SELECT count(*) FROM schema_migrations').get();
    } catch {
      // NOTE: the database is busy (another process recovering it): the next checkpoint tries again.
      if (reader.isTransaction) reader.exec('ROLLBACK');
      return;
    }
    step('snapshot');
    let release = true;
    let catchUp = false;
    try {
      await group.flush();
      step('log flushed');
      if (!db.isOpen) return;
      const { log } = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get() as Row;
      catchUp = Number(log) >= logPages;
      step('copied');
      try {
        await database.flush();
      } catch (err) {
        release = false;
        broken = { err };
        return;
      }
      step('database flushed');
    } catch {
      // NOTE: a failed flush of the log fails the commits waiting on it; the next checkpoint
      // tries again.
    } finally {
      if (release) {
        reader.exec('COMMIT');
        // NOTE: what was committed meanwhile is still only in the log, and SQLite restarts the
        // log only once it is all copied: under a steady load the log keeps growing. Once it
        // holds `logPages`, the rest is copied now, as SQLite itself would (NORMAL: the log
        // flushed before, the database file after, and the copy recorded only once that
        // succeeded), on the event loop: a few commits' worth of pages, but two flushes to
        // wait for, which is what the steps above spare the other checkpoints. A failure
        // leaves the log as it was, for the next checkpoint.
        if (catchUp && db.isOpen) {
          try {
            db.exec('PRAGMA synchronous = NORMAL');
            db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get();
          } catch {
            // the next checkpoint tries again
          } finally {
            db.exec('PRAGMA synchronous = OFF');
          }
        }
        step('released');
      }
    }
  };
  const maybeCheckpoint = (): void => {
    if (memory || checkpointing || broken || written - checkpointedAt < checkpointAfter) return;
    checkpointedAt = written;
    // NOTE: after the statement that got here, and the transaction around it, have finished.
    checkpointing = Promise.resolve().then(checkpoint).catch(() => {}).finally(() => {
      checkpointing = null;
    });
  };

  // NOTE: preparing a statement costs more than running it; every SQL text is prepared once.
  // The texts are a fixed set (accessLevel's and listEntitiesHeldBy's vary only with path
  // depth and group count).
  const statements = new Map<string, Statement>();
  // NOTE: counting here costs nothing per read, where asking SQLite (total_changes()) around
  // every catalog call was a few percent of a metadata GET.
  const counted = (statement: StatementSync, sql: string): Statement => {
    const movesEpoch = mayChangeRemembered(sql);
    return {
      run: (...params: SQLInputValue[]) => {
        const result = statement.run(...params);
        if (Number(result.changes) > 0) {
          written++;
          if (movesEpoch) epoch++;
          maybeCheckpoint();
        }
        return result;
      },
      get: (...params: SQLInputValue[]) => statement.get(...params),
      all: (...params: SQLInputValue[]) => statement.all(...params),
      iterate: (...params: SQLInputValue[]) => statement.iterate(...params),
    };
  };
  return {
    tx<T>(fn: () => T): T {
      db.exec('BEGIN IMMEDIATE');
      try {
        const out = fn();
        db.exec('COMMIT');
        return out;
      } catch (err) {
        db.exec('ROLLBACK');
        epoch++;
        throw err;
      }
    },
    memo<T>(key: string, read: () => T): T {
      if (!askedThisTurn) {
        askedThisTurn = true;
        setImmediate(nextTurn).unref();
        const version = dataVersion();
        if (version !== seenDataVersion) {
          seenDataVersion = version;
          epoch++;
        }
      }
      if (memoEpoch !== epoch) {
        memos.clear();
        memoEpoch = epoch;
      }
      const known = memos.get(key);
      if (known) return known.value as T;
      const value = read();
      if (value !== null && typeof value === 'object') Object.freeze(value);
      // NOTE: `read` may itself write (it must not, but a trigger could): remember only what
      // was read in the epoch it is filed under.
      if (memoEpoch === epoch) {
        if (memos.size >= MEMO_ENTRIES) memos.delete(memos.keys().next().value!);
        memos.set(key, { value });
      }
      return value;
    },
    q(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = counted(db.prepare(sql), sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    changes: () => written,
    durable: () => (broken ? Promise.reject(broken.err) : group.flush()),
    get flushes() {
      return group.flushes;
    },
    async close() {
      await checkpointing;
      if (guard?.isOpen) guard.close();
      // NOTE: the last connection to close checkpoints the whole log and deletes it; with
      // NORMAL it flushes the database file first.
      if (db.isOpen && !memory) db.exec('PRAGMA synchronous = NORMAL');
      await Promise.all([database.close(), wal?.close()]);
      if (db.isOpen) db.close();
    },
  };
}

function migrate(db: DatabaseSync): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const done = new Set((db.prepare('SELECT version FROM schema_migrations').all() as Row[]).map((r) => Number(r.version)));
  for (const m of SQLITE_MIGRATIONS) {
    if (done.has(m.version)) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      // NOTE: re-checked inside the write lock, so two processes starting at once apply each migration once.
      if (!db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) {
        db.exec(m.sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, Date.now());
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }
}
