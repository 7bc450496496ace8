/**
 * The blob-tracking role of the PostgreSQL catalog: the `blobs` table, and the helpers a
 * commit runs inside its own transaction.
 */
import type { BlobTracker } from '../../../core/ports.ts';
import { type PgQueryable, type PostgresConnection, all } from './connection.ts';

/** Starts tracking `blob` since `now` (no-op when tracked), on `c` (the pool or a transaction). */
export async function trackBlobRow(db: PostgresConnection, c: PgQueryable, blob: string, now: Date): Promise<void> {
  await c.query(`INSERT INTO ${db.S}blobs (blob, since) VALUES ($1, $2) ON CONFLICT (blob) DO NOTHING`, [blob, now.getTime()]);
}

/** Stops tracking `blob` (no-op when untracked), on `c` (the pool or a transaction). */
export async function untrackBlobRow(db: PostgresConnection, c: PgQueryable, blob: string): Promise<void> {
  await c.query(`DELETE FROM ${db.S}blobs WHERE blob = $1`, [blob]);
}

/** The blob-tracking role over `db`; each method is one statement. */
export function createPostgresBlobs(db: PostgresConnection): BlobTracker {
  const { pool, S } = db;
  return {
    async trackBlob(blob, now) {
      await trackBlobRow(db, pool, blob, now);
    },

    async untrackBlob(blob) {
      await untrackBlobRow(db, pool, blob);
    },

    async trackedBlobs(before) {
      return (await all(pool, `SELECT blob FROM ${S}blobs WHERE since < $1 ORDER BY since, blob`, [before.getTime()])).map((r) => r.blob as string);
    },
  };
}
