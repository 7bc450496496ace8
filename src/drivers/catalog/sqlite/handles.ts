/** The handle role of the SQLite catalog: the records of the embedded PID service. */
import type { HandleStore } from '../../../core/ports.ts';
import type { HandleValues } from '../../../core/types.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The handle role over `db`; each method is one statement. */
export function createSqliteHandles(db: SqliteConnection): HandleStore {
  const { q } = db;
  return {
    async putHandle(handle, values, now) {
      q(`INSERT INTO handles (handle, record, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (handle) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`)
        .run(handle, JSON.stringify(values), now.getTime(), now.getTime());
    },

    async getHandle(handle) {
      const row = q('SELECT * FROM handles WHERE handle = ?').get(handle) as Row | undefined;
      return row ? {
        handle, values: JSON.parse(row.record as string) as HandleValues,
        createdAt: new Date(Number(row.created_at)), updatedAt: new Date(Number(row.updated_at)),
      } : null;
    },
  };
}
