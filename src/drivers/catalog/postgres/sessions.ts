/** The session role of the PostgreSQL catalog: login sessions keyed by token hash, and their credentials. */
import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../../../core/ports.ts';
import { toSession } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

/** Live at the parameter `$n`: before both deadlines. */
const live = (n: number) => `expires_at > $${n} AND (idle_expires_at IS NULL OR idle_expires_at > $${n})`;

/** The session role over `db`; each method is one statement. */
export function createPostgresSessions(db: PostgresConnection): SessionStore {
  const { pool, S } = db;
  return {
    async putSession(s) {
      await pool.query(`INSERT INTO ${S}sessions (token_hash, id, kind, user_name, label, created_at, expires_at, idle_expires_at, last_used_at, credential)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (token_hash) DO UPDATE SET id = excluded.id, kind = excluded.kind, user_name = excluded.user_name,
         label = excluded.label, created_at = excluded.created_at, expires_at = excluded.expires_at,
         idle_expires_at = excluded.idle_expires_at, last_used_at = excluded.last_used_at, credential = excluded.credential`,
      [s.tokenHash, s.id ?? randomBytes(12).toString('base64url'), s.kind ?? 'api', s.user, s.label ?? null,
        s.createdAt.getTime(), s.expiresAt.getTime(), s.idleExpiresAt?.getTime() ?? null, s.lastUsedAt?.getTime() ?? null, s.credential]);
    },

    async getSession(tokenHash, now) {
      const row = await one(pool, `SELECT * FROM ${S}sessions WHERE token_hash = $1 AND ${live(2)}`, [tokenHash, now.getTime()]);
      return row ? toSession(row) : null;
    },

    async touchSession(tokenHash, usedAt, idleExpiresAt) {
      return (await count(pool, `UPDATE ${S}sessions SET last_used_at = $2,
        idle_expires_at = CASE WHEN idle_expires_at IS NULL THEN NULL ELSE $3::bigint END
        WHERE token_hash = $1 AND ${live(2)}`, [tokenHash, usedAt.getTime(), idleExpiresAt?.getTime() ?? null])) > 0;
    },

    async updateSessionCredential(tokenHash, credential, expected) {
      if (expected === undefined) {
        return (await count(pool, `UPDATE ${S}sessions SET credential = $1 WHERE token_hash = $2`, [credential, tokenHash])) > 0;
      }
      return (await count(pool, `UPDATE ${S}sessions SET credential = $1 WHERE token_hash = $2 AND credential IS NOT DISTINCT FROM $3::text`,
        [credential, tokenHash, expected])) > 0;
    },

    async latestSessionOf(user, now) {
      const row = await one(pool, `SELECT * FROM ${S}sessions WHERE user_name = $1 AND ${live(2)}
        ORDER BY created_at DESC, seq DESC LIMIT 1`, [user, now.getTime()]);
      return row ? toSession(row) : null;
    },

    async listSessionsOf(user, kind, now) {
      const rows = await all(pool, `SELECT * FROM ${S}sessions WHERE user_name = $1 AND kind = $2 AND ${live(3)}
        ORDER BY created_at, seq`, [user, kind, now.getTime()]);
      return rows.map(toSession);
    },

    async deleteSession(tokenHash) {
      await pool.query(`DELETE FROM ${S}sessions WHERE token_hash = $1`, [tokenHash]);
    },

    async deleteSessionById(user, id) {
      return (await count(pool, `DELETE FROM ${S}sessions WHERE user_name = $1 AND id = $2`, [user, id])) > 0;
    },

    async deleteSessionsOf(user) {
      return count(pool, `DELETE FROM ${S}sessions WHERE user_name = $1`, [user]);
    },

    async deleteExpiredSessions(now) {
      return count(pool, `DELETE FROM ${S}sessions WHERE expires_at <= $1 OR idle_expires_at <= $1`, [now.getTime()]);
    },
  };
}
