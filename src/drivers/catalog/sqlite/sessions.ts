/** The session role of the SQLite catalog: login sessions keyed by token hash, and their credentials. */
import type { SessionStore } from '../../../core/ports.ts';
import { toSession } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The session role over `db`; each method is one statement. */
export function createSqliteSessions(db: SqliteConnection): SessionStore {
  const { q } = db;
  return {
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

    async deleteSessionsOf(user) {
      return Number(q('DELETE FROM sessions WHERE user_name = ?').run(user).changes);
    },

    async deleteExpiredSessions(now) {
      return Number(q('DELETE FROM sessions WHERE expires_at <= ?').run(now.getTime()).changes);
    },
  };
}
