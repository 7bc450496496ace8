/**
 * The conditions of a search of entities (`SearchStore.searchEntities`) as SQL, shared by the
 * catalog drivers: each gives its placeholders and its way of matching a name (an index of
 * trigrams where it has one). Paths compare in byte order in both catalogs, so a subtree is
 * the range `[path/, path0)`. It holds no driver's connection.
 */
import { type EntitySearch, belowRange, likePattern, literalRun } from '../../core/search.ts';

/** What a driver puts into the shared conditions. */
export interface SearchDialect {
  /** Adds `value` to the statement's parameters; answers its placeholder. */
  param(value: string | number): string;
  /**
   * The condition that `e.name` matches `like` (a `LIKE … ESCAPE '\'` pattern) ignoring the
   * case of ASCII letters; `literal` is a run every match holds (for an index), maybe ''.
   */
  nameMatches(like: string, literal: string): string;
  /** The AVU table's name as the statement names it (with its schema where it has one). */
  avus: string;
}

/** The WHERE conditions (joined by AND) of `query` over `entities e`, without its order or limit. */
export function searchConditions(query: EntitySearch, d: SearchDialect): string {
  const { from, to } = belowRange(query.under);
  const where = [`e.path >= ${d.param(from)}`, `e.path < ${d.param(to)}`, `e.path <> ${d.param(query.under)}`];
  if (query.within !== null) {
    const scopes = query.within.map((scope) => {
      const below = belowRange(scope);
      return `e.path = ${d.param(scope)} OR (e.path >= ${d.param(below.from)} AND e.path < ${d.param(below.to)})`;
    });
    where.push(scopes.length === 0 ? '1 = 0' : `(${scopes.join(' OR ')})`);
  }
  if (query.after !== null) where.push(`e.path > ${d.param(query.after)}`);
  if (query.kind !== null) where.push(`e.kind = ${d.param(query.kind)}`);
  if (query.name !== null) where.push(d.nameMatches(likePattern(query.name), literalRun(query.name)));
  if (query.attribute !== null) {
    // NOTE: placeholders are taken in the order they appear (SQLite's are positional).
    const attribute = `v.attribute = ${d.param(query.attribute)}`;
    const value = query.value === null ? '' : ` AND v.value = ${d.param(query.value)}`;
    where.push(`e.id IN (SELECT v.entity_id FROM ${d.avus} v WHERE ${attribute}${value})`);
  }
  return where.join(' AND ');
}
