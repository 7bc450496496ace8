/** The handle role of the PostgreSQL catalog: the records of the embedded PID service. */
import type { HandleStore } from '../../../core/ports.ts';
import type { HandleValues } from '../../../core/types.ts';
import { type PostgresConnection, one } from './connection.ts';

/** The handle role over `db`; each method is one statement. */
export function createPostgresHandles(db: PostgresConnection): HandleStore {
  const { pool, S } = db;
  return {
    async putHandle(handle, values, now) {
      await pool.query(`INSERT INTO ${S}handles (handle, record, created_at, updated_at) VALUES ($1, $2, $3, $3)
         ON CONFLICT (handle) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
      [handle, JSON.stringify(values), now.getTime()]);
    },

    async getHandle(handle) {
      const row = await one(pool, `SELECT * FROM ${S}handles WHERE handle = $1`, [handle]);
      return row ? {
        handle, values: JSON.parse(row.record as string) as HandleValues,
        createdAt: new Date(Number(row.created_at)), updatedAt: new Date(Number(row.updated_at)),
      } : null;
    },
  };
}
