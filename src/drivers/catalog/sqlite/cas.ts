/** The CA role of the SQLite catalog: the deployment's certificate authorities, keys kept sealed. */
import type { CaStore } from '../../../core/ports.ts';
import { toStoredCa } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** The CA role over `db`; each method is one statement. */
export function createSqliteCas(db: SqliteConnection): CaStore {
  const { q } = db;
  return {
    async addCa(ca) {
      const res = q('INSERT INTO certificate_authorities (generation, cert_pem, sealed_key, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (generation) DO NOTHING')
        .run(ca.generation, ca.certPem, ca.sealedKey, ca.createdAt.getTime());
      return Number(res.changes) > 0;
    },

    async listCas() {
      return (q('SELECT * FROM certificate_authorities ORDER BY generation DESC').all() as Row[]).map(toStoredCa);
    },
  };
}
