/** The session role of the PostgreSQL catalog: login sessions keyed by token hash, and their credentials. */
import type { SessionStore } from '../../../core/ports.ts';
import { toSession } from '../rows.ts';
import { type PostgresConnection, count, one } from './connection.ts';

/** The session role over `db`; each method is one statement. */
export function createPostgresSessions(db: PostgresConnection): SessionStore {
  const { pool, S } = db;
  return {
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

    async deleteSessionsOf(user) {
      return count(pool, `DELETE FROM ${S}sessions WHERE user_name = $1`, [user]);
    },

    async deleteExpiredSessions(now) {
      return count(pool, `DELETE FROM ${S}sessions WHERE expires_at <= $1`, [now.getTime()]);
    },
  };
}
