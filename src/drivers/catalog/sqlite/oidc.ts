/**
 * The OpenID Connect role of the SQLite catalog: expiring records of the embedded provider and
 * the relying party, and the fixed-window rate-limit counters. Payloads stay opaque.
 */
import type { OidcStore } from '../../../core/ports.ts';
import { toOidcRecord } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

// NOTE: the `now` parameter of every query using it comes right after the lookup keys.
const LIVE = '(expires_at IS NULL OR expires_at > ?)';

/** The OpenID Connect role over `db`; an insert-if-absent or a count runs in one transaction. */
export function createSqliteOidc(db: SqliteConnection): OidcStore {
  const { q, tx } = db;
  return {
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
}
