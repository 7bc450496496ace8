/** The share-link role of the PostgreSQL catalog: links by token hash, id, entity and creator, and their uses. */
import { LadingError } from '../../../core/errors.ts';
import type { ShareStore } from '../../../core/ports.ts';
import { toShare, unknownCreator } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

// NOTE: `now` is always the second parameter of the queries using it.
const ACTIVE = '(expires_at IS NULL OR expires_at > $2) AND (max_uses IS NULL OR uses < max_uses)';
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * The share-link role over `db`; each method is one statement. A use, or bytes of a drop box's
 * bound, are taken by one conditional UPDATE, whose row lock makes racing nodes take turns, so
 * the last use goes once and the bound is never passed.
 */
export function createPostgresShares(db: PostgresConnection): ShareStore {
  const { pool, S } = db;
  return {
    async createShare(share) {
      let stored: number;
      try {
        stored = await count(pool, `INSERT INTO ${S}shares (id, token_hash, entity_uid, kind, creator, created_at, expires_at, max_uses, uses, password_hash, max_bytes, bytes_used)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10, 0) ON CONFLICT DO NOTHING`,
        [share.id, share.tokenHash, share.entityId, share.kind, share.creator, share.createdAt.getTime(),
          share.expiresAt?.getTime() ?? null, share.maxUses, share.passwordHash, share.maxBytes]);
      } catch (err) {
        if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw unknownCreator(share.creator);
        throw err;
      }
      if (stored === 0) throw new LadingError('CONFLICT', 'A link with this id or token exists.');
      return { ...share, uses: 0, bytesUsed: 0 };
    },

    async getShareByToken(tokenHash) {
      const row = await one(pool, `SELECT * FROM ${S}shares WHERE token_hash = $1`, [tokenHash]);
      return row ? toShare(row) : null;
    },

    async getShare(id) {
      const row = await one(pool, `SELECT * FROM ${S}shares WHERE id = $1`, [id]);
      return row ? toShare(row) : null;
    },

    async listSharesOfEntity(entityId) {
      return (await all(pool, `SELECT * FROM ${S}shares WHERE entity_uid = $1 ORDER BY created_at, seq`, [entityId])).map(toShare);
    },

    async listSharesOfCreator(creator) {
      return (await all(pool, `SELECT * FROM ${S}shares WHERE creator = $1 ORDER BY created_at, seq`, [creator])).map(toShare);
    },

    async countActiveShares(creator, now) {
      const row = await one(pool, `SELECT count(*) AS n FROM ${S}shares WHERE creator = $1 AND ${ACTIVE}`, [creator, now.getTime()]);
      return Number(row?.n ?? 0);
    },

    async revokeShare(id) {
      return (await count(pool, `DELETE FROM ${S}shares WHERE id = $1`, [id])) > 0;
    },

    async updateShare(id, change) {
      // NOTE: one statement: a field left out keeps its value (CASE on whether it was given),
      // and RETURNING answers the row as the update left it, uses taken meanwhile included.
      const row = await one(pool, `UPDATE ${S}shares SET
           expires_at = CASE WHEN $2 THEN $3::bigint ELSE expires_at END,
           max_uses = CASE WHEN $4 THEN $5::integer ELSE max_uses END
         WHERE id = $1 RETURNING *`,
      [id, change.expiresAt !== undefined, change.expiresAt?.getTime() ?? null, change.maxUses !== undefined, change.maxUses ?? null]);
      return row ? toShare(row) : null;
    },

    async consumeShareUse(id, now) {
      return (await count(pool, `UPDATE ${S}shares SET uses = uses + 1 WHERE id = $1 AND ${ACTIVE}`, [id, now.getTime()])) > 0;
    },

    async purgeExpiredShares(before) {
      return count(pool, `DELETE FROM ${S}shares WHERE expires_at < $1`, [before.getTime()]);
    },

    async releaseShareUse(id) {
      await pool.query(`UPDATE ${S}shares SET uses = uses - 1 WHERE id = $1 AND uses > 0`, [id]);
    },

    async reserveShareBytes(id, bytes, fallback) {
      return (await count(pool, `UPDATE ${S}shares SET bytes_used = bytes_used + $2 WHERE id = $1 AND bytes_used + $2 <= coalesce(max_bytes, $3)`,
        [id, bytes, fallback])) > 0;
    },

    async releaseShareBytes(id, bytes) {
      await pool.query(`UPDATE ${S}shares SET bytes_used = greatest(bytes_used - $2, 0) WHERE id = $1`, [id, bytes]);
    },
  };
}
