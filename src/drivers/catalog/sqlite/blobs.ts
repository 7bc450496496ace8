/**
 * The blob-tracking role of the SQLite catalog: the `blobs` table, and the helpers a commit
 * runs inside its own transaction.
 */
import type { BlobTracker } from '../../../core/ports.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** Starts tracking `blob` since `now` (no-op when tracked), inside the caller's transaction if any. */
export function trackBlobRow(db: SqliteConnection, blob: string, now: Date): void {
  db.q('INSERT OR IGNORE INTO blobs (blob, since) VALUES (?, ?)').run(blob, now.getTime());
}

/** Stops tracking `blob` (no-op when untracked), inside the caller's transaction if any. */
export function untrackBlobRow(db: SqliteConnection, blob: string): void {
  db.q('DELETE FROM blobs WHERE blob = ?').run(blob);
}

/** The blob-tracking role over `db`; each method is one statement. */
export function createSqliteBlobs(db: SqliteConnection): BlobTracker {
  return {
    async trackBlob(blob, now) {
      trackBlobRow(db, blob, now);
    },

    async untrackBlob(blob) {
      untrackBlobRow(db, blob);
    },

    async trackedBlobs(before) {
      return (db.q('SELECT blob FROM blobs WHERE since < ? ORDER BY since').all(before.getTime()) as Row[]).map((r) => r.blob as string);
    },
  };
}
