/**
 * The connection the roles of the PostgreSQL catalog share: the pool (its own or the
 * caller's), the schema's migrations, transactions retried after deadlocks, query helpers,
 * and a dedicated connection for LISTEN. It is the boundary where a lost or refused
 * connection becomes `UNAVAILABLE` (`failures.ts`), once, for every role, and where a
 * PostgreSQL that stops or restarts is ridden out: no connection's error can end the
 * process, and LISTEN reconnects for as long as it is wanted. The only module of the catalog
 * that imports `pg`: the rest of lading sees only the `Catalog` port, and callers that bring
 * their own pool see only `PgPoolLike`. It holds no role's SQL.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { LadingError, isLadingError } from '../../../core/errors.ts';
import { catalogError, isConnectionFailure } from './failures.ts';
import { POSTGRES_MIGRATIONS } from './migrations.ts';
import { nextMark } from '../../../core/request-scope.ts';
import type { PoolFigures } from '../../../core/ports.ts';

/** The part of a `pg` query result this driver reads. */
export interface PgResultLike {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** The part of a `pg.PoolClient` this driver uses. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
  release(err?: Error | boolean): void;
  /** A real client's events: 'error' when its connection breaks (see `checkout`). */
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
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

/** What happens to a LISTEN connection, besides its notifications. */
export interface ListenState {
  /** The connection was lost, or could not be made: notifications are missed until `resumed`. Called once per loss. */
  interrupted(err: unknown): void;
  /** Listening again after `interrupted`: what was notified meanwhile is lost, so look again. */
  resumed(): void;
}

/** A LISTEN under way: calling it stops it (see `PostgresConnection.listen`). */
export interface Listening {
  (): Promise<void>;
  /**
   * Resolves true once a trivial statement sent on the LISTEN connection after this call (or
   * after the mark `after`, from `nextMark`, when given) has been answered: PostgreSQL sends a
   * listener every notification of a transaction committed before that statement ran ahead of
   * the statement's answer, so by then each has been handed to `onPayload`. With `after`, one
   * already answered on the connection still listening, or on its way, may do. Resolves false,
   * at once or after `BARRIER_TIMEOUT_MS`, when there is no connection listening (lost, not yet
   * made, stopped, or none for a caller's pool): what was notified may then be missed. A call
   * made while one such statement is on its way shares the next one, so there is at most one on
   * the way and one waiting.
   */
  barrier(after?: number): Promise<boolean>;
}

/** An open PostgreSQL catalog schema. */
export interface PostgresConnection {
  /** The pool, whose failures to reach PostgreSQL reject with `UNAVAILABLE`. */
  pool: PgPoolLike;
  /** The schema's name, as given (a plain SQL identifier). */
  schema: string;
  /** The quoted schema followed by a dot: the prefix of every table name. */
  S: string;
  /**
   * Runs `fn` in one transaction, again (with a fresh transaction) after a deadlock or a
   * serialization failure, or once after the connection was lost before the commit (a pooled
   * connection that PostgreSQL had closed), and turns a unique violation into `CONFLICT`.
   * Rejects with `UNAVAILABLE` when PostgreSQL cannot be reached; then nothing was committed,
   * except when the connection was lost during the commit itself, which the error's
   * `details.maybeCommitted` says (the change may or may not have been made).
   */
  tx<T>(fn: (c: PgClientLike) => Promise<T>): Promise<T>;
  /**
   * Calls `onPayload` with the payload of each notification on `channel`, until the function
   * it resolves with is called. The connection is its own; when it is lost or cannot be made
   * it is made again, with a backoff growing to `LISTEN_RETRY_MAX_MS`, for as long as the
   * listening lasts, and `state` hears of each loss and recovery. Resolves once the first
   * attempt has succeeded or failed (then it goes on trying). With a caller's pool (no
   * connection string) it listens to nothing: a catalog only one process uses needs no channel.
   */
  listen(channel: string, onPayload: (payload: string) => void, state?: ListenState): Promise<Listening>;
  /** The figures of the pool the driver created (absent for a caller's pool). */
  figures?(): PoolFigures;
  /** Ends the pool when the driver created it; a caller's pool stays open. */
  close(): Promise<void>;
}

/** SQLSTATEs after which the whole transaction is worth running again. */
const RETRYABLE = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';
/** "cached plan must not change result type", among others. */
const FEATURE_NOT_SUPPORTED = '0A000';
const MAX_ATTEMPTS = 5;
/** First and longest wait between two attempts to reopen a lost LISTEN connection. */
const LISTEN_RETRY_MIN_MS = 250;
export const LISTEN_RETRY_MAX_MS = 10_000;
/**
 * How long a barrier waits for its answer before the LISTEN connection is taken as lost (one
 * that a network failure broke silently would otherwise hold every barrier until TCP gives up).
 */
export const BARRIER_TIMEOUT_MS = 2_000;
/**
 * Statements sent to PostgreSQL by every catalog of this process so far (transaction control
 * included: BEGIN and COMMIT are round trips too), for tests that count what a request costs.
 */
let statementsSent = 0;
const watchers = new Set<(text: string, values?: readonly unknown[]) => void>();

/** How many statements the PostgreSQL catalogs of this process have sent so far (see `statementsSent`). */
export function statementCount(): number {
  return statementsSent;
}

/**
 * Calls `watcher` with the text of each statement the PostgreSQL catalogs of this process send,
 * and its parameters if it has any, until the function returned is called (tests).
 */
export function watchStatements(watcher: (text: string, values?: readonly unknown[]) => void): () => void {
  watchers.add(watcher);
  return () => watchers.delete(watcher);
}

/**
 * The name of the prepared statement for `text`: the same on every connection and every node,
 * and different for every text (the schema's name is in it), so a connection prepares each
 * text once and a text never meets another's plan.
 */
const preparedNames = new Map<string, string>();
function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = 'lading_' + createHash('sha1').update(text).digest('base64url');
    // NOTE: the texts are a fixed set (parameters carry every value), so the map stays small.
    preparedNames.set(text, name);
  }
  return name;
}

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
  let raw: PgPoolLike;
  let figures: (() => PoolFigures) | undefined;
  if (options.pool) {
    raw = options.pool;
  } else {
    const created = new pg.Pool({
      connectionString: options.connectionString, max: options.maxConnections, connectionTimeoutMillis: 10_000,
    });
    // NOTE: an idle connection that the server drops emits 'error' on the pool; without a
    // listener that would end the process. pg-pool has already removed that connection, so
    // the next query simply opens a new one.
    created.on('error', () => {});
    raw = created;
    figures = () => ({ total: created.totalCount, idle: created.idleCount, waiting: created.waitingCount });
  }
  const S = quoteIdent(schema) + '.';

  try {
    await migrate(raw, schema, S);
  } catch (err) {
    if (owned) await raw.end().catch(() => {});
    if (isLadingError(err)) throw err;
    throw new LadingError('UNAVAILABLE', `The PostgreSQL catalog cannot be opened: ${describe(err)}`, { cause: err });
  }

  // NOTE: a statement with parameters runs as a named prepared statement on a pool of the
  // driver's own: parsed and planned once per connection, instead of at every call (a third
  // of PostgreSQL's work for a one-row read). A caller's pool need not take a query config.
  const send = (target: PgQueryable, text: string, values: unknown[] | undefined): Promise<PgResultLike> => {
    statementsSent++;
    if (watchers.size > 0) for (const w of watchers) w(text, values);
    if (values === undefined || !owned) return target.query(text, values);
    return (target as unknown as pg.ClientBase).query({ name: preparedName(text), text, values });
  };

  // NOTE: every statement the roles run outside a transaction goes through here, so a
  // connection failure reaches them, and through them every request, as `UNAVAILABLE`.
  const pool: PgPoolLike = {
    query: (text, values) => send(raw, text, values).catch((err: unknown) => { throw catalogError(err); }),
    connect: () => raw.connect().catch((err: unknown) => { throw catalogError(err); }),
    end: () => raw.end(),
  };

  return {
    pool,
    schema,
    S,
    ...(figures ? { figures } : {}),
    async tx(fn) {
      let reconnected = false;
      for (let attempt = 1; ; attempt++) {
        let out: Checkout;
        try {
          out = await checkout(raw);
        } catch (err) {
          throw catalogError(err);
        }
        const { client } = out;
        const c: PgClientLike = { query: (text, values) => send(client, text, values), release: (err) => client.release(err) };
        let committing = false;
        let broken: Error | undefined;
        try {
          await send(client, 'BEGIN', undefined);
          const result = await fn(c);
          committing = true;
          await send(client, 'COMMIT', undefined);
          return result;
        } catch (err) {
          await send(client, 'ROLLBACK', undefined).catch((e: Error) => { broken = e; });
          // NOTE: a prepared statement whose plan no longer fits the schema (another node
          // migrated it) fails on its connection for good: the connection is dropped.
          if (sqlState(err) === FEATURE_NOT_SUPPORTED) broken ??= err as Error;
          const state = sqlState(err);
          if (state && RETRYABLE.has(state) && attempt < MAX_ATTEMPTS) continue;
          if (state === UNIQUE_VIOLATION) throw new LadingError('CONFLICT', 'It already exists.', { cause: err });
          if (isConnectionFailure(err)) {
            // NOTE: a COMMIT whose answer was lost may have been carried out: the caller
            // must not undo what the transaction would have made visible (stored bytes).
            if (committing) throw catalogError(err, { maybeCommitted: true });
            // NOTE: a session PostgreSQL ended (a restart) can still be in the pool until its
            // end is read: the transaction, rolled back with it, runs once more on a new one.
            if (!reconnected) {
              reconnected = true;
              continue;
            }
            throw catalogError(err);
          }
          throw err;
        } finally {
          out.release(broken);
        }
      }
    },
    async listen(channel, onPayload, state) {
      const { connectionString } = options;
      if (!connectionString) return Object.assign(async () => {}, { barrier: async () => false });
      // A connection of its own: LISTEN lasts as long as the session, which a pooled
      // connection would lose when it goes back to the pool.
      let client: pg.Client | null = null;
      /** Ends `client` as a lost connection (then made again). */
      let drop: ((err: Error) => void) | null = null;
      let stopped = false;
      let interrupted = false;
      let retry: ReturnType<typeof setTimeout> | undefined;
      let delay = LISTEN_RETRY_MIN_MS;
      const attempt = async (): Promise<void> => {
        retry = undefined;
        if (stopped) return;
        // NOTE: TCP keepalive, so that a connection a network failure silently broke (no
        // reset ever arrives) is noticed too, not only one the server ended.
        const c = new pg.Client({ connectionString, connectionTimeoutMillis: 10_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
        let gone = false;
        const lost = (err: unknown): void => {
          if (gone) return;
          gone = true;
          if (client === c) {
            client = null;
            drop = null;
            answeredMark = 0;
          }
          if (stopped) return;
          c.removeAllListeners('notification');
          void c.end().catch(() => {});
          if (!interrupted) {
            interrupted = true;
            state?.interrupted(err);
          }
          // NOTE: with jitter, so that nodes do not all come back at the same instant.
          retry = setTimeout(() => void attempt(), delay * (0.75 + Math.random() / 2));
          retry.unref();
          delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
        };
        // NOTE: the listener stays for the client's life: pg may emit 'error' more than once
        // on a broken connection, and one nobody hears would end the process.
        c.on('error', lost);
        c.on('end', () => lost(new Error('Connection terminated unexpectedly')));
        c.on('notification', (msg) => {
          if (msg.channel === channel && msg.payload) onPayload(msg.payload);
        });
        try {
          await c.connect();
          await c.query(`LISTEN ${quoteIdent(channel)}`);
        } catch (err) {
          lost(err);
          return;
        }
        if (gone) return;
        if (stopped) {
          gone = true;
          await c.end().catch(() => {});
          return;
        }
        client = c;
        drop = lost;
        delay = LISTEN_RETRY_MIN_MS;
        if (interrupted) {
          interrupted = false;
          state?.resumed();
        }
      };
      // NOTE: the text names the channel, so that the connection can be told apart from
      // others (pg_stat_activity shows a connection's last statement).
      const BARRIER = `SELECT 1 AS ${quoteIdent(channel)}`;
      let onTheWay: Promise<boolean> | null = null;
      let onTheWayMark = 0;
      let waiting: Promise<boolean> | null = null;
      /** The mark taken as the last barrier answered on the connection listening now was sent (0: none). */
      let answeredMark = 0;
      const send = (): Promise<boolean> => {
        const c = client;
        const lose = drop;
        if (!c || !lose) return Promise.resolve(false);
        const mark = nextMark();
        statementsSent++;
        if (watchers.size > 0) for (const w of watchers) w(BARRIER);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const answered = c.query(BARRIER).then(() => {
          if (client !== c) return false;
          answeredMark = Math.max(answeredMark, mark);
          return true;
        }, () => false);
        const late = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => {
            lose(new Error(`The LISTEN connection did not answer within ${BARRIER_TIMEOUT_MS} ms`));
            resolve(false);
          }, BARRIER_TIMEOUT_MS);
          timer.unref();
        });
        const p = Promise.race([answered, late]).finally(() => {
          clearTimeout(timer);
          if (onTheWay === p) onTheWay = null;
        });
        onTheWay = p;
        onTheWayMark = mark;
        return p;
      };
      const barrier = (after?: number): Promise<boolean> => {
        if (after !== undefined && client) {
          if (answeredMark > after) return Promise.resolve(true);
          if (onTheWay && onTheWayMark > after) return onTheWay;
        }
        if (!onTheWay) return send();
        // NOTE: the statement on its way was sent before this call, so it proves nothing
        // about what committed since: the next one, sent once it is answered, does.
        waiting ??= onTheWay.then(() => {
          waiting = null;
          return send();
        });
        return waiting;
      };
      await attempt();
      return Object.assign(async () => {
        stopped = true;
        clearTimeout(retry);
        const c = client;
        client = null;
        drop = null;
        await c?.end().catch(() => {});
      }, { barrier });
    },
    async close() {
      if (owned) await raw.end();
    },
  };
}

/** A client taken from the pool, and how to give it back. */
interface Checkout {
  client: PgClientLike;
  /** Puts the client back, or drops it when `err` is given or its connection broke while out. */
  release(err?: Error): void;
}

/**
 * Takes a client from `pool` with a listener on its 'error' event while it is out: pg-pool
 * takes its own listener off a client it hands out, and a connection that breaks between two
 * statements (PostgreSQL stopping sends its notice then) would emit an 'error' nobody hears,
 * which ends the process. The statement that follows fails instead.
 */
async function checkout(pool: PgPoolLike): Promise<Checkout> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error): void => { broken ??= err; };
  client.on?.('error', onError);
  return {
    client,
    release(err) {
      client.off?.('error', onError);
      client.release(err ?? broken);
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
  const { client, release } = await checkout(pool);
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
    release(broken);
  }
}
