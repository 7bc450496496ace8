/**
 * Catalog driver for PostgreSQL through `pg`: the shared catalog that lets several lading
 * nodes serve one namespace. Each method runs in one transaction (READ COMMITTED); races
 * between nodes are settled by row locks (`SELECT … FOR UPDATE` on what a method changes,
 * `FOR KEY SHARE` on the collections it relies on) and unique constraints, never by state kept
 * in a process. It adapts PostgreSQL only; the rules it enforces are those of the `Catalog`
 * port, with the same semantics as the SQLite driver. It must not import `pg` outside this
 * file: the rest of lading sees only the `Catalog` port, and callers that bring their own
 * pool see only `PgPoolLike`.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { LadingError, isLadingError } from '../../core/errors.ts';
import { type Path, baseName, lineage, parentOf } from '../../core/path.ts';
import type { Catalog, OidcRecordInput } from '../../core/ports.ts';
import {
  ACCESS_RANK, type AccessEntry, type Avu, type BackendEvent, type Collection,
  type DataObject, type Entity, type HandleValues, type JobInput,
} from '../../core/types.ts';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.ts';
import { levelOf, toEntity, toJob, toOidcRecord, toSession, toUser } from './rows.ts';

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

export type PostgresCatalogOptions = {
  /** Schema holding the catalog's tables; created when missing (default `public`). */
  schema?: string;
  /** Largest number of connections of a pool the driver creates itself (default 10). */
  maxConnections?: number;
} & (
  /** A libpq connection string, e.g. `postgresql://lading@db.example.org/lading`; the driver owns the pool. */
  | { connectionString: string; pool?: undefined }
  /** A pool owned by the caller: `close()` leaves it open. */
  | { pool: PgPoolLike; connectionString?: undefined }
);

type Row = Record<string, unknown>;

/** SQLSTATEs after which the whole transaction is worth running again. */
const RETRYABLE = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';
const MAX_ATTEMPTS = 5;
/** Key of the advisory lock that serialises migrations across nodes starting at once. */
const MIGRATION_LOCK = 0x6c616469; // "ladi"

function sqlState(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c) ? c : undefined;
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}






function oidcValues(r: OidcRecordInput): unknown[] {
  return [r.payload, r.uid ?? null, r.userCode ?? null, r.grantId ?? null, r.expiresAt?.getTime() ?? null];
}

/**
 * Opens a PostgreSQL catalog and brings its schema up to date (migrating once even when
 * several nodes start at the same moment). Throws when an option is missing; rejects with
 * `UNAVAILABLE` when PostgreSQL cannot be reached or refuses the connection.
 */
export async function createPostgresCatalog(options: PostgresCatalogOptions): Promise<Catalog> {
  if (!options.pool && !options.connectionString) {
    throw new Error('postgres catalog: option `connectionString` or `pool` is required');
  }
  const schema = options.schema ?? 'public';
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error('postgres catalog: `schema` must be a plain SQL identifier');
  const owned = !options.pool;
  let pool: PgPoolLike;
  if (options.pool) {
    pool = options.pool;
  } else {
    const created = new pg.Pool({
      connectionString: options.connectionString, max: options.maxConnections ?? 10, connectionTimeoutMillis: 10_000,
    });
    // NOTE: an idle connection that the server drops emits 'error' on the pool; without a
    // listener that would end the process. The next query simply opens a new connection.
    created.on('error', () => {});
    pool = created;
  }
  const S = quoteIdent(schema) + '.';
  /** NOTIFY channel of job events, one per schema (so deployments sharing a database stay apart). */
  const channel = `lading_jobs_${schema.toLowerCase()}`.slice(0, 63);

  try {
    await migrate(pool, schema, S);
  } catch (err) {
    if (owned) await pool.end().catch(() => {});
    if (isLadingError(err)) throw err;
    throw new LadingError('UNAVAILABLE', `The PostgreSQL catalog cannot be opened: ${describe(err)}`, { cause: err });
  }

  /**
   * Runs `fn` in one transaction, again (with a fresh transaction) after a deadlock or a
   * serialization failure, and turns a unique violation into `CONFLICT`.
   */
  const tx = async <T>(fn: (c: PgClientLike) => Promise<T>): Promise<T> => {
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
  };
  const one = async (c: PgClientLike | PgPoolLike, sql: string, values: unknown[] = []): Promise<Row | undefined> =>
    (await c.query(sql, values)).rows[0];
  const all = async (c: PgClientLike | PgPoolLike, sql: string, values: unknown[] = []): Promise<Row[]> =>
    (await c.query(sql, values)).rows;
  const count = async (c: PgClientLike | PgPoolLike, sql: string, values: unknown[] = []): Promise<number> =>
    (await c.query(sql, values)).rowCount ?? 0;

  const ENTITY = `SELECT e.id, e.uid, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.blob, e.created_at, e.modified_at,
    (SELECT value FROM ${S}avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid
    FROM ${S}entities e`;
  const entityAt = async (c: PgClientLike | PgPoolLike, path: string): Promise<Entity | null> => {
    const row = await one(c, `${ENTITY} WHERE e.path = $1`, [path]);
    return row ? toEntity(row) : null;
  };
  const enqueue = async (c: PgClientLike, jobs: readonly JobInput[], now: Date): Promise<string[]> => {
    const ids: string[] = [];
    for (const j of jobs) {
      const row = await one(c, `INSERT INTO ${S}jobs (kind, payload, state, run_after, created_at, updated_at)
        VALUES ($1, $2, 'pending', $3, $3, $3) RETURNING id`, [j.kind, j.payload, now.getTime()]);
      ids.push(String(row!.id));
    }
    // NOTE: delivered when the transaction commits, so other nodes' workers never wake for
    // jobs that were rolled back.
    if (ids.length > 0) await c.query('SELECT pg_notify($1, $2)', [channel, 'enqueued']);
    return ids;
  };
  const idOf = async (c: PgClientLike | PgPoolLike, path: string): Promise<string> => {
    const row = await one(c, `SELECT id FROM ${S}entities WHERE path = $1`, [path]);
    if (!row) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return String(row.id);
  };
  /**
   * Checks that the parent of `path` is a collection and holds a key-share lock on it and on
   * every collection above it until the transaction ends, so a concurrent rename of any of
   * them (which takes `FOR UPDATE` first) waits for this transaction, or makes it see the
   * parent gone. That is what keeps a rename from leaving a new child behind at the old path.
   */
  const lockParent = async (c: PgClientLike, path: Path): Promise<void> => {
    const parent = parentOf(path);
    const rows = await all(c, `SELECT path, kind FROM ${S}entities WHERE path = ANY($1::text[]) ORDER BY path FOR KEY SHARE`, [lineage(parent)]);
    const row = rows.find((r) => r.path === parent);
    if (!row) throw new LadingError('NOT_FOUND', `The collection '${parent}' does not exist.`);
    if (row.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent}' is a data object, not a collection.`);
  };

  const catalog: Catalog = {
    driver: 'postgres',
    async close() {
      if (owned) await pool.end();
    },

    async getEntity(path) {
      return entityAt(pool, path);
    },

    async listChildren(path) {
      return (await all(pool, `${ENTITY} WHERE e.parent = $1 ORDER BY e.name`, [path])).map(toEntity);
    },

    async createCollection({ path, owner, now, jobs }) {
      return tx(async (c) => {
        if (await entityAt(c, path)) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        await lockParent(c, path);
        const uid = randomUUID();
        const row = await one(c, `INSERT INTO ${S}entities (uid, path, parent, name, kind, owner, created_at, modified_at)
          VALUES ($1, $2, $3, $4, 'collection', $5, $6, $6) ON CONFLICT (path) DO NOTHING RETURNING id`,
        [uid, path, parentOf(path), baseName(path), owner, now.getTime()]);
        if (!row) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)`, [row.id, owner, ACCESS_RANK.own]);
        await enqueue(c, jobs?.({ type: 'collection.created', entityId: uid, path }) ?? [], now);
        return (await entityAt(c, path)) as Collection;
      });
    },

    async commitObject({ path, owner, size, checksum, blob, now, overwrite, jobs }) {
      return tx(async (c) => {
        await lockParent(c, path);
        const lockExisting = async () => one(c, `SELECT id, uid, kind, blob FROM ${S}entities WHERE path = $1 FOR UPDATE`, [path]);
        let existing = await lockExisting();
        let event: BackendEvent | undefined;
        if (!existing) {
          // NOTE: ON CONFLICT waits for a concurrent insert of the same path to finish; when it
          // committed, the object is there now and this commit is an overwrite (or a CONFLICT).
          const uid = randomUUID();
          const inserted = await one(c, `INSERT INTO ${S}entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
            VALUES ($1, $2, $3, $4, 'dataobject', $5, $6, $7, $8, $9, $9) ON CONFLICT (path) DO NOTHING RETURNING id`,
          [uid, path, parentOf(path), baseName(path), owner, size, checksum, blob, now.getTime()]);
          if (inserted) {
            await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)`, [inserted.id, owner, ACCESS_RANK.own]);
            event = { type: 'object.created', entityId: uid, path };
          } else {
            existing = await lockExisting();
            if (!existing) throw new LadingError('CONFLICT', `'${path}' is being changed; try again.`);
          }
        }
        let replacedBlob: string | null = null;
        if (existing) {
          if (existing.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
          if (!overwrite) throw new LadingError('CONFLICT', `'${path}' already exists; use force=true to overwrite it.`);
          replacedBlob = existing.blob as string;
          await c.query(`UPDATE ${S}entities SET size = $1, checksum = $2, blob = $3, modified_at = $4 WHERE id = $5`,
            [size, checksum, blob, now.getTime(), existing.id]);
          await c.query(`INSERT INTO ${S}blobs (blob, since) VALUES ($1, $2) ON CONFLICT (blob) DO NOTHING`, [replacedBlob, now.getTime()]);
          event = { type: 'object.overwritten', entityId: existing.uid as string, path };
        }
        await c.query(`DELETE FROM ${S}blobs WHERE blob = $1`, [blob]);
        const jobIds = event ? await enqueue(c, jobs?.(event) ?? [], now) : [];
        return { object: (await entityAt(c, path)) as DataObject, replacedBlob, jobIds };
      });
    },

    async rename(from, to, now, jobs) {
      return tx(async (c) => {
        // NOTE: locked first, so creations below `from` (which key-share-lock it) finish before
        // the UPDATE below takes its snapshot, and later ones find their parent moved.
        const moving = await one(c, `SELECT uid, kind FROM ${S}entities WHERE path = $1 FOR UPDATE`, [from]);
        if (!moving) throw new LadingError('NOT_FOUND', `'${from}' does not exist.`);
        if (await entityAt(c, to)) throw new LadingError('CONFLICT', `'${to}' already exists.`);
        if (to.startsWith(from + '/')) throw new LadingError('CONFLICT', `'${from}' cannot be moved inside itself.`);
        await lockParent(c, to);
        // NOTE: descendants are matched by a range in byte order ("C" collation), not LIKE:
        // every path starting with `from/` sorts between `from/` and `from0` ('0' follows '/'),
        // and names may contain % and _ without being patterns.
        const len = [...from].length;
        await c.query(`UPDATE ${S}entities SET
            path = $1::text || substr(path, $2::int + 1),
            parent = CASE WHEN path = $3::text THEN $4::text ELSE $1::text || substr(parent, $2::int + 1) END,
            name = CASE WHEN path = $3::text THEN $5::text ELSE name END,
            modified_at = CASE WHEN path = $3::text THEN $6::bigint ELSE modified_at END
          WHERE path = $3::text OR (path >= $3::text || '/' AND path < $3::text || '0')`,
        [to, len, from, parentOf(to), baseName(to), now.getTime()]);
        const type = moving.kind === 'collection' ? 'collection.renamed' : 'object.renamed';
        await enqueue(c, jobs?.({ type, entityId: moving.uid as string, path: to, from }) ?? [], now);
        return (await entityAt(c, to))!;
      });
    },

    async getEntityById(id) {
      const row = await one(pool, `${ENTITY} WHERE e.uid = $1`, [id]);
      return row ? toEntity(row) : null;
    },

    async listDescendants(path, limit, afterPath) {
      // NOTE: the same byte-order range as `rename`; for the root, every path but '/' itself.
      const low = path === '/' ? '/' : path + '/';
      const high = path === '/' ? '0' : path + '0';
      const rows = await all(pool, `${ENTITY} WHERE e.path >= $1::text AND e.path < $2::text AND e.path <> $3::text AND e.path > $4::text
        ORDER BY e.path LIMIT $5`, [low, high, path, afterPath ?? '', limit]);
      return rows.map(toEntity);
    },

    async setAccess(path, principal, level) {
      await tx(async (c) => {
        const id = await idOf(c, path);
        if (level === null) await c.query(`DELETE FROM ${S}acls WHERE entity_id = $1 AND principal = $2`, [id, principal]);
        else {
          await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)
            ON CONFLICT (entity_id, principal) DO UPDATE SET level = excluded.level`, [id, principal, ACCESS_RANK[level]]);
        }
      });
    },

    async listAccess(path) {
      const id = await idOf(pool, path);
      const rows = await all(pool, `SELECT principal, level FROM ${S}acls WHERE entity_id = $1 ORDER BY principal COLLATE "C"`, [id]);
      return rows.map((r): AccessEntry => ({ principal: r.principal as string, level: levelOf(Number(r.level)) }));
    },

    async accessLevel(path, principals) {
      if (principals.length === 0) return null;
      const row = await one(pool, `SELECT MAX(a.level) AS level FROM ${S}acls a JOIN ${S}entities e ON e.id = a.entity_id
        WHERE e.path = ANY($1::text[]) AND a.principal = ANY($2::text[])`, [lineage(path), [...principals]]);
      return row?.level === null || row?.level === undefined ? null : levelOf(Number(row.level));
    },

    async addMeta(path, { attribute, value, unit }) {
      await tx(async (c) => {
        await c.query(`INSERT INTO ${S}avus (entity_id, attribute, value, unit) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
          [await idOf(c, path), attribute, value, unit]);
      });
    },

    async removeMeta(path, attribute, value) {
      await tx(async (c) => {
        const id = await idOf(c, path);
        if (value === undefined) await c.query(`DELETE FROM ${S}avus WHERE entity_id = $1 AND attribute = $2`, [id, attribute]);
        else await c.query(`DELETE FROM ${S}avus WHERE entity_id = $1 AND attribute = $2 AND value = $3`, [id, attribute, value]);
      });
    },

    async listMeta(path) {
      const rows = await all(pool, `SELECT attribute, value, unit FROM ${S}avus WHERE entity_id = $1 ORDER BY attribute, value, unit`, [await idOf(pool, path)]);
      return rows.map((r): Avu => ({ attribute: r.attribute as string, value: r.value as string, unit: r.unit as string }));
    },

    async createUser(user) {
      await tx(async (c) => {
        const inserted = await count(c, `INSERT INTO ${S}users (name, kind, password_hash, created_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (name) DO NOTHING`, [user.name, user.kind, user.passwordHash, user.createdAt.getTime()]);
        if (inserted === 0) throw new LadingError('CONFLICT', `The name '${user.name}' is taken.`);
      });
    },

    async getUser(name) {
      const row = await one(pool, `SELECT * FROM ${S}users WHERE name = $1`, [name]);
      return row ? toUser(row) : null;
    },

    async listUsers() {
      return (await all(pool, `SELECT * FROM ${S}users ORDER BY name`)).map(toUser);
    },

    async setPasswordHash(name, hash) {
      if ((await count(pool, `UPDATE ${S}users SET password_hash = $1 WHERE name = $2`, [hash, name])) === 0) {
        throw new LadingError('NOT_FOUND', `No user '${name}'.`);
      }
    },

    async addToGroup(group, user) {
      await tx(async (c) => {
        const g = await one(c, `SELECT kind FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [group]);
        if (!g || g.kind !== 'group') throw new LadingError('NOT_FOUND', `No group '${group}'.`);
        if (!(await one(c, `SELECT 1 FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [user]))) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        await c.query(`INSERT INTO ${S}group_members (group_name, user_name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [group, user]);
      });
    },

    async groupsOf(user) {
      return (await all(pool, `SELECT group_name FROM ${S}group_members WHERE user_name = $1 ORDER BY group_name`, [user]))
        .map((r) => r.group_name as string);
    },

    async putSession(s) {
      await pool.query(`INSERT INTO ${S}sessions (token_hash, user_name, created_at, expires_at, credential) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (token_hash) DO UPDATE SET user_name = excluded.user_name, created_at = excluded.created_at,
         expires_at = excluded.expires_at, credential = excluded.credential`,
      [s.tokenHash, s.user, s.createdAt.getTime(), s.expiresAt.getTime(), s.credential]);
    },

    async getSession(tokenHash, now) {
      const row = await one(pool, `SELECT * FROM ${S}sessions WHERE token_hash = $1 AND expires_at > $2`, [tokenHash, now.getTime()]);
      return row ? toSession(row) : null;
    },

    async updateSessionCredential(tokenHash, credential, expected) {
      if (expected === undefined) {
        return (await count(pool, `UPDATE ${S}sessions SET credential = $1 WHERE token_hash = $2`, [credential, tokenHash])) > 0;
      }
      return (await count(pool, `UPDATE ${S}sessions SET credential = $1 WHERE token_hash = $2 AND credential IS NOT DISTINCT FROM $3::text`,
        [credential, tokenHash, expected])) > 0;
    },

    async latestSessionOf(user, now) {
      const row = await one(pool, `SELECT * FROM ${S}sessions WHERE user_name = $1 AND expires_at > $2
        ORDER BY created_at DESC, seq DESC LIMIT 1`, [user, now.getTime()]);
      return row ? toSession(row) : null;
    },

    async deleteSession(tokenHash) {
      await pool.query(`DELETE FROM ${S}sessions WHERE token_hash = $1`, [tokenHash]);
    },

    async deleteExpiredSessions(now) {
      return count(pool, `DELETE FROM ${S}sessions WHERE expires_at <= $1`, [now.getTime()]);
    },

    async mapSubject(dn, user) {
      await tx(async (c) => {
        if (!(await one(c, `SELECT 1 FROM ${S}users WHERE name = $1 FOR KEY SHARE`, [user]))) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        await c.query(`INSERT INTO ${S}subject_map (dn, user_name) VALUES ($1, $2) ON CONFLICT (dn) DO NOTHING`, [dn, user]);
        const row = await one(c, `SELECT user_name FROM ${S}subject_map WHERE dn = $1`, [dn]);
        if (row?.user_name !== user) throw new LadingError('CONFLICT', 'The subject is already mapped to another user.');
      });
    },

    async userForSubject(dn) {
      const row = await one(pool, `SELECT user_name FROM ${S}subject_map WHERE dn = $1`, [dn]);
      return row ? (row.user_name as string) : null;
    },

    async subjectsOf(user) {
      return (await all(pool, `SELECT dn FROM ${S}subject_map WHERE user_name = $1 ORDER BY dn`, [user])).map((r) => r.dn as string);
    },

    async unmapSubject(dn) {
      await pool.query(`DELETE FROM ${S}subject_map WHERE dn = $1`, [dn]);
    },

    async enqueueJobs(jobs, now) {
      return tx((c) => enqueue(c, jobs, now));
    },

    async claimJobs(worker, now, leaseUntil, limit) {
      // NOTE: SKIP LOCKED lets workers on several nodes claim at once, each getting other jobs;
      // a row another worker claimed meanwhile no longer matches when re-checked under its lock.
      const rows = await all(pool, `UPDATE ${S}jobs SET state = 'running', lease_owner = $1, lease_until = $2,
          attempts = attempts + 1, updated_at = $3
        WHERE id IN (SELECT id FROM ${S}jobs
          WHERE (state = 'pending' AND run_after <= $3) OR (state = 'running' AND lease_until < $3)
          ORDER BY run_after, id LIMIT $4 FOR UPDATE SKIP LOCKED)
        RETURNING *`, [worker, leaseUntil.getTime(), now.getTime(), limit]);
      return rows.map(toJob).sort((x, y) => x.runAfter.getTime() - y.runAfter.getTime() || Number(x.id) - Number(y.id));
    },

    async completeJob(id, worker, now) {
      if (!JOB_ID.test(id)) return false;
      const done = (await count(pool, `UPDATE ${S}jobs SET state = 'done', lease_owner = NULL, lease_until = NULL, last_error = NULL, updated_at = $1
        WHERE id = $2 AND state = 'running' AND lease_owner = $3`, [now.getTime(), id, worker])) > 0;
      if (done) await pool.query('SELECT pg_notify($1, $2)', [channel, `settled:${id}`]);
      return done;
    },

    async failJob(id, worker, error, now, retryAt) {
      if (!JOB_ID.test(id)) return false;
      const failed = (await count(pool, `UPDATE ${S}jobs SET state = $1, run_after = $2, lease_owner = NULL, lease_until = NULL, last_error = $3, updated_at = $4
        WHERE id = $5 AND state = 'running' AND lease_owner = $6`,
      [retryAt ? 'pending' : 'failed', (retryAt ?? now).getTime(), error, now.getTime(), id, worker])) > 0;
      if (failed && !retryAt) await pool.query('SELECT pg_notify($1, $2)', [channel, `settled:${id}`]);
      return failed;
    },

    async watchJobs(listener) {
      // A connection of its own: LISTEN lasts as long as the session, which a pooled
      // connection would lose when it goes back to the pool.
      let client: pg.Client | null = null;
      let stopped = false;
      const open = async (): Promise<void> => {
        const c = options.connectionString ? new pg.Client({ connectionString: options.connectionString }) : null;
        if (!c) return;
        c.on('notification', (msg) => {
          if (msg.channel !== channel || !msg.payload) return;
          if (msg.payload === 'enqueued') listener({ enqueued: true });
          else if (msg.payload.startsWith('settled:')) listener({ settled: msg.payload.slice('settled:'.length) });
        });
        // NOTE: a lost connection is reopened; until then waiters fall back to their deadline
        // and workers to their polling.
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

    async releaseJobs(before) {
      return count(pool, `UPDATE ${S}jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL
        WHERE state = 'running' AND updated_at < $1`, [before.getTime()]);
    },

    async getJob(id) {
      if (!JOB_ID.test(id)) return null;
      const row = await one(pool, `SELECT * FROM ${S}jobs WHERE id = $1`, [id]);
      return row ? toJob(row) : null;
    },

    async listJobs(state, limit) {
      const rows = state
        ? await all(pool, `SELECT * FROM ${S}jobs WHERE state = $1 ORDER BY id DESC LIMIT $2`, [state, limit])
        : await all(pool, `SELECT * FROM ${S}jobs ORDER BY id DESC LIMIT $1`, [limit]);
      return rows.map(toJob);
    },

    async putHandle(handle, values, now) {
      await pool.query(`INSERT INTO ${S}handles (handle, record, created_at, updated_at) VALUES ($1, $2, $3, $3)
         ON CONFLICT (handle) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
      [handle, JSON.stringify(values), now.getTime()]);
    },

    async getHandle(handle) {
      const row = await one(pool, `SELECT * FROM ${S}handles WHERE handle = $1`, [handle]);
      return row ? {
        handle, values: JSON.parse(row.record as string) as HandleValues,
        createdAt: new Date(Number(row.created_at)), updatedAt: new Date(Number(row.updated_at)),
      } : null;
    },

    async trackBlob(blob, now) {
      await pool.query(`INSERT INTO ${S}blobs (blob, since) VALUES ($1, $2) ON CONFLICT (blob) DO NOTHING`, [blob, now.getTime()]);
    },

    async untrackBlob(blob) {
      await pool.query(`DELETE FROM ${S}blobs WHERE blob = $1`, [blob]);
    },

    async trackedBlobs(before) {
      return (await all(pool, `SELECT blob FROM ${S}blobs WHERE since < $1 ORDER BY since, blob`, [before.getTime()])).map((r) => r.blob as string);
    },

    async oidcPut(kind, id, r) {
      await pool.query(`INSERT INTO ${S}oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at, consumed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
         ON CONFLICT (kind, id) DO UPDATE SET payload = excluded.payload, uid = excluded.uid, user_code = excluded.user_code,
         grant_id = excluded.grant_id, expires_at = excluded.expires_at, consumed_at = NULL`,
      [kind, id, ...oidcValues(r)]);
    },

    async oidcInsert(kind, id, r, now) {
      return tx(async (c) => {
        await c.query(`DELETE FROM ${S}oidc_records WHERE kind = $1 AND id = $2 AND expires_at <= $3`, [kind, id, now.getTime()]);
        return (await count(c, `INSERT INTO ${S}oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (kind, id) DO NOTHING`, [kind, id, ...oidcValues(r)])) > 0;
      });
    },

    async oidcGet(kind, id, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND id = $2 AND ${LIVE}`, [kind, id, now.getTime()]));
    },

    async oidcGetByUid(kind, uid, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND uid = $2 AND ${LIVE} LIMIT 1`, [kind, uid, now.getTime()]));
    },

    async oidcGetByUserCode(kind, userCode, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND user_code = $2 AND ${LIVE} LIMIT 1`, [kind, userCode, now.getTime()]));
    },

    async oidcList(kind, now) {
      return (await all(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND ${LIVE.replace('$3', '$2')} ORDER BY id`, [kind, now.getTime()]))
        .map((r) => toOidcRecord(r)!);
    },

    async oidcConsume(kind, id, now) {
      return (await count(pool, `UPDATE ${S}oidc_records SET consumed_at = $3 WHERE kind = $1 AND id = $2 AND consumed_at IS NULL AND ${LIVE}`,
        [kind, id, now.getTime()])) > 0;
    },

    async oidcDelete(kind, id) {
      await pool.query(`DELETE FROM ${S}oidc_records WHERE kind = $1 AND id = $2`, [kind, id]);
    },

    async oidcDeleteByGrantId(grantId) {
      await pool.query(`DELETE FROM ${S}oidc_records WHERE grant_id = $1`, [grantId]);
    },

    async oidcDeleteExpired(now) {
      const records = await count(pool, `DELETE FROM ${S}oidc_records WHERE expires_at <= $1`, [now.getTime()]);
      return records + await count(pool, `DELETE FROM ${S}oidc_counters WHERE window_ends <= $1`, [now.getTime()]);
    },

    async oidcCount(key, now, windowSeconds, increment) {
      const t = now.getTime();
      const row = increment
        ? await one(pool, `INSERT INTO ${S}oidc_counters AS k (key, count, window_ends) VALUES ($1, 1, $2)
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN k.window_ends <= $3 THEN 1 ELSE k.count + 1 END,
              window_ends = CASE WHEN k.window_ends <= $3 THEN excluded.window_ends ELSE k.window_ends END
            RETURNING count, window_ends`, [key, t + windowSeconds * 1000, t])
        : await one(pool, `SELECT count, window_ends FROM ${S}oidc_counters WHERE key = $1 AND window_ends > $2`, [key, t]);
      return row
        ? { count: Number(row.count), resetsAt: new Date(Number(row.window_ends)) }
        : { count: 0, resetsAt: now };
    },

    async oidcResetCount(key) {
      await pool.query(`DELETE FROM ${S}oidc_counters WHERE key = $1`, [key]);
    },
  };
  return catalog;
}

/** A job id as this driver makes them (a bigint); anything else names no job. */
const JOB_ID = /^[1-9][0-9]{0,17}$/;


// NOTE: `now` is always the third parameter of the queries using it.
const LIVE = '(expires_at IS NULL OR expires_at > $3)';

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
