/**
 * The WebDAV lock role of the PostgreSQL catalog (see `LockStore`). A new lock is checked and
 * recorded with the table locked against other writers, so two nodes granting conflicting
 * locks at once take turns and the second sees the first's.
 */
import { type Path, lineage } from '../../../core/path.ts';
import type { LockStore } from '../../../core/ports.ts';
import { locksConflict, toDavLock } from '../rows.ts';
import { type PgQueryable, all, one } from './connection.ts';
import type { PostgresConnection } from './connection.ts';

/** The lock role over `db`. */
export function createPostgresLocks(db: PostgresConnection): LockStore {
  const { pool, S, tx } = db;
  // NOTE: '0' is the character after '/', so [p/, p0) holds exactly the paths below p (the
  // column sorts by bytes: COLLATE "C").
  const covering = (c: PgQueryable, path: Path, now: number, below: boolean) => {
    const root = path === '/' ? '' : path;
    return all(c, `SELECT * FROM ${S}dav_locks WHERE expires_at > $1 AND (path = $2
        OR (depth = 'infinity' AND path = ANY($3::text[]))
        OR ($4 AND path >= $5 AND path < $6))`,
    [now, path, lineage(path).slice(0, -1), below, `${root}/`, `${root}0`]);
  };
  return {
    async putLock(lock, now) {
      return tx(async (c) => {
        await c.query(`LOCK TABLE ${S}dav_locks IN SHARE ROW EXCLUSIVE MODE`);
        await c.query(`DELETE FROM ${S}dav_locks WHERE expires_at <= $1`, [now.getTime()]);
        const conflicts = (await covering(c, lock.path, now.getTime(), true)).map(toDavLock).filter((l) => locksConflict(l, lock));
        if (conflicts.length > 0) return conflicts;
        await c.query(`INSERT INTO ${S}dav_locks (token, path, depth, scope, owner, owner_xml, timeout_seconds, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [lock.token, lock.path, lock.depth, lock.scope, lock.owner, lock.ownerXml,
          lock.timeoutSeconds, lock.createdAt.getTime(), lock.expiresAt.getTime()]);
        return [];
      });
    },

    async locksAt(path, now, options = {}) {
      return (await covering(pool, path, now.getTime(), options.below === true)).map(toDavLock);
    },

    async getLock(token, now) {
      const row = await one(pool, `SELECT * FROM ${S}dav_locks WHERE token = $1 AND expires_at > $2`, [token, now.getTime()]);
      return row ? toDavLock(row) : null;
    },

    async refreshLock(token, timeoutSeconds, expiresAt, now) {
      const row = await one(pool, `UPDATE ${S}dav_locks SET timeout_seconds = $1, expires_at = $2 WHERE token = $3 AND expires_at > $4 RETURNING *`,
        [timeoutSeconds, expiresAt.getTime(), token, now.getTime()]);
      return row ? toDavLock(row) : null;
    },

    async deleteLock(token) {
      return (await pool.query(`DELETE FROM ${S}dav_locks WHERE token = $1`, [token])).rowCount! > 0;
    },

    async deleteLocksWithin(path) {
      const root = path === '/' ? '' : path;
      return (await pool.query(`DELETE FROM ${S}dav_locks WHERE path = $1 OR (path >= $2 AND path < $3)`, [path, `${root}/`, `${root}0`])).rowCount ?? 0;
    },
  };
}
