/** The store of small objects' bytes (`InlineStore`) over the SQLite catalog's database. */
import type { InlineStore } from '../../../core/ports.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** Small objects' bytes in the table `inline_blobs` of `db`; each method is one statement. */
export function createSqliteInline(db: SqliteConnection): InlineStore {
  const { q } = db;
  return {
    async put(key, bytes) {
      // NOTE: not waited for: the commit that makes the object visible comes after this in the
      // same log and is waited for, and a flush of the log keeps everything before it too. A
      // wait here was a second flush in each small upload's path (15-20% fewer objects/s).
      q('INSERT INTO inline_blobs (blob, bytes) VALUES (?, ?) ON CONFLICT (blob) DO UPDATE SET bytes = excluded.bytes').run(key, bytes);
    },
    get(key) {
      const row = q('SELECT bytes FROM inline_blobs WHERE blob = ?').get(key) as Row | undefined;
      if (!row) return null;
      const bytes = row.bytes as Uint8Array;
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    size(key) {
      const row = q('SELECT length(bytes) AS size FROM inline_blobs WHERE blob = ?').get(key) as Row | undefined;
      return row ? Number(row.size) : null;
    },
    async delete(key) {
      // NOTE: not waited for, as a file's unlink is not: the blob's untracking comes after it in
      // the same log, so a power cut that loses the deletion loses the untracking too, and the
      // sweeper deletes the blob again.
      return Number(q('DELETE FROM inline_blobs WHERE blob = ?').run(key).changes) > 0;
    },
  };
}
