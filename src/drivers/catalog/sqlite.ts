/**
 * Catalog driver for SQLite through `node:sqlite` (built into Node, no native build): the
 * embedded default, one file in the data directory. Each method runs in one transaction. It
 * adapts SQLite only; the rules it enforces are those of the `Catalog` port.
 */
import { randomUUID } from 'node:crypto';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { LadingError } from '../../core/errors.ts';
import { type Path, baseName, lineage, parentOf } from '../../core/path.ts';
import type { Catalog } from '../../core/ports.ts';
import {
  ACCESS_RANK, type AccessEntry, type Avu, type Collection,
  type BackendEvent, type DataObject, type Entity, type HandleValues, type JobInput,
} from '../../core/types.ts';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.ts';
import { levelOf, toEntity, toJob, toOidcRecord, toSession, toUser } from './rows.ts';

export interface SqliteCatalogOptions {
  /** File name of the database, or `:memory:`. */
  file: string;
}

type Row = Record<string, SQLInputValue>;

const ENTITY_COLUMNS = `e.id, e.uid, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.blob, e.created_at, e.modified_at,
  (SELECT value FROM avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid`;



/** Creates a SQLite catalog and brings its schema up to date. */
export function createSqliteCatalog(options: SqliteCatalogOptions): Catalog {
  if (!options.file) throw new Error('sqlite catalog: option `file` is required');
  const db = new DatabaseSync(options.file);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;');
  migrate(db);

  const tx = <T>(fn: () => T): T => {
    db.exec('BEGIN IMMEDIATE');
    try {
      const out = fn();
      db.exec('COMMIT');
      return out;
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  };
  // NOTE: preparing a statement costs more than running it; every SQL text is prepared once.
  // The texts are a fixed set (accessLevel's vary only with path depth and group count).
  const statements = new Map<string, StatementSync>();
  const q = (sql: string): StatementSync => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const entityAt = (path: string): Entity | null => {
    const row = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.path = ?`).get(path) as Row | undefined;
    return row ? toEntity(row) : null;
  };
  const idOf = (path: string): number => {
    const row = q('SELECT id FROM entities WHERE path = ?').get(path) as Row | undefined;
    if (!row) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return Number(row.id);
  };
  const parentMustBeCollection = (path: Path): void => {
    const parent = entityAt(parentOf(path));
    if (!parent) throw new LadingError('NOT_FOUND', `The collection '${parentOf(path)}' does not exist.`);
    if (parent.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent.path}' is a data object, not a collection.`);
  };

  const enqueue = (jobs: readonly JobInput[], now: Date): string[] => {
    const insert = q(`INSERT INTO jobs (kind, payload, state, run_after, created_at, updated_at) VALUES (?, ?, 'pending', ?, ?, ?)`);
    return jobs.map((j) => String(insert.run(j.kind, j.payload, now.getTime(), now.getTime(), now.getTime()).lastInsertRowid));
  };

  const catalog: Catalog = {
    driver: 'sqlite',
    async close() {
      if (db.isOpen) db.close();
    },

    async getEntity(path) {
      return entityAt(path);
    },

    async listChildren(path) {
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.parent = ? ORDER BY e.name`).all(path) as Row[];
      return rows.map(toEntity);
    },

    async createCollection({ path, owner, now, jobs }) {
      return tx(() => {
        if (entityAt(path)) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        parentMustBeCollection(path);
        const uid = randomUUID();
        const res = q(`INSERT INTO entities (uid, path, parent, name, kind, owner, created_at, modified_at)
          VALUES (?, ?, ?, ?, 'collection', ?, ?, ?)`).run(uid, path, parentOf(path), baseName(path), owner, now.getTime(), now.getTime());
        q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
        enqueue(jobs?.({ type: 'collection.created', entityId: uid, path }) ?? [], now);
        return entityAt(path) as Collection;
      });
    },

    async commitObject({ path, owner, size, checksum, blob, now, overwrite, jobs }) {
      return tx(() => {
        const existing = entityAt(path);
        let replacedBlob: string | null = null;
        let event: BackendEvent;
        if (existing) {
          if (existing.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
          if (!overwrite) throw new LadingError('CONFLICT', `'${path}' already exists; use force=true to overwrite it.`);
          replacedBlob = existing.blob;
          q('UPDATE entities SET size = ?, checksum = ?, blob = ?, modified_at = ? WHERE path = ?')
            .run(size, checksum, blob, now.getTime(), path);
          q('INSERT OR IGNORE INTO blobs (blob, since) VALUES (?, ?)').run(replacedBlob, now.getTime());
          event = { type: 'object.overwritten', entityId: existing.id, path };
        } else {
          parentMustBeCollection(path);
          const uid = randomUUID();
          const res = q(`INSERT INTO entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
            VALUES (?, ?, ?, ?, 'dataobject', ?, ?, ?, ?, ?, ?)`)
            .run(uid, path, parentOf(path), baseName(path), owner, size, checksum, blob, now.getTime(), now.getTime());
          q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
          event = { type: 'object.created', entityId: uid, path };
        }
        q('DELETE FROM blobs WHERE blob = ?').run(blob);
        const jobIds = enqueue(jobs?.(event) ?? [], now);
        return { object: entityAt(path) as DataObject, replacedBlob, jobIds };
      });
    },

    async rename(from, to, now, jobs) {
      return tx(() => {
        const moving = entityAt(from);
        if (!moving) throw new LadingError('NOT_FOUND', `'${from}' does not exist.`);
        if (entityAt(to)) throw new LadingError('CONFLICT', `'${to}' already exists.`);
        if (to.startsWith(from + '/')) throw new LadingError('CONFLICT', `'${from}' cannot be moved inside itself.`);
        parentMustBeCollection(to);
        const len = from.length;
        q(`UPDATE entities SET
              path = ? || substr(path, ? + 1),
              parent = CASE WHEN path = ? THEN ? ELSE ? || substr(parent, ? + 1) END,
              name = CASE WHEN path = ? THEN ? ELSE name END,
              modified_at = CASE WHEN path = ? THEN ? ELSE modified_at END
            WHERE path = ? OR substr(path, 1, ? + 1) = ? || '/'`)
          .run(to, len, from, parentOf(to), to, len, from, baseName(to), from, now.getTime(), from, len, from);
        const type = moving.kind === 'collection' ? 'collection.renamed' : 'object.renamed';
        enqueue(jobs?.({ type, entityId: moving.id, path: to, from }) ?? [], now);
        return entityAt(to)!;
      });
    },

    async getEntityById(id) {
      const row = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.uid = ?`).get(id) as Row | undefined;
      return row ? toEntity(row) : null;
    },

    async listDescendants(path, limit, afterPath) {
      const prefix = path === '/' ? '/' : path + '/';
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e
        WHERE substr(e.path, 1, ?) = ? AND e.path <> ? AND e.path > ? ORDER BY e.path LIMIT ?`)
        .all(prefix.length, prefix, path, afterPath ?? '', limit) as Row[];
      return rows.map(toEntity);
    },

    async setAccess(path, principal, level) {
      tx(() => {
        const id = idOf(path);
        if (level === null) q('DELETE FROM acls WHERE entity_id = ? AND principal = ?').run(id, principal);
        else q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?) ON CONFLICT (entity_id, principal) DO UPDATE SET level = excluded.level').run(id, principal, ACCESS_RANK[level]);
      });
    },

    async listAccess(path) {
      const id = idOf(path);
      const rows = q('SELECT principal, level FROM acls WHERE entity_id = ? ORDER BY principal').all(id) as Row[];
      return rows.map((r): AccessEntry => ({ principal: r.principal as string, level: levelOf(Number(r.level)) }));
    },

    async accessLevel(path, principals) {
      if (principals.length === 0) return null;
      const paths = lineage(path);
      const row = q(`SELECT MAX(a.level) AS level FROM acls a JOIN entities e ON e.id = a.entity_id
        WHERE e.path IN (${paths.map(() => '?').join(',')}) AND a.principal IN (${principals.map(() => '?').join(',')})`)
        .get(...paths, ...principals) as Row;
      return row.level === null ? null : levelOf(Number(row.level));
    },

    async addMeta(path, { attribute, value, unit }) {
      tx(() => {
        q('INSERT OR IGNORE INTO avus (entity_id, attribute, value, unit) VALUES (?, ?, ?, ?)').run(idOf(path), attribute, value, unit);
      });
    },

    async removeMeta(path, attribute, value) {
      tx(() => {
        const id = idOf(path);
        if (value === undefined) q('DELETE FROM avus WHERE entity_id = ? AND attribute = ?').run(id, attribute);
        else q('DELETE FROM avus WHERE entity_id = ? AND attribute = ? AND value = ?').run(id, attribute, value);
      });
    },

    async listMeta(path) {
      const rows = q('SELECT attribute, value, unit FROM avus WHERE entity_id = ? ORDER BY attribute, value, unit').all(idOf(path)) as Row[];
      return rows.map((r): Avu => ({ attribute: r.attribute as string, value: r.value as string, unit: r.unit as string }));
    },

    async createUser(user) {
      tx(() => {
        if (q('SELECT 1 FROM users WHERE name = ?').get(user.name)) throw new LadingError('CONFLICT', `The name '${user.name}' is taken.`);
        q('INSERT INTO users (name, kind, password_hash, created_at) VALUES (?, ?, ?, ?)')
          .run(user.name, user.kind, user.passwordHash, user.createdAt.getTime());
      });
    },

    async getUser(name) {
      const row = q('SELECT * FROM users WHERE name = ?').get(name) as Row | undefined;
      return row ? toUser(row) : null;
    },

    async listUsers() {
      return (q('SELECT * FROM users ORDER BY name').all() as Row[]).map(toUser);
    },

    async setPasswordHash(name, hash) {
      const res = q('UPDATE users SET password_hash = ? WHERE name = ?').run(hash, name);
      if (res.changes === 0) throw new LadingError('NOT_FOUND', `No user '${name}'.`);
    },

    async addToGroup(group, user) {
      tx(() => {
        const g = q('SELECT kind FROM users WHERE name = ?').get(group) as Row | undefined;
        if (!g || g.kind !== 'group') throw new LadingError('NOT_FOUND', `No group '${group}'.`);
        if (!q('SELECT 1 FROM users WHERE name = ?').get(user)) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        q('INSERT OR IGNORE INTO group_members (group_name, user_name) VALUES (?, ?)').run(group, user);
      });
    },

    async groupsOf(user) {
      return (q('SELECT group_name FROM group_members WHERE user_name = ? ORDER BY group_name').all(user) as Row[])
        .map((r) => r.group_name as string);
    },

    async putSession(s) {
      q(`INSERT INTO sessions (token_hash, user_name, created_at, expires_at, credential) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (token_hash) DO UPDATE SET user_name = excluded.user_name, created_at = excluded.created_at,
         expires_at = excluded.expires_at, credential = excluded.credential`)
        .run(s.tokenHash, s.user, s.createdAt.getTime(), s.expiresAt.getTime(), s.credential);
    },

    async getSession(tokenHash, now) {
      const row = q('SELECT * FROM sessions WHERE token_hash = ? AND expires_at > ?').get(tokenHash, now.getTime()) as Row | undefined;
      return row ? toSession(row) : null;
    },

    async updateSessionCredential(tokenHash, credential, expected) {
      if (expected === undefined) return q('UPDATE sessions SET credential = ? WHERE token_hash = ?').run(credential, tokenHash).changes > 0;
      return q('UPDATE sessions SET credential = ? WHERE token_hash = ? AND credential IS ?').run(credential, tokenHash, expected).changes > 0;
    },

    async latestSessionOf(user, now) {
      const row = q('SELECT * FROM sessions WHERE user_name = ? AND expires_at > ? ORDER BY created_at DESC, rowid DESC LIMIT 1')
        .get(user, now.getTime()) as Row | undefined;
      return row ? toSession(row) : null;
    },

    async deleteSession(tokenHash) {
      q('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
    },

    async deleteExpiredSessions(now) {
      return Number(q('DELETE FROM sessions WHERE expires_at <= ?').run(now.getTime()).changes);
    },

    async mapSubject(dn, user) {
      tx(() => {
        if (!q('SELECT 1 FROM users WHERE name = ?').get(user)) throw new LadingError('NOT_FOUND', `No user '${user}'.`);
        const row = q('SELECT user_name FROM subject_map WHERE dn = ?').get(dn) as Row | undefined;
        if (row && row.user_name !== user) throw new LadingError('CONFLICT', 'The subject is already mapped to another user.');
        if (!row) q('INSERT INTO subject_map (dn, user_name) VALUES (?, ?)').run(dn, user);
      });
    },

    async userForSubject(dn) {
      const row = q('SELECT user_name FROM subject_map WHERE dn = ?').get(dn) as Row | undefined;
      return row ? (row.user_name as string) : null;
    },

    async subjectsOf(user) {
      return (q('SELECT dn FROM subject_map WHERE user_name = ? ORDER BY dn').all(user) as Row[]).map((r) => r.dn as string);
    },

    async unmapSubject(dn) {
      q('DELETE FROM subject_map WHERE dn = ?').run(dn);
    },

    async enqueueJobs(jobs, now) {
      return tx(() => enqueue(jobs, now));
    },

    async claimJobs(worker, now, leaseUntil, limit) {
      return tx(() => {
        const rows = q(`SELECT * FROM jobs WHERE (state = 'pending' AND run_after <= ?) OR (state = 'running' AND lease_until < ?)
          ORDER BY run_after, id LIMIT ?`).all(now.getTime(), now.getTime(), limit) as Row[];
        const claim = q(`UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1, updated_at = ? WHERE id = ?`);
        for (const row of rows) claim.run(worker, leaseUntil.getTime(), now.getTime(), row.id as number);
        return rows.map((row) => toJob({ ...row, state: 'running', lease_owner: worker, lease_until: leaseUntil.getTime(), attempts: Number(row.attempts) + 1, updated_at: now.getTime() }));
      });
    },

    async completeJob(id, worker, now) {
      return q(`UPDATE jobs SET state = 'done', lease_owner = NULL, lease_until = NULL, last_error = NULL, updated_at = ?
        WHERE id = ? AND state = 'running' AND lease_owner = ?`).run(now.getTime(), Number(id), worker).changes > 0;
    },

    async failJob(id, worker, error, now, retryAt) {
      return q(`UPDATE jobs SET state = ?, run_after = ?, lease_owner = NULL, lease_until = NULL, last_error = ?, updated_at = ?
        WHERE id = ? AND state = 'running' AND lease_owner = ?`)
        .run(retryAt ? 'pending' : 'failed', (retryAt ?? now).getTime(), error, now.getTime(), Number(id), worker).changes > 0;
    },

    async releaseJobs(before) {
      return Number(q(`UPDATE jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL WHERE state = 'running' AND updated_at < ?`)
        .run(before.getTime()).changes);
    },

    async getJob(id) {
      const row = q('SELECT * FROM jobs WHERE id = ?').get(Number(id)) as Row | undefined;
      return row ? toJob(row) : null;
    },

    async listJobs(state, limit) {
      const rows = (state
        ? q('SELECT * FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?').all(state, limit)
        : q('SELECT * FROM jobs ORDER BY id DESC LIMIT ?').all(limit)) as Row[];
      return rows.map(toJob);
    },

    async putHandle(handle, values, now) {
      q(`INSERT INTO handles (handle, record, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (handle) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`)
        .run(handle, JSON.stringify(values), now.getTime(), now.getTime());
    },

    async getHandle(handle) {
      const row = q('SELECT * FROM handles WHERE handle = ?').get(handle) as Row | undefined;
      return row ? {
        handle, values: JSON.parse(row.record as string) as HandleValues,
        createdAt: new Date(Number(row.created_at)), updatedAt: new Date(Number(row.updated_at)),
      } : null;
    },

    async trackBlob(blob, now) {
      q('INSERT OR IGNORE INTO blobs (blob, since) VALUES (?, ?)').run(blob, now.getTime());
    },

    async untrackBlob(blob) {
      q('DELETE FROM blobs WHERE blob = ?').run(blob);
    },

    async trackedBlobs(before) {
      return (q('SELECT blob FROM blobs WHERE since < ? ORDER BY since').all(before.getTime()) as Row[]).map((r) => r.blob as string);
    },

    async oidcPut(kind, id, r) {
      q(`INSERT INTO oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at, consumed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
         ON CONFLICT (kind, id) DO UPDATE SET payload = excluded.payload, uid = excluded.uid, user_code = excluded.user_code,
         grant_id = excluded.grant_id, expires_at = excluded.expires_at, consumed_at = NULL`)
        .run(kind, id, r.payload, r.uid ?? null, r.userCode ?? null, r.grantId ?? null, r.expiresAt?.getTime() ?? null);
    },

    async oidcInsert(kind, id, r, now) {
      return tx(() => {
        q('DELETE FROM oidc_records WHERE kind = ? AND id = ? AND expires_at <= ?').run(kind, id, now.getTime());
        return q(`INSERT OR IGNORE INTO oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`)
          .run(kind, id, r.payload, r.uid ?? null, r.userCode ?? null, r.grantId ?? null, r.expiresAt?.getTime() ?? null).changes > 0;
      });
    },

    async oidcGet(kind, id, now) {
      return toOidcRecord(q(`SELECT * FROM oidc_records WHERE kind = ? AND id = ? AND ${LIVE}`).get(kind, id, now.getTime()) as Row | undefined);
    },

    async oidcGetByUid(kind, uid, now) {
      return toOidcRecord(q(`SELECT * FROM oidc_records WHERE kind = ? AND uid = ? AND ${LIVE}`).get(kind, uid, now.getTime()) as Row | undefined);
    },

    async oidcGetByUserCode(kind, userCode, now) {
      return toOidcRecord(q(`SELECT * FROM oidc_records WHERE kind = ? AND user_code = ? AND ${LIVE}`).get(kind, userCode, now.getTime()) as Row | undefined);
    },

    async oidcList(kind, now) {
      return (q(`SELECT * FROM oidc_records WHERE kind = ? AND ${LIVE} ORDER BY id`).all(kind, now.getTime()) as Row[]).map((r) => toOidcRecord(r)!);
    },

    async oidcConsume(kind, id, now) {
      return q(`UPDATE oidc_records SET consumed_at = ? WHERE kind = ? AND id = ? AND consumed_at IS NULL AND ${LIVE}`)
        .run(now.getTime(), kind, id, now.getTime()).changes > 0;
    },

    async oidcDelete(kind, id) {
      q('DELETE FROM oidc_records WHERE kind = ? AND id = ?').run(kind, id);
    },

    async oidcDeleteByGrantId(grantId) {
      q('DELETE FROM oidc_records WHERE grant_id = ?').run(grantId);
    },

    async oidcDeleteExpired(now) {
      const records = Number(q('DELETE FROM oidc_records WHERE expires_at <= ?').run(now.getTime()).changes);
      return records + Number(q('DELETE FROM oidc_counters WHERE window_ends <= ?').run(now.getTime()).changes);
    },

    async oidcCount(key, now, windowSeconds, increment) {
      return tx(() => {
        const t = now.getTime();
        if (increment) {
          q(`INSERT INTO oidc_counters (key, count, window_ends) VALUES (?, 1, ?)
             ON CONFLICT (key) DO UPDATE SET
               count = CASE WHEN window_ends <= ? THEN 1 ELSE count + 1 END,
               window_ends = CASE WHEN window_ends <= ? THEN excluded.window_ends ELSE window_ends END`)
            .run(key, t + windowSeconds * 1000, t, t);
        }
        const row = q('SELECT count, window_ends FROM oidc_counters WHERE key = ? AND window_ends > ?').get(key, t) as Row | undefined;
        return row
          ? { count: Number(row.count), resetsAt: new Date(Number(row.window_ends)) }
          : { count: 0, resetsAt: now };
      });
    },

    async oidcResetCount(key) {
      q('DELETE FROM oidc_counters WHERE key = ?').run(key);
    },
  };
  return catalog;
}



// NOTE: the `now` parameter of every query using it comes right after the lookup keys.
const LIVE = '(expires_at IS NULL OR expires_at > ?)';



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
