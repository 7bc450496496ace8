/**
 * The quota role of the PostgreSQL catalog, and the helpers the namespace role calls inside
 * its transactions to charge a change to the quotas it touches. Racing writers on any number
 * of nodes are settled by row locks: each charge locks the quota rows it reads (`FOR UPDATE`,
 * in path order, so two charges never wait on each other crosswise) and re-reads them as
 * committed, so the second of two writers sees the first one's usage. Setting a quota counts
 * under a table lock that every charge's `FOR UPDATE` conflicts with, so a change is either
 * seen by the count or charged to the new row, never both or neither.
 */
import { LadingError } from '../../../core/errors.ts';
import { type Path, lineage } from '../../../core/path.ts';
import type { QuotaStore } from '../../../core/ports.ts';
import { type Usage, type UsageChange, quotaDeltas, quotaInTheWay, quotaPathsOf } from '../../../core/quotas.ts';
import { toQuota } from '../rows.ts';
import { type PgClientLike, type PgQueryable, type PostgresConnection, type Row, all, one } from './connection.ts';

/** A `UsageChange` whose amount is read only when a quota is touched. */
export type LazyUsageChange = Omit<UsageChange, 'amount'> & { amount: () => Promise<Usage> };

/** The rows at `$n` and below it, by the byte-order range (`path` is COLLATE "C"). */
const within = (column: string, p: string) => `(${column} = ${p}::text OR (${column} >= ${p}::text || '/' AND ${column} < ${p}::text || '0'))`;

/** The bytes and data objects at `path` and below it (a live path or a trashed one, `trash:<id>`). */
export async function subtreeUsage(db: PostgresConnection, c: PgQueryable, path: string): Promise<Usage> {
  const cond = path === '/' ? `path >= '/' AND path < '0'` : within('path', '$1');
  const row = await one(c, `SELECT count(*) AS objects, coalesce(sum(size), 0) AS bytes FROM ${db.S}entities WHERE kind = 'dataobject' AND ${cond}`,
    path === '/' ? [] : [path]);
  return { bytes: Number(row!.bytes), objects: Number(row!.objects) };
}

/**
 * Charges `changes` to the quotas they touch, inside the transaction of `c`: throws
 * `QUOTA_EXCEEDED` (so the transaction rolls back) when one would pass a bound. Reads no
 * amount when no quota is touched: without quotas a change costs one indexed lookup, or none
 * when the caller has already locked and read the quota rows at `quotaPathsOf(changes)`
 * (`locked`, as this reads them: `FOR UPDATE`, in path order).
 */
export async function chargeQuotas(db: PostgresConnection, c: PgClientLike, changes: readonly LazyUsageChange[], locked?: readonly Row[]): Promise<void> {
  const { S } = db;
  const rows = locked ?? await all(c, `SELECT * FROM ${S}quotas WHERE path = ANY($1::text[]) ORDER BY path FOR UPDATE`, [quotaPathsOf(changes)]);
  if (rows.length === 0) return;
  const resolved: UsageChange[] = [];
  for (const ch of changes) resolved.push({ ...ch, amount: await ch.amount() });
  const deltas = quotaDeltas(rows.map(toQuota), resolved);
  for (const [path, d] of deltas) {
    await c.query(`UPDATE ${S}quotas SET bytes_used = bytes_used + $1, objects_used = objects_used + $2 WHERE path = $3`, [d.bytes, d.objects, path]);
  }
}

/** Moves the quotas set at `from` and below it to `to` (a rename of the collection they bound). */
export async function moveQuotaRows(db: PostgresConnection, c: PgClientLike, from: string, to: string): Promise<void> {
  const count = async (p: string) => Number((await one(c, `SELECT count(*) AS n FROM ${db.S}quotas WHERE ${within('path', '$1')}`, [p]))!.n);
  // NOTE: a quota can outlive its collection (what was trashed from there still counts), so
  // one may wait where the quotas moved would go.
  if ((await count(from)) > 0 && (await count(to)) > 0) throw quotaInTheWay(to);
  await c.query(`UPDATE ${db.S}quotas SET path = $1::text || substr(path, $2::int + 1) WHERE ${within('path', '$3')}`, [to, [...from].length, from]);
}

/** The quota role over `db`. */
export function createPostgresQuotas(db: PostgresConnection): QuotaStore {
  const { pool, S, tx } = db;
  const quotaAt = async (c: PgQueryable, path: string) => {
    const row = await one(c, `SELECT * FROM ${S}quotas WHERE path = $1`, [path]);
    return row ? toQuota(row) : null;
  };
  return {
    async setQuota({ path, user, maxBytes, maxObjects }) {
      return tx(async (c) => {
        // NOTE: EXCLUSIVE conflicts with the row locks every charge takes (ROW SHARE): the
        // count below starts once the changes under way have committed, and those that
        // follow wait for this row and are charged to it.
        await c.query(`LOCK TABLE ${S}quotas IN EXCLUSIVE MODE`);
        const entity = await one(c, `SELECT kind FROM ${S}entities WHERE path = $1`, [path]);
        if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
        if (entity.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object; a quota bounds a collection.`);
        // NOTE: one statement, one snapshot: what was trashed from below `path` counts until it
        // is purged, and a trashing committed meanwhile is seen on one side only.
        const live = path === '/' ? `e.path >= '/' AND e.path < '0'` : within('e.path', '$1');
        const gone = path === '/' ? `t.path >= '/' AND t.path < '0'` : within('t.path', '$1');
        const row = await one(c, `SELECT count(*) AS objects, coalesce(sum(e.size), 0) AS bytes FROM ${S}entities e
          WHERE e.kind = 'dataobject' AND (${live} OR EXISTS (
            SELECT 1 FROM ${S}trash_entries t WHERE t.state = 'trashed' AND ${gone}
              AND (e.path = 'trash:' || t.entity_uid OR (e.path >= 'trash:' || t.entity_uid || '/' AND e.path < 'trash:' || t.entity_uid || '0'))))`,
        path === '/' ? [] : [path]);
        await c.query(`INSERT INTO ${S}quotas (path, user_name, max_bytes, max_objects, bytes_used, objects_used) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (path) DO UPDATE SET user_name = excluded.user_name, max_bytes = excluded.max_bytes, max_objects = excluded.max_objects,
            bytes_used = excluded.bytes_used, objects_used = excluded.objects_used`,
        [path, user, maxBytes, maxObjects, Number(row!.bytes), Number(row!.objects)]);
        return (await quotaAt(c, path))!;
      });
    },

    async getQuota(path) {
      return quotaAt(pool, path);
    },

    async listQuotas() {
      return (await all(pool, `SELECT * FROM ${S}quotas ORDER BY path`)).map(toQuota);
    },

    async quotasCovering(path: Path) {
      const rows = await all(pool, `SELECT * FROM ${S}quotas WHERE path = ANY($1::text[])`, [lineage(path)]);
      return rows.map(toQuota).sort((a, b) => a.path.length - b.path.length);
    },

    async clearQuota(path) {
      return tx(async (c) => ((await c.query(`DELETE FROM ${S}quotas WHERE path = $1`, [path])).rowCount ?? 0) > 0);
    },
  };
}
