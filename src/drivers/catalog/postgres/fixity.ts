/**
 * The fixity role of the PostgreSQL catalog: the stored objects the checks of `core/fixity.ts`
 * read, their claims and what the checks found, kept in the columns `verified_at`,
 * `damaged_at`, `damage`, `fixity_holder` and `fixity_until` of `entities`. Checkers on several
 * nodes claim with `FOR UPDATE SKIP LOCKED`, so each object goes to one of them.
 */
import type { FixityStore } from '../../../core/ports.ts';
import { STORED_OBJECT_COLUMNS, STORED_OBJECT_KEPT, toStoredObject } from '../rows.ts';
import { type PostgresConnection, all, one } from './connection.ts';

/** The fixity role over `db`; each method is one statement. */
export function createPostgresFixity(db: PostgresConnection): FixityStore {
  const { pool, S } = db;
  const STORED = `SELECT ${STORED_OBJECT_COLUMNS} FROM ${S}entities e WHERE e.kind = 'dataobject' AND e.blob IS NOT NULL AND ${STORED_OBJECT_KEPT(S)}`;
  return {
    async storedObjects(after, limit) {
      const rows = await all(pool, `${STORED} AND e.blob > $1 ORDER BY e.blob LIMIT $2`, [after ?? '', limit]);
      return rows.map(toStoredObject);
    },

    async knownBlobs(blobs) {
      if (blobs.length === 0) return new Set();
      const rows = await all(pool, `SELECT blob FROM ${S}entities WHERE blob = ANY($1::text[])
        UNION SELECT blob FROM ${S}blobs WHERE blob = ANY($1::text[])
        UNION SELECT blob FROM ${S}uploads WHERE blob = ANY($1::text[])`, [[...blobs]]);
      return new Set(rows.map((r) => r.blob as string));
    },

    async claimFixity({ holder, now, dueBefore, until, limit }) {
      // NOTE: SKIP LOCKED: rows another node is claiming now are its own; the lease columns
      // keep them from others after its transaction ends.
      // The candidates are chosen once (a CTE): a subquery the plan scanned again would see
      // the rows just claimed gone and add others past the limit.
      const rows = await all(pool, `WITH c AS MATERIALIZED (SELECT e.id FROM ${S}entities e
          WHERE e.kind = 'dataobject' AND e.blob IS NOT NULL AND ${STORED_OBJECT_KEPT(S)}
            AND e.verified_at < $3 AND (e.fixity_until IS NULL OR e.fixity_until <= $4 OR e.fixity_holder = $1)
          ORDER BY e.verified_at, e.id LIMIT $5 FOR UPDATE OF e SKIP LOCKED)
        UPDATE ${S}entities u SET fixity_holder = $1, fixity_until = $2 FROM c WHERE u.id = c.id
        RETURNING ${STORED_OBJECT_COLUMNS.replaceAll('e.', 'u.')}`, [holder, until.getTime(), dueBefore.getTime(), now.getTime(), limit]);
      return rows.map(toStoredObject).sort((a, b) => (a.verifiedAt?.getTime() ?? 0) - (b.verifiedAt?.getTime() ?? 0));
    },

    async recordFixity({ blob, now, damage }) {
      const row = await one(pool, `UPDATE ${S}entities e SET verified_at = $1, fixity_holder = NULL, fixity_until = NULL,
          damaged_at = CASE WHEN $2::text IS NULL THEN NULL ELSE COALESCE(e.damaged_at, $1) END, damage = $2::text
        WHERE e.blob = $3 AND e.kind = 'dataobject'
        RETURNING ${STORED_OBJECT_COLUMNS}`, [now.getTime(), damage, blob]);
      return row ? toStoredObject(row) : null;
    },

    async countDamaged() {
      const row = await one(pool, `SELECT COUNT(*) AS n FROM ${S}entities e WHERE e.damaged_at IS NOT NULL AND e.kind = 'dataobject' AND e.blob IS NOT NULL AND ${STORED_OBJECT_KEPT(S)}`, []);
      return Number(row?.n ?? 0);
    },
  };
}
