/**
 * The search role of the PostgreSQL catalog: entities by name, metadata and place, and an
 * owner's recent data objects. Names are matched with ILIKE, which the GIN index of trigrams
 * `entities_by_name_trgm` answers (migration 21; the planner reads the subtree in path order
 * instead when a run is common); AVUs through `avus_by_attribute`; recent objects through
 * `entities_by_owner_time`.
 */
import type { SearchStore } from '../../../core/search.ts';
import type { DataObject } from '../../../core/types.ts';
import { toEntity } from '../rows.ts';
import { searchConditions } from '../search-sql.ts';
import { type PostgresConnection, all } from './connection.ts';
import { entitySelect } from './namespace.ts';

/** The search role over `db`; it only reads. */
export function createPostgresSearch(db: PostgresConnection): SearchStore {
  const { pool, S } = db;
  const ENTITY = entitySelect(S);
  return {
    async searchEntities(query) {
      const params: (string | number)[] = [];
      const param = (value: string | number) => {
        params.push(value);
        return `$${params.length}::${typeof value === 'number' ? 'bigint' : 'text'}`;
      };
      // NOTE: the columns' collation is "C", under which ILIKE ignores the case of ASCII
      // letters only: as SQLite's LIKE does.
      const where = searchConditions(query, { avus: `${S}avus`, param, nameMatches: (like) => `e.name ILIKE ${param(like)} ESCAPE '\\'` });
      const rows = await all(pool, `${ENTITY} WHERE ${where} ORDER BY e.path LIMIT ${param(query.limit)}`, params);
      return rows.map(toEntity);
    },

    async recentObjects({ owner, before, limit }) {
      const page = before ? 'AND (e.modified_at < $3 OR (e.modified_at = $3 AND e.uid < $4))' : '';
      const rows = await all(pool, `${ENTITY}
        WHERE e.owner = $1 AND e.kind = 'dataobject' AND left(e.path, 1) = '/' ${page}
        ORDER BY e.modified_at DESC, e.uid DESC LIMIT $2`, [owner, limit, ...(before ? [before.at.getTime(), before.id] : [])]);
      return rows.map((row) => toEntity(row) as DataObject);
    },
  };
}
