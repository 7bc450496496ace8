/**
 * The blob-tracking role of the PostgreSQL catalog: the `blobs` table, and the helpers a
 * commit runs inside its own transaction.
 */
import type { BlobTracker } from '../../../core/ports.ts';
import { toTrackedBlob } from '../rows.ts';
import { type PgQueryable, type PostgresConnection, all } from './connection.ts';

/** Starts tracking `blob` since `now` (no-op when tracked), on `c` (the pool or a transaction). */
export async function trackBlobRow(db: PostgresConnection, c: PgQueryable, blob: string, now: Date, owner: string | null = null): Promise<void> {
  await c.query(`INSERT INTO ${db.S}blobs (blob, since, owner) VALUES ($1, $2, $3) ON CONFLICT (blob) DO NOTHING`, [blob, now.getTime(), owner]);
}

/** Stops tracking `blob`, on `c` (the pool or a transaction); false when it was not tracked. */
export async function untrackBlobRow(db: PostgresConnection, c: PgQueryable, blob: string): Promise<boolean> {
  return ((await c.query(`DELETE FROM ${db.S}blobs WHERE blob = $1`, [blob])).rowCount ?? 0) > 0;
}

/** The blob-tracking role over `db`; each method is one statement. */
export function createPostgresBlobs(db: PostgresConnection): BlobTracker {
  const { pool, S } = db;
  return {
    async trackBlob(blob, now, owner = null) {
      await trackBlobRow(db, pool, blob, now, owner);
    },

    async untrackBlob(blob) {
      await untrackBlobRow(db, pool, blob);
    },

    async trackedBlobs(before) {
      const rows = await all(pool, `SELECT b.blob, b.since, b.owner, n.seen_at FROM ${S}blobs b LEFT JOIN ${S}nodes n ON n.id = b.owner
        WHERE b.since < $1 ORDER BY b.since, b.blob`, [before.getTime()]);
      return rows.map(toTrackedBlob);
    },

    async heartbeat(node, now) {
      await pool.query(`INSERT INTO ${S}nodes (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, [node, now.getTime()]);
    },

    async forgetNode(node) {
      await pool.query(`DELETE FROM ${S}nodes WHERE id = $1`, [node]);
    },
  };
}
