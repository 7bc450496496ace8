/**
 * The search role of the SQLite catalog: entities by name, metadata and place, and an owner's
 * recent data objects. Names are found through `entity_names`, an FTS5 index of trigrams over
 * `entities.name` kept by triggers (migration 21), then matched exactly with LIKE; AVUs through
 * `avus_by_attribute`; recent objects through `entities_by_owner_time`.
 */
import type { SearchStore } from '../../../core/search.ts';
import type { DataObject } from '../../../core/types.ts';
import { toEntity } from '../rows.ts';
import { searchConditions } from '../search-sql.ts';
import type { Row, SqliteConnection } from './connection.ts';
import { ENTITY_COLUMNS } from './namespace.ts';

/** An FTS5 string: the text in double quotes, each of its own doubled. */
const ftsString = (text: string) => `"${text.replace(/"/g, '""')}"`;

/** How many names holding a run make it rare enough to search through the index. */
const FEW_NAMES = 10_000;
const COUNT_NAMES = 'SELECT count(*) AS n FROM (SELECT rowid FROM entity_names WHERE entity_names MATCH ? LIMIT ?)';

/** The search role over `db`; it only reads. */
export function createSqliteSearch(db: SqliteConnection): SearchStore {
  const { q } = db;
  return {
    async searchEntities(query) {
      const params: (string | number)[] = [];
      const where = searchConditions(query, {
        avus: 'avus',
        param: (value) => {
          params.push(value);
          return '?';
        },
        // NOTE: the trigram index answers only runs of three characters or more, and is a
        // filter before the exact (ASCII case-insensitive) LIKE, which decides. A run found in
        // more than `FEW_NAMES` names is common: reading the subtree in path order finds a
        // page of matches sooner than sorting every name the index gives.
        nameMatches: (like, literal) => {
          const exact = `e.name LIKE ? ESCAPE '\\'`;
          const fts = ftsString(literal);
          if ([...literal].length < 3 || Number(q(COUNT_NAMES).get(fts, FEW_NAMES + 1)!.n) > FEW_NAMES) {
            params.push(like);
            return exact;
          }
          params.push(fts, like);
          return `e.id IN (SELECT rowid FROM entity_names WHERE entity_names MATCH ?) AND ${exact}`;
        },
      });
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE ${where} ORDER BY e.path LIMIT ?`).all(...params, query.limit) as Row[];
      return rows.map(toEntity);
    },

    async recentObjects({ owner, before, limit }) {
      const page = before ? 'AND (e.modified_at < ? OR (e.modified_at = ? AND e.uid < ?))' : '';
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e
        WHERE e.owner = ? AND e.kind = 'dataobject' AND substr(e.path, 1, 1) = '/' ${page}
        ORDER BY e.modified_at DESC, e.uid DESC LIMIT ?`)
        .all(owner, ...(before ? [before.at.getTime(), before.at.getTime(), before.id] : []), limit) as Row[];
      return rows.map((row) => toEntity(row) as DataObject);
    },
  };
}
