/**
 * The blob-tracking role of the SQLite catalog: the `blobs` table, and the helpers a commit
 * runs inside its own transaction.
 */
import type { BlobTracker } from '../../../core/ports.ts';
import { toTrackedBlob } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** Starts tracking `blob` since `now` (no-op when tracked), inside the caller's transaction if any. */
export function trackBlobRow(db: SqliteConnection, blob: string, now: Date, owner: string | null = null): void {
  db.q('INSERT OR IGNORE INTO blobs (blob, since, owner) VALUES (?, ?, ?)').run(blob, now.getTime(), owner);
}

/** Stops tracking `blob`, inside the caller's transaction if any; false when it was not tracked. */
export function untrackBlobRow(db: SqliteConnection, blob: string): boolean {
  return Number(db.q('DELETE FROM blobs WHERE blob = ?').run(blob).changes) > 0;
}

/** The blob-tracking role over `db`; each method is one statement. */
export function createSqliteBlobs(db: SqliteConnection): BlobTracker {
  return {
    async trackBlob(blob, now, owner = null) {
      trackBlobRow(db, blob, now, owner);
    },

    async untrackBlob(blob) {
      untrackBlobRow(db, blob);
    },

    async trackedBlobs(before) {
      const rows = db.q(`SELECT b.blob, b.since, b.owner, n.seen_at FROM blobs b LEFT JOIN nodes n ON n.id = b.owner
        WHERE b.since < ? ORDER BY b.since, b.blob`).all(before.getTime()) as Row[];
      return rows.map(toTrackedBlob);
    },

    async heartbeat(node, now) {
      db.q('INSERT INTO nodes (id, seen_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at').run(node, now.getTime());
    },

    async forgetNode(node) {
      db.q('DELETE FROM nodes WHERE id = ?').run(node);
    },
  };
}
