/**
 * The connection the roles of the SQLite catalog share: opens the database file, brings its
 * schema up to date, and gives the roles a write transaction, statements prepared once, and
 * the group commit that makes committed transactions durable. It holds no role's SQL.
 */
import { statSync } from 'node:fs';
import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementResultingChanges, type StatementSync } from 'node:sqlite';
import { fileFlushGroup, flushGroup } from '../../flush-group.ts';
import { SQLITE_MIGRATIONS } from './migrations.ts';
import { type Path, isWithin } from '../../../core/path.ts';
import { LadingError } from '../../../core/errors.ts';

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
   * take the connection and never open one. With `at`, the caller promises that its
   * statements writing `at.tables` change only the rows of the entity at `at.path` and rows
   * that refer to it, and no key a foreign key refers to: remembered reads of other paths
   * survive them (see `memo`).
   */
  tx<T>(fn: () => T, at?: ChangeAt): T;
  /** The statement for `sql`, prepared on its first use and reused after. */
  q(sql: string): Statement;
  /**
   * How many statements run through `q` have changed rows so far (rolled-back ones included):
   * a caller compares two readings to learn whether it wrote.
   */
  changes(): number;
  /**
   * The value `read` returns for `key`, remembered until what it read may have changed: a
   * statement of this connection that changed rows of a table `read` looked at (or of a table
   * whose rows a foreign key's action changes with them), a rolled-back transaction, or a
   * commit by any other connection to the file (another process included; seen from the next
   * turn of the event loop after it, see `epoch` below). For the reads on every request's path
   * (the session, the user, the entity, the access level). `read` must be a pure function of
   * the database's contents for `key`, reading only through `q`; the value is frozen
   * (shallowly) and shared by every caller until then. At most `MEMO_ENTRIES` values are kept.
   * With `path`, `read` promises to read only rows of the entities on the lineage of `path`
   * (itself and its ancestors) and rows that refer to them: a transaction's changes at
   * another path (`tx`'s `at`) then leave the value in place, unless that path is on the
   * lineage too.
   */
  memo<T>(key: string, read: () => T, path?: Path): T;
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

/** Where a transaction's changes to some tables fall (`tx`'s `at`). */
export interface ChangeAt {
  /** The path of the one entity whose rows, and rows referring to it, the writes change. */
  readonly path: Path;
  /** The tables whose writes fall there; writes to other tables count as anywhere. */
  readonly tables: ReadonlySet<string>;
}

/** SQLite's primary result code for a full disk (`SQLITE_FULL`; extended codes share its low byte). */
const SQLITE_FULL = 13;
/**
 * `SQLITE_IOERR_SHMSIZE`: the shared-memory file of the log could not grow, which on a file
 * system that holds it (tmpfs, the data directory's) means no space is left.
 */
const SQLITE_IOERR_SHMSIZE = 4874;

/**
 * Whether `err` says the disk holding the database (or its log) is full: `SQLITE_FULL` (SQLite
 * turns a short write for lack of space, ENOSPC, into it), the log's index that could not grow,
 * or a flush failing with ENOSPC or EDQUOT.
 */
export function isDiskFull(err: unknown): boolean {
  const { errcode, code } = (err ?? {}) as { errcode?: unknown; code?: unknown };
  if (typeof errcode === 'number') return (errcode & 0xff) === SQLITE_FULL || errcode === SQLITE_IOERR_SHMSIZE;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * `err` in the error model where the client can act on it: a full disk becomes `STORAGE_FULL`
 * (nothing of the failed change was kept); anything else is returned unchanged.
 */
export function catalogError(err: unknown): unknown {
  if (!isDiskFull(err)) return err;
  return new LadingError('STORAGE_FULL', 'The storage of the catalog is full; the change was not made. Retry once space is freed.', { cause: err });
}

/** How many changes of each table are remembered with where they fell (see `bump`). */
const CHANGES_KEPT = 256;

const TABLE_NAME = /\b(?:FROM|JOIN)\s+"?(\w+)/gi;

/**
 * Not a table: the name whose version every change moves, which a remembered read depends on
 * when it ran a statement whose tables cannot be told.
 */
const ANY_TABLE = '*';
const WRITTEN_TABLE = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?[\s(]/i;

/**
 * The tables a reading statement looks at (every name after FROM or JOIN, subqueries
 * included), or null when it names none (a PRAGMA, say): a remembered read that ran such a
 * statement is dropped at any write.
 */
export function tablesRead(sql: string): ReadonlySet<string> | null {
  const tables = new Set([...sql.matchAll(TABLE_NAME)].map((m) => m[1]!.toLowerCase()));
  return tables.size > 0 ? tables : null;
}

/**
 * The one table a plain INSERT, UPDATE or DELETE writes, or null for any other statement (a
 * statement with a WITH clause, DDL, VACUUM): a change made by one of those drops everything
 * remembered.
 */
export function tableWritten(sql: string): string | null {
  return WRITTEN_TABLE.exec(sql)?.[1]?.toLowerCase() ?? null;
}

/**
 * For each table, the tables a write to it may change: itself, every table whose foreign key
 * to it has an action (CASCADE, SET NULL, SET DEFAULT), and every table a trigger on it writes,
 * transitively. With a trigger whose body is not plain INSERT, UPDATE and DELETE statements
 * nothing is known (null): every write then drops everything remembered.
 */
export function tablesChangedWith(db: DatabaseSync): Map<string, ReadonlySet<string>> | null {
  const schema = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type IN ('table', 'trigger')").all() as Row[];
  const children = new Map<string, Set<string>>();
  const edge = (parent: string, child: string) => {
    if (!children.has(parent)) children.set(parent, new Set());
    children.get(parent)!.add(child);
  };
  for (const { type, name, tbl_name: on, sql } of schema) {
    if (type === 'trigger') {
      const written = triggerWrites(String(sql));
      if (written === null) return null;
      for (const table of written) edge(String(on).toLowerCase(), table);
      continue;
    }
    for (const fk of db.prepare('SELECT "table" AS parent, on_update, on_delete FROM pragma_foreign_key_list(?)').all(name as string) as Row[]) {
      if (![fk.on_update, fk.on_delete].some((a) => /^(CASCADE|SET NULL|SET DEFAULT)$/i.test(String(a)))) continue;
      edge(String(fk.parent).toLowerCase(), String(name).toLowerCase());
    }
  }
  const closure = new Map<string, ReadonlySet<string>>();
  for (const { type, name } of schema) {
    if (type !== 'table') continue;
    const table = String(name).toLowerCase();
    const reached = new Set([table]);
    for (const t of reached) for (const c of children.get(t) ?? []) reached.add(c);
    closure.set(table, reached);
  }
  return closure;
}

/** The tables the body of a trigger (`CREATE TRIGGER … BEGIN …; END`) writes, or null when a statement of it is not a plain write. */
function triggerWrites(sql: string): string[] | null {
  const body = /\bBEGIN\b([\s\S]*)\bEND\s*$/i.exec(sql.trim())?.[1];
  if (body === undefined || /['"]/.test(body.replace(/'[^';]*'/g, ''))) return null;
  const statements = body.split(';').map((s) => s.trim()).filter((s) => s !== '');
  const tables = statements.map((s) => tableWritten(`${s} `));
  return tables.every((t) => t !== null) ? tables as string[] : null;
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
  /**
   * Check the file's structure before anything is read or written (see `checkIntegrity`);
   * a damaged file is refused with `CatalogDamagedError`. For a start; off by default.
   */
  checkIntegrity?: boolean;
  /** Changed statements between checkpoints (default `CHECKPOINT_AFTER`; tests use fewer). */
  checkpointAfter?: number;
  /** Pages in the log past which a checkpoint catches up (default `LOG_PAGES`; tests use fewer). */
  logPages?: number;
  /** Called at each step of a checkpoint (tests). */
  onCheckpoint?: (step: CheckpointStep) => void;
}

/** A catalog file SQLite reads as damaged (or as no database at all). */
export class CatalogDamagedError extends Error {
  override name = 'CatalogDamagedError';
  /** What SQLite found, on one line. */
  readonly problems: string;

  constructor(problems: string) {
    super(`the database is damaged (${problems})`);
    this.problems = problems;
  }
}

/**
 * Up to how many bytes a catalog file is checked whole at a start: `PRAGMA quick_check` reads
 * every page once (~0.4 s for 170 MB from the page cache, a few seconds from a disk), so a
 * start stays within seconds. A larger file has the tables every request reads checked only.
 */
export const FULL_CHECK_MAX_BYTES = 1024 * 1024 * 1024;

/** The tables checked in a catalog larger than `FULL_CHECK_MAX_BYTES`: those of every request. */
const ALWAYS_CHECKED = ['schema_migrations', 'users', 'group_members', 'sessions'];

/**
 * Throws `CatalogDamagedError` naming the first problems when `PRAGMA quick_check` finds the
 * structure of the database `db` (the file `size` bytes long) damaged, or SQLite cannot read it
 * as a database. Bounded: a file over `maxBytes` has only `ALWAYS_CHECKED` tables checked.
 */
export function checkIntegrity(db: DatabaseSync, size: number, maxBytes = FULL_CHECK_MAX_BYTES): void {
  const problems: string[] = [];
  try {
    const tables = size <= maxBytes
      ? [null]
      : ALWAYS_CHECKED.filter((t) => db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(t));
    for (const table of tables) {
      // NOTE: at most 5 problems: the first ones say enough, and listing all of a badly damaged
      // file takes as long as the check.
      const rows = db.prepare(`PRAGMA quick_check(${table ?? 5})`).all() as Row[];
      for (const row of rows) {
        const text = String(Object.values(row)[0]);
        if (text !== 'ok') problems.push(text);
      }
    }
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (problems.length > 0) {
    throw new CatalogDamagedError(problems.slice(0, 5).join('; ').replace(/\s+/g, ' '));
  }
}

/**
 * Opens (creating when missing) the database at `file` and applies the missing migrations;
 * with `checkIntegrity`, first refuses a damaged file (`CatalogDamagedError`).
 */
export function openSqlite(file: string, options: OpenSqliteOptions = {}): SqliteConnection {
  const db = new DatabaseSync(file);
  if (options.checkIntegrity && file !== ':memory:' && file !== '') {
    try {
      checkIntegrity(db, statSync(file).size);
    } catch (err) {
      db.close();
      throw err;
    }
  }
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
  // NOTE: `epoch` moves whenever what any read may see could have changed: PRAGMA data_version
  // changes with every commit of another connection (not this one's), and a rollback undoes
  // changes already counted. Asking data_version opens a read transaction (shared-memory locks:
  // ~15 µs, as much as the reads it saves), so it is asked once per turn of the event loop: a
  // commit of another process is seen from the next turn on. This connection's own changes
  // move only the versions of the tables they may have changed (`versions`, and `ANY_TABLE`'s
  // with each), so that an upload's commit (entities, access lists, blob tracking, jobs)
  // leaves the remembered session, user and groups in place.
  let epoch = 0;
  const dataVersionStatement = db.prepare('PRAGMA data_version');
  const dataVersion = (): number => Number((dataVersionStatement.get() as Row).data_version);
  let seenDataVersion = dataVersion();
  let askedThisTurn = false;
  const nextTurn = (): void => {
    askedThisTurn = false;
  };
  const changedWith = tablesChangedWith(db);
  const versions = new Map<string, number>();
  // NOTE: for each table, where each of its last changes fell: `at[i]` is the path of the
  // change that made version `first + i` (null: anywhere). A read remembered with a path
  // looks here for the changes since it was read (`current`).
  const changes = new Map<string, { first: number; at: (Path | null)[] }>();
  const bump = (table: string, at: Path | null = null): void => {
    const version = (versions.get(table) ?? 0) + 1;
    versions.set(table, version);
    let log = changes.get(table);
    if (!log) changes.set(table, (log = { first: version, at: [] }));
    log.at.push(at);
    if (log.at.length >= 2 * CHANGES_KEPT) {
      log.at.splice(0, CHANGES_KEPT);
      log.first += CHANGES_KEPT;
    }
  };
  // NOTE: the `at` of the transaction now running, if any.
  let changingAt: ChangeAt | null = null;
  const changedTables = (sql: string): ReadonlySet<string> | null => {
    const table = tableWritten(sql);
    return table === null || changedWith === null ? null : changedWith.get(table) ?? new Set([table]);
  };
  // NOTE: the tables the remembered read now running has looked at (null: none is running).
  let reading: Set<string> | null = null;
  let memoEpoch = -1;
  // NOTE: a plain map, emptied whenever the epoch moves and trimmed oldest first: on a busy
  // server it rarely lives long enough for recency to matter, and a hit costs one lookup and
  // a look at the versions of the one or two tables it read.
  type Remembered = { value: unknown; deps: [table: string, version: number][]; path: Path | undefined };
  const memos = new Map<string, Remembered>();
  const current = (entry: Remembered): boolean => {
    for (const dep of entry.deps) {
      const now = versions.get(dep[0]) ?? 0;
      if (now === dep[1]) continue;
      if (entry.path === undefined) return false;
      const log = changes.get(dep[0]);
      if (!log || dep[1] + 1 < log.first) return false;
      for (let version = dep[1] + 1; version <= now; version++) {
        const at = log.at[version - log.first];
        // NOTE: a change at the read's path or at an ancestor lies on its lineage.
        if (at === null || at === undefined || isWithin(entry.path, at)) return false;
      }
      // NOTE: none of the changes since touched this read: it is current up to now.
      dep[1] = now;
    }
    return true;
  };
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
    const reads = tablesRead(sql) ?? new Set([ANY_TABLE]);
    const target = tableWritten(sql);
    const changed = changedTables(sql);
    const noteRead = (): void => {
      if (reading !== null) for (const t of reads) reading.add(t);
    };
    return {
      run: (...params: SQLInputValue[]) => {
        noteRead();
        let result: StatementResultingChanges;
        try {
          result = statement.run(...params);
        } catch (err) {
          // NOTE: after a failed statement SQLite may have rolled back the transaction around
          // it (SQLITE_FULL does), undoing changes remembered reads may have seen.
          epoch++;
          throw catalogError(err);
        }
        if (Number(result.changes) > 0) {
          written++;
          bump(ANY_TABLE);
          if (changed === null) epoch++;
          else {
            const at = changingAt !== null && target !== null && changingAt.tables.has(target) ? changingAt.path : null;
            for (const t of changed) bump(t, at);
          }
          maybeCheckpoint();
        }
        return result;
      },
      get: (...params: SQLInputValue[]) => {
        noteRead();
        return statement.get(...params);
      },
      all: (...params: SQLInputValue[]) => {
        noteRead();
        return statement.all(...params);
      },
      iterate: (...params: SQLInputValue[]) => {
        noteRead();
        return statement.iterate(...params);
      },
    };
  };
  return {
    tx<T>(fn: () => T, at?: ChangeAt): T {
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        throw catalogError(err);
      }
      changingAt = at ?? null;
      try {
        const out = fn();
        db.exec('COMMIT');
        return out;
      } catch (err) {
        // NOTE: after some errors (SQLITE_FULL, SQLITE_IOERR, …) SQLite has rolled the
        // transaction back itself, and a ROLLBACK then throws ("no transaction is active"):
        // only an open one is rolled back, and a failing rollback never hides the error that
        // led to it. Either way what was remembered may have read the undone changes.
        epoch++;
        try {
          if (db.isTransaction) db.exec('ROLLBACK');
        } catch {
          // NOTE: the rollback failed too (the disk is failing): the error that matters, and
          // the one the caller gets, is `err`.
        }
        throw catalogError(err);
      } finally {
        changingAt = null;
      }
    },
    memo<T>(key: string, read: () => T, path?: Path): T {
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
      if (known && current(known)) return known.value as T;
      const outer = reading;
      const tables = new Set<string>();
      reading = tables;
      const before = written;
      let value: T;
      try {
        value = read();
      } finally {
        reading = outer;
        if (outer) for (const t of tables) outer.add(t);
      }
      if (value !== null && typeof value === 'object') Object.freeze(value);
      // NOTE: `read` may itself write (it must not, but a trigger could): remember only what
      // was read with nothing changed meanwhile.
      if (memoEpoch === epoch && written === before) {
        memos.delete(key);
        if (memos.size >= MEMO_ENTRIES) memos.delete(memos.keys().next().value!);
        memos.set(key, { value, deps: [...tables].map((t) => [t, versions.get(t) ?? 0]), path });
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
    durable: () => (broken ? Promise.reject(catalogError(broken.err)) : group.flush().catch((err: unknown) => { throw catalogError(err); })),
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
