/** The store of small objects' bytes (`InlineStore`) over the SQLite catalog's database. */
import type { InlineStore } from '../../../core/ports.ts';
import type { Row, SqliteConnection } from './connection.ts';

/**
 * The bytes `put` keeps until their object's commit stores them (see `storeKeptBytes`), by
 * blob key. One per catalog, shared by the inline store and the namespace role.
 */
export type KeptBytes = Map<string, Buffer>;

/**
 * Inside the transaction of the commit that makes `blob` an object's blob: stores the bytes
 * kept for it as a row of `inline_blobs`. Returns whether there were any; the caller forgets
 * them once its transaction has committed.
 */
export function storeKeptBytes(db: SqliteConnection, kept: KeptBytes, blob: string): boolean {
  const bytes = kept.get(blob);
  if (bytes === undefined) return false;
  db.q('INSERT INTO inline_blobs (blob, bytes) VALUES (?, ?) ON CONFLICT (blob) DO UPDATE SET bytes = excluded.bytes').run(blob, bytes);
  return true;
}

/**
 * Small objects' bytes in the table `inline_blobs` of `db`, kept in `kept` from `put` until
 * their object's commit. NOTE: a row of its own, written at `put`, was a transaction of its
 * own in each small upload's path: 8% of its CPU.
 */
export function createSqliteInline(db: SqliteConnection, kept: KeptBytes): InlineStore {
  const { q } = db;
  return {
    async put(key, bytes) {
      kept.set(key, bytes);
    },
    get(key) {
      const waiting = kept.get(key);
      if (waiting !== undefined) return waiting;
      const row = q('SELECT bytes FROM inline_blobs WHERE blob = ?').get(key) as Row | undefined;
      if (!row) return null;
      const bytes = row.bytes as Uint8Array;
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    size(key) {
      const waiting = kept.get(key);
      if (waiting !== undefined) return waiting.length;
      const row = q('SELECT length(bytes) AS size FROM inline_blobs WHERE blob = ?').get(key) as Row | undefined;
      return row ? Number(row.size) : null;
    },
    async delete(key) {
      if (kept.delete(key)) return true;
      // NOTE: not waited for, as a file's unlink is not: the blob's untracking comes after it in
      // the same log, so a power cut that loses the deletion loses the untracking too, and the
      // sweeper deletes the blob again.
      return Number(q('DELETE FROM inline_blobs WHERE blob = ?').run(key).changes) > 0;
    },
  };
}
