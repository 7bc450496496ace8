/**
 * The resumable-upload role of the SQLite catalog: the `uploads` table, its leases, and the
 * helper a commit runs inside its own transaction to mark an upload complete.
 */
import { LadingError } from '../../../core/errors.ts';
import { UPLOAD_PART } from '../../../core/catalog.ts';
import type { UploadStore } from '../../../core/ports.ts';
import { toUpload } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/**
 * Marks the open upload `id`, leased by `holder`, complete (inside the caller's transaction):
 * the object it became, the jobs the commit enqueued, and when the record expires. False when
 * it is not open or not leased by `holder`.
 */
export function completeUploadRow(db: SqliteConnection, input: { id: string; holder: string; entityId: string; jobIds: string[]; now: Date; expiresAt: Date }): boolean {
  const res = db.q(`UPDATE uploads SET status = 'complete', entity_id = ?, job_ids = ?, updated_at = ?, expires_at = ?,
      lease_holder = NULL, lease_until = NULL
    WHERE id = ? AND status = 'open' AND lease_holder = ?`)
    .run(input.entityId, JSON.stringify(input.jobIds), input.now.getTime(), input.expiresAt.getTime(), input.id, input.holder);
  return Number(res.changes) > 0;
}

/** Whether the upload `id` is open and leased by `holder` (inside the caller's transaction). */
export function uploadHeldRow(db: SqliteConnection, id: string, holder: string): boolean {
  return db.q(`SELECT 1 FROM uploads WHERE id = ? AND status = 'open' AND lease_holder = ?`).get(id, holder) !== undefined;
}

/** The upload role over `db`; each method is one statement. */
export function createSqliteUploads(db: SqliteConnection): UploadStore {
  const { q } = db;
  return {
    async createUpload(u) {
      if (q('SELECT 1 FROM uploads WHERE id = ? OR blob = ?').get(u.id, u.blob)) throw new LadingError('CONFLICT', 'The upload id is taken.');
      q(`INSERT INTO uploads (id, owner, path, overwrite, length, received, metadata, blob, state, status, created_at, updated_at, expires_at, lease_holder, lease_until)
        VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, 'open', ?, ?, ?, ?, ?)`)
        .run(u.id, u.owner, u.path, u.overwrite ? 1 : 0, u.length, u.metadata, u.blob, u.state, u.createdAt.getTime(), u.createdAt.getTime(),
          u.expiresAt.getTime(), u.lease?.holder ?? null, u.lease?.until.getTime() ?? null);
    },

    async getUpload(id) {
      const row = q('SELECT * FROM uploads WHERE id = ?').get(id) as Row | undefined;
      return row ? toUpload(row) : null;
    },

    async listUploads(owner) {
      return (q(`SELECT * FROM uploads WHERE owner = ? AND status = 'open' ORDER BY created_at, id`).all(owner) as Row[]).map(toUpload);
    },

    async countOpenUploads(owner, now) {
      const row = (owner === null
        ? q(`SELECT count(*) AS n, min(expires_at) AS first FROM uploads WHERE status = 'open' AND expires_at >= ? AND metadata <> ?`).get(now.getTime(), UPLOAD_PART)
        : q(`SELECT count(*) AS n, min(expires_at) AS first FROM uploads WHERE owner = ? AND status = 'open' AND expires_at >= ? AND metadata <> ?`)
          .get(owner, now.getTime(), UPLOAD_PART)) as Row;
      return { count: Number(row.n), firstExpiry: row.first === null ? null : new Date(Number(row.first)) };
    },

    async claimUpload(id, holder, now, until) {
      const res = q(`UPDATE uploads SET lease_holder = ?, lease_until = ?
        WHERE id = ? AND status = 'open' AND (lease_holder IS NULL OR lease_holder = ? OR lease_until < ?)`)
        .run(holder, until.getTime(), id, holder, now.getTime());
      return Number(res.changes) > 0;
    },

    async renewUpload(id, holder, until) {
      const res = q(`UPDATE uploads SET lease_until = ? WHERE id = ? AND status = 'open' AND lease_holder = ?`).run(until.getTime(), id, holder);
      return Number(res.changes) > 0;
    },

    async releaseUpload(id, holder) {
      q('UPDATE uploads SET lease_holder = NULL, lease_until = NULL WHERE id = ? AND lease_holder = ?').run(id, holder);
    },

    async releaseUploadLeases() {
      return Number(q('UPDATE uploads SET lease_holder = NULL, lease_until = NULL WHERE lease_holder IS NOT NULL').run().changes);
    },

    async checkpointUpload(id, holder, { offset, state, now, expiresAt, leaseUntil }) {
      const res = q(`UPDATE uploads SET received = ?, state = ?, updated_at = ?, expires_at = ?, lease_until = ?
        WHERE id = ? AND status = 'open' AND lease_holder = ? AND received <= ?`)
        .run(offset, state, now.getTime(), expiresAt.getTime(), leaseUntil.getTime(), id, holder, offset);
      return Number(res.changes) > 0;
    },

    async setUploadLength(id, holder, length) {
      const res = q(`UPDATE uploads SET length = ? WHERE id = ? AND status = 'open' AND lease_holder = ? AND length IS NULL AND received <= ?`)
        .run(length, id, holder, length);
      return Number(res.changes) > 0;
    },

    async deleteUpload(id) {
      return Number(q('DELETE FROM uploads WHERE id = ?').run(id).changes) > 0;
    },

    async expiredUploads(now, limit) {
      return (q(`SELECT * FROM uploads WHERE expires_at < ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY expires_at, id LIMIT ?`)
        .all(now.getTime(), now.getTime(), limit) as Row[]).map(toUpload);
    },

    async stagedBlobs() {
      return (q(`SELECT blob FROM uploads WHERE status = 'open'`).all() as Row[]).map((r) => r.blob as string);
    },
  };
}
