/** The S3 key role of the PostgreSQL catalog: users' access key pairs for the S3 front, secrets kept sealed. */
import { LadingError } from '../../../core/errors.ts';
import type { S3KeyStore } from '../../../core/ports.ts';
import { toS3Key } from '../rows.ts';
import { type PostgresConnection, all, count, one } from './connection.ts';

/** The S3 key role over `db`; each method is one statement. */
export function createPostgresS3Keys(db: PostgresConnection): S3KeyStore {
  const { pool, S } = db;
  return {
    async createS3Key(k) {
      const stored = await count(pool, `INSERT INTO ${S}s3_keys (id, user_name, secret, label, created_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (id) DO NOTHING`, [k.id, k.user, k.secret, k.label, k.createdAt.getTime()]);
      if (stored === 0) throw new LadingError('CONFLICT', `The access key id '${k.id}' is taken.`);
    },

    async getS3Key(id) {
      const row = await one(pool, `SELECT * FROM ${S}s3_keys WHERE id = $1`, [id]);
      return row ? toS3Key(row) : null;
    },

    async listS3Keys(user) {
      return (await all(pool, `SELECT * FROM ${S}s3_keys WHERE user_name = $1 ORDER BY created_at, seq`, [user])).map(toS3Key);
    },

    async deleteS3Key(user, id) {
      return (await count(pool, `DELETE FROM ${S}s3_keys WHERE user_name = $1 AND id = $2`, [user, id])) > 0;
    },
  };
}
