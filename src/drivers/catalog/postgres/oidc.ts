/**
 * The OpenID Connect role of the PostgreSQL catalog: expiring records of the embedded provider
 * and the relying party, and the fixed-window rate-limit counters every node shares. Payloads
 * stay opaque.
 */
import type { OidcRecordInput, OidcStore } from '../../../core/ports.ts';
import { toOidcRecord } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

// NOTE: `now` is always the third parameter of the queries using it.
const LIVE = '(expires_at IS NULL OR expires_at > $3)';

function oidcValues(r: OidcRecordInput): unknown[] {
  return [r.payload, r.uid ?? null, r.userCode ?? null, r.grantId ?? null, r.expiresAt?.getTime() ?? null];
}

/** The OpenID Connect role over `db`; each method is one statement or one transaction. */
export function createPostgresOidc(db: PostgresConnection): OidcStore {
  const { pool, S, tx } = db;
  return {
    async oidcPut(kind, id, r) {
      await pool.query(`INSERT INTO ${S}oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at, consumed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
         ON CONFLICT (kind, id) DO UPDATE SET payload = excluded.payload, uid = excluded.uid, user_code = excluded.user_code,
         grant_id = excluded.grant_id, expires_at = excluded.expires_at, consumed_at = NULL`,
      [kind, id, ...oidcValues(r)]);
    },

    async oidcInsert(kind, id, r, now) {
      return tx(async (c) => {
        await c.query(`DELETE FROM ${S}oidc_records WHERE kind = $1 AND id = $2 AND expires_at <= $3`, [kind, id, now.getTime()]);
        return (await count(c, `INSERT INTO ${S}oidc_records (kind, id, payload, uid, user_code, grant_id, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (kind, id) DO NOTHING`, [kind, id, ...oidcValues(r)])) > 0;
      });
    },

    async oidcGet(kind, id, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND id = $2 AND ${LIVE}`, [kind, id, now.getTime()]));
    },

    async oidcGetByUid(kind, uid, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND uid = $2 AND ${LIVE} LIMIT 1`, [kind, uid, now.getTime()]));
    },

    async oidcGetByUserCode(kind, userCode, now) {
      return toOidcRecord(await one(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND user_code = $2 AND ${LIVE} LIMIT 1`, [kind, userCode, now.getTime()]));
    },

    async oidcList(kind, now) {
      return (await all(pool, `SELECT * FROM ${S}oidc_records WHERE kind = $1 AND ${LIVE.replace('$3', '$2')} ORDER BY id`, [kind, now.getTime()]))
        .map((r) => toOidcRecord(r)!);
    },

    async oidcConsume(kind, id, now) {
      return (await count(pool, `UPDATE ${S}oidc_records SET consumed_at = $3 WHERE kind = $1 AND id = $2 AND consumed_at IS NULL AND ${LIVE}`,
        [kind, id, now.getTime()])) > 0;
    },

    async oidcDelete(kind, id) {
      await pool.query(`DELETE FROM ${S}oidc_records WHERE kind = $1 AND id = $2`, [kind, id]);
    },

    async oidcDeleteByGrantId(grantId) {
      await pool.query(`DELETE FROM ${S}oidc_records WHERE grant_id = $1`, [grantId]);
    },

    async oidcDeleteExpired(now) {
      const records = await count(pool, `DELETE FROM ${S}oidc_records WHERE expires_at <= $1`, [now.getTime()]);
      return records + await count(pool, `DELETE FROM ${S}oidc_counters WHERE window_ends <= $1`, [now.getTime()]);
    },

    async oidcCount(key, now, windowSeconds, increment) {
      const t = now.getTime();
      const row = increment
        ? await one(pool, `INSERT INTO ${S}oidc_counters AS k (key, count, window_ends) VALUES ($1, 1, $2)
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN k.window_ends <= $3 THEN 1 ELSE k.count + 1 END,
              window_ends = CASE WHEN k.window_ends <= $3 THEN excluded.window_ends ELSE k.window_ends END
            RETURNING count, window_ends`, [key, t + windowSeconds * 1000, t])
        : await one(pool, `SELECT count, window_ends FROM ${S}oidc_counters WHERE key = $1 AND window_ends > $2`, [key, t]);
      return row
        ? { count: Number(row.count), resetsAt: new Date(Number(row.window_ends)) }
        : { count: 0, resetsAt: now };
    },

    async oidcResetCount(key) {
      await pool.query(`DELETE FROM ${S}oidc_counters WHERE key = $1`, [key]);
    },
  };
}
