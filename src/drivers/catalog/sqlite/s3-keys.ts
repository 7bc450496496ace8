/** The S3 key role of the SQLite catalog: users' access key pairs for the S3 front, secrets kept sealed. */
import { LadingError } from '../../../core/errors.ts';
import type { S3KeyStore } from '../../../core/ports.ts';
import { toS3Key } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The S3 key role over `db`; each method is one statement. */
export function createSqliteS3Keys(db: SqliteConnection): S3KeyStore {
  const { q } = db;
  return {
    async createS3Key(k) {
      const res = q(`INSERT INTO s3_keys (id, user_name, secret, label, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`)
        .run(k.id, k.user, k.secret, k.label, k.createdAt.getTime());
      if (res.changes === 0) throw new LadingError('CONFLICT', `The access key id '${k.id}' is taken.`);
    },

    async getS3Key(id) {
      const row = q('SELECT * FROM s3_keys WHERE id = ?').get(id) as Row | undefined;
      return row ? toS3Key(row) : null;
    },

    async listS3Keys(user) {
      return (q('SELECT * FROM s3_keys WHERE user_name = ? ORDER BY created_at, rowid').all(user) as Row[]).map(toS3Key);
    },

    async deleteS3Key(user, id) {
      return q('DELETE FROM s3_keys WHERE user_name = ? AND id = ?').run(user, id).changes > 0;
    },
  };
}
