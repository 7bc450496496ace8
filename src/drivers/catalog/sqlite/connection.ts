/**
 * The connection the roles of the SQLite catalog share: opens the database file, brings its
 * schema up to date, and gives the roles a write transaction and statements prepared once.
 * It holds no role's SQL.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { SQLITE_MIGRATIONS } from './migrations.ts';

export type Row = Record<string, SQLInputValue>;

/** An open SQLite catalog database. */
export interface SqliteConnection {
  /**
   * Runs `fn` in one write transaction (`BEGIN IMMEDIATE`), committed when it returns and
   * rolled back when it throws. Not re-entrant: helpers meant for use inside a transaction
   * take the connection and never open one.
   */
  tx<T>(fn: () => T): T;
  /** The statement for `sql`, prepared on its first use and reused after. */
  q(sql: string): StatementSync;
  /** Closes the database. Idempotent. */
  close(): void;
}

/** Opens (creating when missing) the database at `file` and applies the missing migrations. */
export function openSqlite(file: string): SqliteConnection {
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;');
  migrate(db);

  // NOTE: preparing a statement costs more than running it; every SQL text is prepared once.
  // The texts are a fixed set (accessLevel's and listEntitiesHeldBy's vary only with path
  // depth and group count).
  const statements = new Map<string, StatementSync>();
  return {
    tx<T>(fn: () => T): T {
      db.exec('BEGIN IMMEDIATE');
      try {
        const out = fn();
        db.exec('COMMIT');
        return out;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    },
    q(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    close() {
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
