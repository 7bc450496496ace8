/** The CA role of the PostgreSQL catalog: the deployment's certificate authorities, keys kept sealed. */
import type { CaStore } from '../../../core/ports.ts';
import { toStoredCa } from '../rows.ts';
import { type PostgresConnection, all, count } from './connection.ts';

/** The CA role over `db`; each method is one statement. */
export function createPostgresCas(db: PostgresConnection): CaStore {
  const { pool, S } = db;
  return {
    async addCa(ca) {
      return (await count(pool, `INSERT INTO ${S}certificate_authorities (generation, cert_pem, sealed_key, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (generation) DO NOTHING`, [ca.generation, ca.certPem, ca.sealedKey, ca.createdAt.getTime()])) > 0;
    },

    async listCas() {
      return (await all(pool, `SELECT * FROM ${S}certificate_authorities ORDER BY generation DESC`)).map(toStoredCa);
    },
  };
}
