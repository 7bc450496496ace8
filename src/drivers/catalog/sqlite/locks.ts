/** The WebDAV lock role of the SQLite catalog (see `LockStore`). */
import { type Path, lineage } from '../../../core/path.ts';
import type { LockStore } from '../../../core/ports.ts';
import { locksConflict, toDavLock } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

// NOTE: '0' is the character after '/', so [p/, p0) holds exactly the paths below p.
const BELOW = 'path >= ? AND path < ?';

/** The lock role over `db`. */
export function createSqliteLocks(db: SqliteConnection): LockStore {
  const { q, tx } = db;
  const covering = (path: Path, now: number, below: boolean): Row[] => {
    const ancestors = lineage(path).slice(0, -1);
    const rows = q(`SELECT * FROM dav_locks WHERE path = ? AND expires_at > ?`).all(path, now) as Row[];
    for (const a of ancestors) rows.push(...(q(`SELECT * FROM dav_locks WHERE path = ? AND depth = 'infinity' AND expires_at > ?`).all(a, now) as Row[]));
    if (below) {
      const root = path === '/' ? '' : path;
      rows.push(...(q(`SELECT * FROM dav_locks WHERE ${BELOW} AND expires_at > ?`).all(`${root}/`, `${root}0`, now) as Row[]));
    }
    return rows;
  };
  return {
    async putLock(lock, now) {
      return tx(() => {
        q('DELETE FROM dav_locks WHERE expires_at <= ?').run(now.getTime());
        const conflicts = covering(lock.path, now.getTime(), true).map(toDavLock).filter((l) => locksConflict(l, lock));
        if (conflicts.length > 0) return conflicts;
        q(`INSERT INTO dav_locks (token, path, depth, scope, owner, owner_xml, timeout_seconds, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(lock.token, lock.path, lock.depth, lock.scope, lock.owner, lock.ownerXml,
          lock.timeoutSeconds, lock.createdAt.getTime(), lock.expiresAt.getTime());
        return [];
      });
    },

    async locksAt(path, now, options = {}) {
      return covering(path, now.getTime(), options.below === true).map(toDavLock);
    },

    async getLock(token, now) {
      const row = q('SELECT * FROM dav_locks WHERE token = ? AND expires_at > ?').get(token, now.getTime()) as Row | undefined;
      return row ? toDavLock(row) : null;
    },

    async refreshLock(token, timeoutSeconds, expiresAt, now) {
      return tx(() => {
        const changed = q('UPDATE dav_locks SET timeout_seconds = ?, expires_at = ? WHERE token = ? AND expires_at > ?')
          .run(timeoutSeconds, expiresAt.getTime(), token, now.getTime());
        if (Number(changed.changes) === 0) return null;
        return toDavLock(q('SELECT * FROM dav_locks WHERE token = ?').get(token) as Row);
      });
    },

    async deleteLock(token) {
      return tx(() => Number(q('DELETE FROM dav_locks WHERE token = ?').run(token).changes) > 0);
    },

    async deleteLocksWithin(path) {
      const root = path === '/' ? '' : path;
      return tx(() => Number(q(`DELETE FROM dav_locks WHERE path = ? OR (${BELOW})`).run(path, `${root}/`, `${root}0`).changes));
    },
  };
}
