/**
 * The resumable-upload role of the PostgreSQL catalog: the `uploads` table, its leases
 * (compare-and-set in one statement, so two nodes cannot both hold one), and the helper a
 * commit runs inside its own transaction to mark an upload complete.
 */
import { LadingError } from '../../../core/errors.ts';
import { UPLOAD_PART } from '../../../core/catalog.ts';
import type { UploadStore } from '../../../core/ports.ts';
import { toUpload } from '../rows.ts';
import { type PgQueryable, type PostgresConnection, all, count, one } from './connection.ts';

/**
 * Marks the open upload `id`, leased by `holder`, complete (on `c`, the caller's transaction):
 * the object it became, the jobs the commit enqueued, and when the record expires. False when
 * it is not open or not leased by `holder`.
 */
export async function completeUploadRow(
  db: PostgresConnection, c: PgQueryable, input: { id: string; holder: string; entityId: string; jobIds: string[]; now: Date; expiresAt: Date },
): Promise<boolean> {
  return (await count(c, `UPDATE ${db.S}uploads SET status = 'complete', entity_id = $1, job_ids = $2, updated_at = $3, expires_at = $4,
      lease_holder = NULL, lease_until = NULL
    WHERE id = $5 AND status = 'open' AND lease_holder = $6`,
  [input.entityId, JSON.stringify(input.jobIds), input.now.getTime(), input.expiresAt.getTime(), input.id, input.holder])) > 0;
}

/**
 * Whether the upload `id` is open and leased by `holder`, locking its row until the caller's
 * transaction ends (so no claim or checkpoint slips in before it completes).
 */
export async function uploadHeldRow(db: PostgresConnection, c: PgQueryable, id: string, holder: string): Promise<boolean> {
  return (await one(c, `SELECT 1 AS held FROM ${db.S}uploads WHERE id = $1 AND status = 'open' AND lease_holder = $2 FOR UPDATE`, [id, holder])) !== undefined;
}

/** The upload role over `db`; each method is one statement. */
export function createPostgresUploads(db: PostgresConnection): UploadStore {
  const { pool, S } = db;
  return {
    async createUpload(u) {
      const row = await one(pool, `INSERT INTO ${S}uploads (id, owner, path, overwrite, length, received, metadata, blob, state, status, created_at, updated_at, expires_at, lease_holder, lease_until)
        VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, 'open', $9, $9, $10, $11, $12) ON CONFLICT DO NOTHING RETURNING id`,
      [u.id, u.owner, u.path, u.overwrite, u.length, u.metadata, u.blob, u.state, u.createdAt.getTime(), u.expiresAt.getTime(),
        u.lease?.holder ?? null, u.lease?.until.getTime() ?? null]);
      if (!row) throw new LadingError('CONFLICT', 'The upload id is taken.');
    },

    async getUpload(id) {
      const row = await one(pool, `SELECT * FROM ${S}uploads WHERE id = $1`, [id]);
      return row ? toUpload(row) : null;
    },

    async listUploads(owner) {
      return (await all(pool, `SELECT * FROM ${S}uploads WHERE owner = $1 AND status = 'open' ORDER BY created_at, id`, [owner])).map(toUpload);
    },

    async countOpenUploads(owner, now) {
      const row = (await one(pool, `SELECT count(*) AS n, min(expires_at) AS first FROM ${S}uploads
        WHERE ($1::text IS NULL OR owner = $1) AND status = 'open' AND expires_at >= $2 AND metadata <> $3`, [owner, now.getTime(), UPLOAD_PART]))!;
      return { count: Number(row.n), firstExpiry: row.first === null ? null : new Date(Number(row.first)) };
    },

    async claimUpload(id, holder, now, until) {
      return (await count(pool, `UPDATE ${S}uploads SET lease_holder = $1, lease_until = $2
        WHERE id = $3 AND status = 'open' AND (lease_holder IS NULL OR lease_holder = $1 OR lease_until < $4)`,
      [holder, until.getTime(), id, now.getTime()])) > 0;
    },

    async renewUpload(id, holder, until) {
      return (await count(pool, `UPDATE ${S}uploads SET lease_until = $1 WHERE id = $2 AND status = 'open' AND lease_holder = $3`,
        [until.getTime(), id, holder])) > 0;
    },

    async releaseUpload(id, holder) {
      await pool.query(`UPDATE ${S}uploads SET lease_holder = NULL, lease_until = NULL WHERE id = $1 AND lease_holder = $2`, [id, holder]);
    },

    async releaseUploadLeases() {
      return count(pool, `UPDATE ${S}uploads SET lease_holder = NULL, lease_until = NULL WHERE lease_holder IS NOT NULL`, []);
    },

    async checkpointUpload(id, holder, { offset, state, now, expiresAt, leaseUntil }) {
      return (await count(pool, `UPDATE ${S}uploads SET received = $1, state = $2, updated_at = $3, expires_at = $4, lease_until = $5
        WHERE id = $6 AND status = 'open' AND lease_holder = $7 AND received <= $1`,
      [offset, state, now.getTime(), expiresAt.getTime(), leaseUntil.getTime(), id, holder])) > 0;
    },

    async setUploadLength(id, holder, length) {
      return (await count(pool, `UPDATE ${S}uploads SET length = $1
        WHERE id = $2 AND status = 'open' AND lease_holder = $3 AND length IS NULL AND received <= $1`, [length, id, holder])) > 0;
    },

    async deleteUpload(id) {
      return (await count(pool, `DELETE FROM ${S}uploads WHERE id = $1`, [id])) > 0;
    },

    async expiredUploads(now, limit) {
      return (await all(pool, `SELECT * FROM ${S}uploads WHERE expires_at < $1 AND (lease_until IS NULL OR lease_until < $1)
        ORDER BY expires_at, id LIMIT $2`, [now.getTime(), limit])).map(toUpload);
    },

    async stagedBlobs() {
      return (await all(pool, `SELECT blob FROM ${S}uploads WHERE status = 'open'`)).map((r) => r.blob as string);
    },
  };
}
