/**
 * The fixity role of the SQLite catalog: the stored objects the checks of `core/fixity.ts`
 * read, their claims and what the checks found, kept in the columns `verified_at`,
 * `damaged_at`, `damage`, `fixity_holder` and `fixity_until` of `entities`.
 */
import type { Path } from '../../../core/path.ts';
import type { FixityStore } from '../../../core/ports.ts';
import { STORED_OBJECT_COLUMNS, STORED_OBJECT_KEPT, toStoredObject } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

const ENTITIES: ReadonlySet<string> = new Set(['entities']);

/** How many keys one statement of `knownBlobs` asks about (SQLite allows 32,766 parameters). */
const KNOWN_BATCH = 500;

/** The fixity role over `db`. */
export function createSqliteFixity(db: SqliteConnection): FixityStore {
  const { q, tx } = db;
  const STORED = `SELECT ${STORED_OBJECT_COLUMNS} FROM entities e WHERE e.kind = 'dataobject' AND e.blob IS NOT NULL AND ${STORED_OBJECT_KEPT('')}`;
  return {
    async storedObjects(after, limit) {
      const rows = q(`${STORED} AND e.blob > ? ORDER BY e.blob LIMIT ?`).all(after ?? '', limit) as Row[];
      return rows.map(toStoredObject);
    },

    async knownBlobs(blobs) {
      const known = new Set<string>();
      for (let i = 0; i < blobs.length; i += KNOWN_BATCH) {
        const batch = blobs.slice(i, i + KNOWN_BATCH);
        const marks = batch.map(() => '?').join(',');
        const rows = q(`SELECT blob FROM entities WHERE blob IN (${marks})
          UNION SELECT blob FROM blobs WHERE blob IN (${marks})
          UNION SELECT blob FROM uploads WHERE blob IN (${marks})`).all(...batch, ...batch, ...batch) as Row[];
        for (const r of rows) known.add(r.blob as string);
      }
      return known;
    },

    async claimFixity({ holder, now, dueBefore, until, limit }) {
      return tx(() => {
        const rows = q(`${STORED} AND e.verified_at < ? AND (e.fixity_until IS NULL OR e.fixity_until <= ? OR e.fixity_holder = ?)
          ORDER BY e.verified_at, e.id LIMIT ?`).all(dueBefore.getTime(), now.getTime(), holder, limit) as Row[];
        for (const r of rows) q('UPDATE entities SET fixity_holder = ?, fixity_until = ? WHERE uid = ?').run(holder, until.getTime(), r.uid as string);
        return rows.map(toStoredObject);
      });
    },

    async recordFixity({ blob, now, damage }) {
      const found = q('SELECT path FROM entities WHERE blob = ? AND kind = \'dataobject\'').get(blob) as Row | undefined;
      if (!found) return null;
      // NOTE: only this object's row changes: remembered reads of other paths stay.
      return tx(() => {
        const changed = q(`UPDATE entities SET verified_at = ?, fixity_holder = NULL, fixity_until = NULL,
            damaged_at = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(damaged_at, ?) END, damage = ?
          WHERE blob = ? AND kind = 'dataobject'`).run(now.getTime(), damage, now.getTime(), damage, blob);
        if (Number(changed.changes) === 0) return null;
        const row = q(`SELECT ${STORED_OBJECT_COLUMNS} FROM entities e WHERE e.blob = ?`).get(blob) as Row;
        return toStoredObject(row);
      }, { path: found.path as Path, tables: ENTITIES });
    },

    async countDamaged() {
      const row = q(`SELECT COUNT(*) AS n FROM entities e WHERE e.damaged_at IS NOT NULL AND e.kind = 'dataobject' AND e.blob IS NOT NULL AND ${STORED_OBJECT_KEPT('')}`).get() as Row;
      return Number(row.n);
    },
  };
}
