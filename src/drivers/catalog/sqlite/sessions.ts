/** The session role of the SQLite catalog: login sessions keyed by token hash, and their credentials. */
import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../../../core/ports.ts';
import { sessionLiveAt, toSession } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** Live at `?` (the same time bound twice): before both deadlines. */
const LIVE = 'expires_at > ? AND (idle_expires_at IS NULL OR idle_expires_at > ?)';

/** The session role over `db`; each method is one statement. */
export function createSqliteSessions(db: SqliteConnection): SessionStore {
  const { q } = db;
  return {
    async putSession(s) {
      q(`INSERT INTO sessions (token_hash, id, kind, user_name, label, created_at, expires_at, idle_expires_at, last_used_at, credential)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (token_hash) DO UPDATE SET id = excluded.id, kind = excluded.kind, user_name = excluded.user_name,
         label = excluded.label, created_at = excluded.created_at, expires_at = excluded.expires_at,
         idle_expires_at = excluded.idle_expires_at, last_used_at = excluded.last_used_at, credential = excluded.credential`)
        .run(s.tokenHash, s.id ?? randomBytes(12).toString('base64url'), s.kind ?? 'api', s.user, s.label ?? null,
          s.createdAt.getTime(), s.expiresAt.getTime(), s.idleExpiresAt?.getTime() ?? null, s.lastUsedAt?.getTime() ?? null, s.credential);
    },

    async getSession(tokenHash, now) {
      // NOTE: remembered by token alone; whether it is still live at `now` is decided here, as
      // LIVE does in SQL.
      const session = db.memo(`session\0${tokenHash}`, () => {
        const row = q('SELECT * FROM sessions WHERE token_hash = ?').get(tokenHash) as Row | undefined;
        return row ? toSession(row) : null;
      });
      return session && sessionLiveAt(session, now) ? session : null;
    },

    async touchSession(tokenHash, usedAt, idleExpiresAt) {
      const t = usedAt.getTime();
      return q(`UPDATE sessions SET last_used_at = ?, idle_expires_at = CASE WHEN idle_expires_at IS NULL THEN NULL ELSE ? END
        WHERE token_hash = ? AND ${LIVE}`).run(t, idleExpiresAt?.getTime() ?? null, tokenHash, t, t).changes > 0;
    },

    async updateSessionCredential(tokenHash, credential, expected) {
      if (expected === undefined) return q('UPDATE sessions SET credential = ? WHERE token_hash = ?').run(credential, tokenHash).changes > 0;
      return q('UPDATE sessions SET credential = ? WHERE token_hash = ? AND credential IS ?').run(credential, tokenHash, expected).changes > 0;
    },

    async latestSessionOf(user, now) {
      const t = now.getTime();
      const row = q(`SELECT * FROM sessions WHERE user_name = ? AND ${LIVE} ORDER BY created_at DESC, rowid DESC LIMIT 1`)
        .get(user, t, t) as Row | undefined;
      return row ? toSession(row) : null;
    },

    async listSessionsOf(user, kind, now) {
      const t = now.getTime();
      const rows = q(`SELECT * FROM sessions WHERE user_name = ? AND kind = ? AND ${LIVE} ORDER BY created_at, rowid`)
        .all(user, kind, t, t) as Row[];
      return rows.map(toSession);
    },

    async deleteSession(tokenHash) {
      q('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
    },

    async deleteSessionById(user, id) {
      return q('DELETE FROM sessions WHERE user_name = ? AND id = ?').run(user, id).changes > 0;
    },

    async deleteSessionsOf(user) {
      return Number(q('DELETE FROM sessions WHERE user_name = ?').run(user).changes);
    },

    async deleteExpiredSessions(now) {
      const t = now.getTime();
      return Number(q('DELETE FROM sessions WHERE expires_at <= ? OR idle_expires_at <= ?').run(t, t).changes);
    },
  };
}
