/** The share-link role of the SQLite catalog: links by token hash, id, entity and creator, and their uses. */
import { LadingError } from '../../../core/errors.ts';
import type { ShareStore } from '../../../core/ports.ts';
import { toShare, unknownCreator } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

// NOTE: the `now` parameter of every query using it comes right after the lookup keys.
const ACTIVE = '(expires_at IS NULL OR expires_at > ?) AND (max_uses IS NULL OR uses < max_uses)';

/** The share-link role over `db`; each method is one statement, a creation one transaction. */
export function createSqliteShares(db: SqliteConnection): ShareStore {
  const { q, tx } = db;
  return {
    async createShare(share) {
      return tx(() => {
        if (!q('SELECT 1 FROM users WHERE name = ?').get(share.creator)) throw unknownCreator(share.creator);
        const stored = q(`INSERT INTO shares (id, token_hash, entity_uid, kind, creator, created_at, expires_at, max_uses, uses, password_hash, max_bytes, bytes_used)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 0) ON CONFLICT DO NOTHING`)
          .run(share.id, share.tokenHash, share.entityId, share.kind, share.creator, share.createdAt.getTime(),
            share.expiresAt?.getTime() ?? null, share.maxUses, share.passwordHash, share.maxBytes).changes > 0;
        if (!stored) throw new LadingError('CONFLICT', 'A link with this id or token exists.');
        return { ...share, uses: 0, bytesUsed: 0 };
      });
    },

    async getShareByToken(tokenHash) {
      const row = q('SELECT * FROM shares WHERE token_hash = ?').get(tokenHash) as Row | undefined;
      return row ? toShare(row) : null;
    },

    async getShare(id) {
      const row = q('SELECT * FROM shares WHERE id = ?').get(id) as Row | undefined;
      return row ? toShare(row) : null;
    },

    async listSharesOfEntity(entityId) {
      return (q('SELECT * FROM shares WHERE entity_uid = ? ORDER BY created_at, rowid').all(entityId) as Row[]).map(toShare);
    },

    async listSharesOfCreator(creator) {
      return (q('SELECT * FROM shares WHERE creator = ? ORDER BY created_at, rowid').all(creator) as Row[]).map(toShare);
    },

    async countActiveShares(creator, now) {
      const row = q(`SELECT count(*) AS n FROM shares WHERE creator = ? AND ${ACTIVE}`).get(creator, now.getTime()) as Row;
      return Number(row.n);
    },

    async revokeShare(id) {
      return q('DELETE FROM shares WHERE id = ?').run(id).changes > 0;
    },

    async updateShare(id, change) {
      return tx(() => {
        const row = q('SELECT * FROM shares WHERE id = ?').get(id) as Row | undefined;
        if (!row) return null;
        const share = toShare(row);
        const expiresAt = change.expiresAt === undefined ? share.expiresAt : change.expiresAt;
        const maxUses = change.maxUses === undefined ? share.maxUses : change.maxUses;
        q('UPDATE shares SET expires_at = ?, max_uses = ? WHERE id = ?').run(expiresAt?.getTime() ?? null, maxUses, id);
        return { ...share, expiresAt, maxUses };
      });
    },

    async consumeShareUse(id, now) {
      return q(`UPDATE shares SET uses = uses + 1 WHERE id = ? AND ${ACTIVE}`).run(id, now.getTime()).changes > 0;
    },

    async purgeExpiredShares(before) {
      return Number(q('DELETE FROM shares WHERE expires_at < ?').run(before.getTime()).changes);
    },

    async releaseShareUse(id) {
      q('UPDATE shares SET uses = uses - 1 WHERE id = ? AND uses > 0').run(id);
    },

    async reserveShareBytes(id, bytes, fallback) {
      return q('UPDATE shares SET bytes_used = bytes_used + ? WHERE id = ? AND bytes_used + ? <= coalesce(max_bytes, ?)')
        .run(bytes, id, bytes, fallback).changes > 0;
    },

    async releaseShareBytes(id, bytes) {
      q('UPDATE shares SET bytes_used = max(bytes_used - ?, 0) WHERE id = ?').run(bytes, id);
    },
  };
}
