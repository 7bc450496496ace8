/**
 * Catalog driver for SQLite through `node:sqlite` (built into Node, no native build): the
 * embedded default, one file in the data directory. Each method runs in one transaction. It
 * adapts SQLite only; the rules it enforces are those of the `Catalog` port.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { LadingError } from '../../core/errors.ts';
import { type Path, baseName, lineage, parentOf } from '../../core/path.ts';
import type { Catalog } from '../../core/ports.ts';
import {
  ACCESS_LEVELS, ACCESS_RANK, type AccessEntry, type AccessLevel, type Avu, type Collection,
  type DataObject, type Entity, type PrincipalKind, type SessionRecord, type UserRecord,
} from '../../core/types.ts';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.ts';

export interface SqliteCatalogOptions {
  /** File name of the database, or `:memory:`. */
  file: string;
}

type Row = Record<string, SQLInputValue>;

const ENTITY_COLUMNS = `e.id, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.blob, e.created_at, e.modified_at,
  (SELECT value FROM avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid`;

function toEntity(row: Row): Entity {
  const base = {
    path: row.path as Path,
    name: row.name as string,
    owner: row.owner as string,
    createdAt: new Date(Number(row.created_at)),
    modifiedAt: new Date(Number(row.modified_at)),
    pid: (row.pid as string | null) ?? null,
  };
  if (row.kind === 'collection') return { ...base, kind: 'collection' };
  return { ...base, kind: 'dataobject', size: Number(row.size), checksum: row.checksum as string, blob: row.blob as string };
}

function levelOf(rank: number): AccessLevel {
  return ACCESS_LEVELS[rank - 1]!;
}

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
  const q = (sql: string) => db.prepare(sql);
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

    async createCollection({ path, owner, now }) {
      return tx(() => {
        if (entityAt(path)) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        parentMustBeCollection(path);
        const res = q(`INSERT INTO entities (path, parent, name, kind, owner, created_at, modified_at)
          VALUES (?, ?, ?, 'collection', ?, ?, ?)`).run(path, parentOf(path), baseName(path), owner, now.getTime(), now.getTime());
        q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
        return entityAt(path) as Collection;
      });
    },

    async commitObject({ path, owner, size, checksum, blob, now, overwrite }) {
      return tx(() => {
        const existing = entityAt(path);
        let replacedBlob: string | null = null;
        if (existing) {
          if (existing.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
          if (!overwrite) throw new LadingError('CONFLICT', `'${path}' already exists; use force=true to overwrite it.`);
          replacedBlob = existing.blob;
          q('UPDATE entities SET size = ?, checksum = ?, blob = ?, modified_at = ? WHERE path = ?')
            .run(size, checksum, blob, now.getTime(), path);
          q('INSERT OR IGNORE INTO blobs (blob, since) VALUES (?, ?)').run(replacedBlob, now.getTime());
        } else {
          parentMustBeCollection(path);
          const res = q(`INSERT INTO entities (path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at)
            VALUES (?, ?, ?, 'dataobject', ?, ?, ?, ?, ?, ?)`)
            .run(path, parentOf(path), baseName(path), owner, size, checksum, blob, now.getTime(), now.getTime());
          q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
        }
        q('DELETE FROM blobs WHERE blob = ?').run(blob);
        return { object: entityAt(path) as DataObject, replacedBlob };
      });
    },

    async rename(from, to, now) {
      return tx(() => {
        if (!entityAt(from)) throw new LadingError('NOT_FOUND', `'${from}' does not exist.`);
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
        return entityAt(to)!;
      });
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

    async updateSessionCredential(tokenHash, credential) {
      return q('UPDATE sessions SET credential = ? WHERE token_hash = ?').run(credential, tokenHash).changes > 0;
    },

    async deleteSession(tokenHash) {
      q('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
    },

    async deleteExpiredSessions(now) {
      return Number(q('DELETE FROM sessions WHERE expires_at <= ?').run(now.getTime()).changes);
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
  };
  return catalog;
}

function toUser(row: Row): UserRecord {
  return {
    name: row.name as string,
    kind: row.kind as PrincipalKind,
    passwordHash: (row.password_hash as string | null) ?? null,
    createdAt: new Date(Number(row.created_at)),
  };
}

function toSession(row: Row): SessionRecord {
  return {
    tokenHash: row.token_hash as string,
    user: row.user_name as string,
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
    credential: (row.credential as string | null) ?? null,
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
