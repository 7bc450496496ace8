/**
 * The quota role of the SQLite catalog, and the helpers the namespace role calls inside its
 * transactions to charge a change to the quotas it touches. SQLite runs one write transaction
 * at a time (`BEGIN IMMEDIATE`), so a check and the change it guards can never interleave with
 * another writer's, in this process or another.
 */
import { LadingError } from '../../../core/errors.ts';
import { type Path, lineage, trashedPathOf } from '../../../core/path.ts';
import type { QuotaStore } from '../../../core/ports.ts';
import { type Usage, type UsageChange, quotaDeltas, quotaInTheWay, quotaPathsOf } from '../../../core/quotas.ts';
import { toQuota } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';

/** A `UsageChange` whose amount is read only when a quota is touched. */
export type LazyUsageChange = Omit<UsageChange, 'amount'> & { amount: () => Usage };

const subtree = (path: string): { prefix: string; len: number } => {
  const prefix = path === '/' ? '/' : `${path}/`;
  return { prefix, len: [...prefix].length };
};

/** The bytes and data objects at `path` and below it (a live path or a trashed one, `trash:<id>`). */
export function subtreeUsage(db: SqliteConnection, path: string): Usage {
  const { prefix, len } = subtree(path);
  const row = db.q(`SELECT count(*) AS objects, coalesce(sum(size), 0) AS bytes FROM entities
    WHERE kind = 'dataobject' AND (path = ? OR substr(path, 1, ?) = ?)`).get(path, len, prefix) as Row;
  return { bytes: Number(row.bytes), objects: Number(row.objects) };
}

/**
 * Charges `changes` to the quotas they touch, inside the caller's transaction: throws
 * `QUOTA_EXCEEDED` (so the caller's transaction rolls back) when one would pass a bound.
 * Reads no amount when no quota is touched: without quotas a change costs one lookup.
 */
export function chargeQuotas(db: SqliteConnection, changes: readonly LazyUsageChange[]): void {
  const paths = quotaPathsOf(changes);
  const rows = db.q(`SELECT * FROM quotas WHERE path IN (SELECT value FROM json_each(?)) ORDER BY path`).all(JSON.stringify(paths)) as Row[];
  if (rows.length === 0) return;
  const deltas = quotaDeltas(rows.map(toQuota), changes.map((c) => ({ ...c, amount: c.amount() })));
  for (const [path, d] of deltas) {
    db.q('UPDATE quotas SET bytes_used = bytes_used + ?, objects_used = objects_used + ? WHERE path = ?').run(d.bytes, d.objects, path);
  }
}

/** Moves the quotas set at `from` and below it to `to` (a rename of the collection they bound). */
export function moveQuotaRows(db: SqliteConnection, from: string, to: string): void {
  const len = [...from].length;
  const count = (p: string) => Number((db.q(`SELECT count(*) AS n FROM quotas WHERE path = ? OR substr(path, 1, ? + 1) = ? || '/'`).get(p, [...p].length, p) as Row).n);
  // NOTE: a quota can outlive its collection (what was trashed from there still counts), so
  // one may wait where the quotas moved would go.
  if (count(from) > 0 && count(to) > 0) throw quotaInTheWay(to);
  db.q(`UPDATE quotas SET path = ? || substr(path, ? + 1) WHERE path = ? OR substr(path, 1, ? + 1) = ? || '/'`).run(to, len, from, len, from);
}

/** The quota role over `db`. */
export function createSqliteQuotas(db: SqliteConnection): QuotaStore {
  const { q, tx } = db;
  const quotaAt = (path: string) => {
    const row = q('SELECT * FROM quotas WHERE path = ?').get(path) as Row | undefined;
    return row ? toQuota(row) : null;
  };
  return {
    async setQuota({ path, user, maxBytes, maxObjects }) {
      return tx(() => {
        const entity = q('SELECT kind FROM entities WHERE path = ?').get(path) as Row | undefined;
        if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
        if (entity.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object; a quota bounds a collection.`);
        const live = subtreeUsage(db, path);
        // NOTE: what was trashed from below `path` counts until it is purged.
        const { prefix, len } = subtree(path);
        const trashed = q(`SELECT t.entity_uid FROM trash_entries t WHERE t.state = 'trashed' AND (t.path = ? OR substr(t.path, 1, ?) = ?)`)
          .all(path, len, prefix) as Row[];
        const used = { ...live };
        for (const t of trashed) {
          const u = subtreeUsage(db, trashedPathOf(t.entity_uid as string));
          used.bytes += u.bytes;
          used.objects += u.objects;
        }
        q(`INSERT INTO quotas (path, user_name, max_bytes, max_objects, bytes_used, objects_used) VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (path) DO UPDATE SET user_name = excluded.user_name, max_bytes = excluded.max_bytes, max_objects = excluded.max_objects,
            bytes_used = excluded.bytes_used, objects_used = excluded.objects_used`)
          .run(path, user, maxBytes, maxObjects, used.bytes, used.objects);
        return quotaAt(path)!;
      });
    },

    async getQuota(path) {
      return quotaAt(path);
    },

    async listQuotas() {
      return (q('SELECT * FROM quotas ORDER BY path').all() as Row[]).map(toQuota);
    },

    async quotasCovering(path: Path) {
      const rows = q('SELECT * FROM quotas WHERE path IN (SELECT value FROM json_each(?))').all(JSON.stringify(lineage(path))) as Row[];
      return rows.map(toQuota).sort((a, b) => a.path.length - b.path.length);
    },

    async clearQuota(path) {
      return tx(() => q('DELETE FROM quotas WHERE path = ?').run(path).changes > 0);
    },
  };
}
