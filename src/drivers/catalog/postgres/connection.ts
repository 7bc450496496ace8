/**
 * The connection the roles of the PostgreSQL catalog share: the pool (its own or the
 * caller's), the schema's migrations, transactions retried after deadlocks, query helpers,
 * and a dedicated connection for LISTEN. The only module of the catalog that imports `pg`:
 * the rest of lading sees only the `Catalog` port, and callers that bring their own pool see
 * only `PgPoolLike`. It holds no role's SQL.
 */
import pg from 'pg';
import { LadingError, isLadingError } from '../../../core/errors.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';

/** The part of a `pg` query result this driver reads. */
export interface PgResultLike {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** The part of a `pg.PoolClient` this driver uses. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
  release(err?: Error | boolean): void;
}

/** The part of a `pg.Pool` this driver uses; a real `pg.Pool` satisfies it. */
export interface PgPoolLike {
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

/** What a query runs on: the pool (one statement, autocommit) or a transaction's client. */
export type PgQueryable = PgClientLike | PgPoolLike;

export type Row = Record<string, unknown>;

/** How to reach PostgreSQL; the factory has checked these already. */
export type PgConnectOptions = {
  schema: string;
  maxConnections: number;
} & ({ connectionString: string; pool?: undefined } | { pool: PgPoolLike; connectionString?: undefined });

/** An open PostgreSQL catalog schema. */
export interface PostgresConnection {
  pool: PgPoolLike;
  /** The schema's name, as given (a plain SQL identifier). */
  schema: string;
  /** The quoted schema followed by a dot: the prefix of every table name. */
  S: string;
  /**
   * Runs `fn` in one transaction, again (with a fresh transaction) after a deadlock or a
   * serialization failure, and turns a unique violation into `CONFLICT`.
   */
  tx<T>(fn: (c: PgClientLike) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` with the payload of each notification on `channel`, until the function
   * it resolves with is called. With a caller's pool (no connection string) it listens to
   * nothing: a catalog only one process uses needs no channel.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Ends the pool when the driver created it; a caller's pool stays open. */
  close(): Promise<void>;
}

/** SQLSTATEs after which the whole transaction is worth running again. */
const RETRYABLE = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';
const MAX_ATTEMPTS = 5;
/** Key of the advisory lock that serialises migrations across nodes starting at once. */
const MIGRATION_LOCK = 0x6c616469; // "ladi"

export async function one(c: PgQueryable, sql: string, values: unknown[] = []): Promise<Row | undefined> {
  return (await c.query(sql, values)).rows[0];
}

export async function all(c: PgQueryable, sql: string, values: unknown[] = []): Promise<Row[]> {
  return (await c.query(sql, values)).rows;
}

/** The number of rows the statement changed. */
export async function count(c: PgQueryable, sql: string, values: unknown[] = []): Promise<number> {
  return (await c.query(sql, values)).rowCount ?? 0;
}

export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/**
 * Opens the pool and brings the schema up to date (migrating once even when several nodes
 * start at the same moment). Rejects with `UNAVAILABLE` when PostgreSQL cannot be reached or
 * refuses the connection, after ending a pool it created.
 */
export async function openPostgres(options: PgConnectOptions): Promise<PostgresConnection> {
  const { schema } = options;
  const owned = !options.pool;
  let pool: PgPoolLike;
  if (options.pool) {
    pool = options.pool;
  } else {
    const created = new pg.Pool({
      connectionString: options.connectionString, max: options.maxConnections, connectionTimeoutMillis: 10_000,
    });
    // NOTE: an idle connection that the server drops emits 'error' on the pool; without a
    // listener that would end the process. The next query simply opens a new connection.
    created.on('error', () => {});
    pool = created;
  }
  const S = quoteIdent(schema) + '.';

  try {
    await migrate(pool, schema, S);
  } catch (err) {
    if (owned) await pool.end().catch(() => {});
    if (isLadingError(err)) throw err;
    throw new LadingError('UNAVAILABLE', `The PostgreSQL catalog cannot be opened: ${describe(err)}`, { cause: err });
  }

  return {
    pool,
    schema,
    S,
    async tx(fn) {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let broken: Error | undefined;
        try {
          await client.query('BEGIN');
          const out = await fn(client);
          await client.query('COMMIT');
          return out;
        } catch (err) {
          await client.query('ROLLBACK').catch((e: Error) => { broken = e; });
          const state = sqlState(err);
          if (state && RETRYABLE.has(state) && attempt < MAX_ATTEMPTS) continue;
          if (state === UNIQUE_VIOLATION) throw new LadingError('CONFLICT', 'It already exists.', { cause: err });
          throw err;
        } finally {
          client.release(broken);
        }
      }
    },
    async listen(channel, onPayload) {
      // A connection of its own: LISTEN lasts as long as the session, which a pooled
      // connection would lose when it goes back to the pool.
      let client: pg.Client | null = null;
      let stopped = false;
      const open = async (): Promise<void> => {
        const c = options.connectionString ? new pg.Client({ connectionString: options.connectionString }) : null;
        if (!c) return;
        c.on('notification', (msg) => {
          if (msg.channel === channel && msg.payload) onPayload(msg.payload);
        });
        // NOTE: a lost connection is reopened; until then job waiters fall back to their
        // deadline and workers to their polling.
        c.on('error', () => {
          if (!stopped) setTimeout(() => void open().catch(() => {}), 1000).unref();
        });
        await c.connect();
        await c.query(`LISTEN ${quoteIdent(channel)}`);
        client = c;
      };
      await open();
      return async () => {
        stopped = true;
        await client?.end().catch(() => {});
      };
    },
    async close() {
      if (owned) await pool.end();
    },
  };
}

function sqlState(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c) ? c : undefined;
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const c = typeof e?.code === 'string' ? e.code : '';
  // NOTE: pg's messages name the host, port, user or database, never the password.
  return `${typeof e?.message === 'string' && e.message ? e.message : 'connection failed'}${c ? ` (${c})` : ''}`;
}

/**
 * Applies the missing migrations in one transaction holding a transaction-level advisory
 * lock, so nodes starting together wait for one another and each migration runs once.
 */
async function migrate(pool: PgPoolLike, schema: string, S: string): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, schema]);
    // NOTE: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema
    // exists, so it only runs when the schema is missing.
    if (!(await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rows[0]) {
      await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
    }
    await client.query(`CREATE TABLE IF NOT EXISTS ${S}schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`);
    const done = new Set((await client.query(`SELECT version FROM ${S}schema_migrations`)).rows.map((r) => Number(r.version)));
    for (const m of POSTGRES_MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql(S));
      await client.query(`INSERT INTO ${S}schema_migrations (version, applied_at) VALUES ($1, $2)`, [m.version, Date.now()]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => { broken = e; });
    throw err;
  } finally {
    client.release(broken);
  }
}
