/**
 * The namespace role of the SQLite catalog: entities, listings, renames, access lists and AVU
 * metadata. The jobs a change causes and the blobs a commit stops or starts tracking are
 * written through the job and blob modules' helpers, inside the change's transaction.
 */
import { randomUUID } from 'node:crypto';
import { LadingError } from '../../../core/errors.ts';
import { type Path, TRASH_PREFIX, baseName, lineage, parentOf, trashedPathOf } from '../../../core/path.ts';
import type { NamespaceStore } from '../../../core/ports.ts';
import {
  ACCESS_RANK, type AccessEntry, type Avu, type BackendEvent, type Collection, type DataObject, type Entity, type JobsFor,
} from '../../../core/types.ts';
import { abandonedBlob, levelOf, toEntity, toTrashEntry, trashEntryColumns, trashRootOf, uploadNotHeld, marksFrom } from '../rows.ts';
import { trackBlobRow, untrackBlobRow } from './blobs.ts';
import type { ChangeAt, Row, SqliteConnection } from './connection.ts';
import { type KeptBytes, storeKeptBytes } from './inline.ts';
import { insertJobs } from './jobs.ts';
import { chargeQuotas, moveQuotaRows, subtreeUsage } from './quotas.ts';
import { completeUploadRow, uploadHeldRow } from './uploads.ts';

/**
 * Where a transaction that creates or replaces the one entity at `path` changes rows: its row
 * and its access list (and, through their foreign keys, nothing: no key changes).
 */
const ENTITY_TABLES: ReadonlySet<string> = new Set(['entities', 'acls']);
const changeAt = (path: Path): ChangeAt => ({ path, tables: ENTITY_TABLES });

/** The columns `toEntity` reads, of `entities e` (the search role selects them too). */
export const ENTITY_COLUMNS = `e.id, e.uid, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.etag, e.blob, e.created_at, e.modified_at, e.damaged_at, e.damage,
  (SELECT value FROM avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid`;

/**
 * The namespace role over `db`; each mutating method runs in one transaction of its own. A
 * commit of an object whose blob has bytes in `kept` stores them in its transaction.
 */
export function createSqliteNamespace(db: SqliteConnection, kept: KeptBytes = new Map()): Omit<NamespaceStore, 'lookup'> {
  const { q, tx } = db;
  const entityAt = (path: string): Entity | null => {
    const row = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.path = ?`).get(path) as Row | undefined;
    return row ? toEntity(row) : null;
  };
  const idOf = (path: string): number => {
    const row = q('SELECT id FROM entities WHERE path = ?').get(path) as Row | undefined;
    if (!row) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return Number(row.id);
  };
  const parentMustBeCollection = (path: Path): void => {
    const parent = entityAt(parentOf(path));
    if (!parent) throw new LadingError('NOT_FOUND', `The collection '${parentOf(path)}' does not exist.`);
    if (parent.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent.path}' is a data object, not a collection.`);
  };

  const TRASH_ENTRY = `SELECT ${trashEntryColumns('')} FROM trash_entries t JOIN entities e ON e.uid = t.entity_uid`;
  const entryOf = (id: string) => {
    const row = q(`${TRASH_ENTRY} WHERE t.entity_uid = ?`).get(id) as Row | undefined;
    return row ? toTrashEntry(row) : null;
  };
  /**
   * Moves the rows at `from` and below it to `to`; the top row takes `parent` and `name`.
   * NOTE: SQLite's substr counts characters, as `[...s].length` does.
   */
  const moveSubtree = (from: string, to: string, parent: string, name: string): void => {
    const len = [...from].length;
    q(`UPDATE entities SET
          path = ? || substr(path, ? + 1),
          parent = CASE WHEN path = ? THEN ? ELSE ? || substr(parent, ? + 1) END,
          name = CASE WHEN path = ? THEN ? ELSE name END
        WHERE path = ? OR substr(path, 1, ? + 1) = ? || '/'`)
      .run(to, len, from, parent, to, len, from, name, from, len, from);
  };

  /** `move` inside the caller's transaction. */
  const moveRows = ({ from, to, now, jobs, overwrite }: { from: Path; to: Path; now: Date; overwrite: boolean; jobs?: JobsFor | undefined }) => {
    const moving = entityAt(from);
    if (!moving) throw new LadingError('NOT_FOUND', `'${from}' does not exist.`);
    if (to.startsWith(from + '/')) throw new LadingError('CONFLICT', `'${from}' cannot be moved inside itself.`);
    const existing = entityAt(to);
    let replacedBlob: string | null = null;
    if (existing) {
      if (!overwrite || existing.kind === 'collection' || moving.kind === 'collection' || existing.id === moving.id) {
        throw new LadingError('CONFLICT', `'${to}' already exists.`);
      }
    }
    parentMustBeCollection(to);
    // NOTE: charged before anything moves, while the subtree is still at `from`.
    chargeQuotas(db, [
      { removed: from, added: to, moves: true, amount: () => (moving.kind === 'dataobject' ? { bytes: moving.size, objects: 1 } : subtreeUsage(db, from)) },
      ...(existing?.kind === 'dataobject' ? [{ removed: to, added: null, amount: () => ({ bytes: existing.size, objects: 1 }) }] : []),
    ]);
    if (existing) {
      // NOTE: acls and avus go with the row (ON DELETE CASCADE).
      q('DELETE FROM entities WHERE path = ?').run(to);
      trackBlobRow(db, existing.blob, now);
      replacedBlob = existing.blob;
    }
    moveQuotaRows(db, from, to);
    const len = from.length;
    q(`UPDATE entities SET
          path = ? || substr(path, ? + 1),
          parent = CASE WHEN path = ? THEN ? ELSE ? || substr(parent, ? + 1) END,
          name = CASE WHEN path = ? THEN ? ELSE name END,
          modified_at = CASE WHEN path = ? THEN ? ELSE modified_at END
        WHERE path = ? OR substr(path, 1, ? + 1) = ? || '/'`)
      .run(to, len, from, parentOf(to), to, len, from, baseName(to), from, now.getTime(), from, len, from);
    const type = moving.kind === 'collection' ? 'collection.renamed' : 'object.renamed';
    insertJobs(db, jobs?.({ type, entityId: moving.id, path: to, from }) ?? [], now);
    return { entity: entityAt(to)!, replacedBlob };
  };

  return {
    async getEntity(path) {
      return db.memo(`entity\0${path}`, () => entityAt(path), path);
    },

    async marksOf(ids, { anonymous, now }) {
      // NOTE: the ids go as one JSON array, so the statement's text is one whatever their number.
      const rows = q(`SELECT e.uid AS uid,
          EXISTS (SELECT 1 FROM acls a WHERE a.entity_id = e.id AND a.principal = ?) AS published,
          EXISTS (SELECT 1 FROM acls a WHERE a.entity_id = e.id AND a.principal NOT IN (e.owner, ?)) AS shared,
          EXISTS (SELECT 1 FROM shares s WHERE s.entity_uid = e.uid AND (s.expires_at IS NULL OR s.expires_at > ?)
            AND (s.max_uses IS NULL OR s.uses < s.max_uses)) AS links
        FROM entities e WHERE e.uid IN (SELECT value FROM json_each(?))`).all(anonymous, anonymous, now.getTime(), JSON.stringify(ids)) as Row[];
      return marksFrom(rows);
    },

    async listChildren(path) {
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.parent = ? ORDER BY e.name`).all(path) as Row[];
      return rows.map(toEntity);
    },

    async listChildrenAfter(path, after, limit) {
      // NOTE: SQLite compares TEXT with its BINARY collation, which for UTF-8 is byte order.
      const rows = (after === null
        ? q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.parent = ? ORDER BY e.name LIMIT ?`).all(path, limit)
        : q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.parent = ? AND e.name > ? ORDER BY e.name LIMIT ?`).all(path, after, limit)) as Row[];
      return rows.map(toEntity);
    },

    async createCollection({ path, owner, now, jobs }) {
      return tx(() => {
        if (entityAt(path)) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        parentMustBeCollection(path);
        const uid = randomUUID();
        const res = q(`INSERT INTO entities (uid, path, parent, name, kind, owner, created_at, modified_at)
          VALUES (?, ?, ?, ?, 'collection', ?, ?, ?)`).run(uid, path, parentOf(path), baseName(path), owner, now.getTime(), now.getTime());
        q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
        insertJobs(db, jobs?.({ type: 'collection.created', entityId: uid, path }) ?? [], now);
        return entityAt(path) as Collection;
      }, changeAt(path));
    },

    async commitObject({ path, owner, size, checksum, blob, now, overwrite, jobs, fenced, upload, meta, replaceMeta, etag = null }) {
      let stored = false;
      const out = tx(() => {
        if (upload && !uploadHeldRow(db, upload.id, upload.holder)) throw uploadNotHeld(upload.id);
        const existing = entityAt(path);
        let replacedBlob: string | null = null;
        let event: BackendEvent;
        if (existing) {
          if (existing.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
          if (!overwrite) throw new LadingError('CONFLICT', `'${path}' already exists.`);
          replacedBlob = existing.blob;
          chargeQuotas(db, [{ removed: null, added: path, amount: () => ({ bytes: size - existing.size, objects: 0 }) }]);
          // NOTE: the new bytes were hashed as they were stored: a check at the commit, which
          // clears a mark of damage the replaced ones had.
          q(`UPDATE entities SET size = ?, checksum = ?, etag = ?, blob = ?, modified_at = ?,
              verified_at = ?, damaged_at = NULL, damage = NULL, fixity_holder = NULL, fixity_until = NULL WHERE path = ?`)
            .run(size, checksum, etag, blob, now.getTime(), now.getTime(), path);
          trackBlobRow(db, replacedBlob, now);
          for (const attribute of replaceMeta ?? []) q('DELETE FROM avus WHERE entity_id = ? AND attribute = ?').run(idOf(path), attribute);
          event = { type: 'object.overwritten', entityId: existing.id, path };
        } else {
          parentMustBeCollection(path);
          chargeQuotas(db, [{ removed: null, added: path, amount: () => ({ bytes: size, objects: 1 }) }]);
          const uid = randomUUID();
          const res = q(`INSERT INTO entities (uid, path, parent, name, kind, owner, size, checksum, etag, blob, created_at, modified_at, verified_at)
            VALUES (?, ?, ?, ?, 'dataobject', ?, ?, ?, ?, ?, ?, ?, ?)`)
            .run(uid, path, parentOf(path), baseName(path), owner, size, checksum, etag, blob, now.getTime(), now.getTime(), now.getTime());
          q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(res.lastInsertRowid, owner, ACCESS_RANK.own);
          event = { type: 'object.created', entityId: uid, path };
        }
        // NOTE: bytes kept for this commit were never tracked (their upload stored nothing
        // before it) and so cannot have been taken for abandoned: they are stored now.
        stored = storeKeptBytes(db, kept, blob);
        if (!untrackBlobRow(db, blob) && !stored && fenced && !upload) throw abandonedBlob(path);
        if (meta && meta.length > 0) {
          const id = idOf(path);
          for (const avu of meta) q('INSERT OR IGNORE INTO avus (entity_id, attribute, value, unit) VALUES (?, ?, ?, ?)').run(id, avu.attribute, avu.value, avu.unit);
        }
        const jobIds = insertJobs(db, jobs?.(event) ?? [], now);
        const object = entityAt(path) as DataObject;
        if (upload && !completeUploadRow(db, { ...upload, entityId: object.id, jobIds, now })) throw uploadNotHeld(upload.id);
        return { object, replacedBlob, jobIds };
      }, changeAt(path));
      if (stored) kept.delete(blob);
      return out;
    },

    async rename(from, to, now, jobs) {
      return tx(() => moveRows({ from, to, now, jobs, overwrite: false }).entity);
    },

    async move(input) {
      return tx(() => moveRows(input));
    },

    async getEntityById(id) {
      const row = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.uid = ?`).get(id) as Row | undefined;
      return row && !(row.path as string).startsWith(TRASH_PREFIX) ? toEntity(row) : null;
    },

    async trash({ path, actor, reason, now, jobs }) {
      return tx(() => {
        const entity = entityAt(path);
        if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
        moveSubtree(path, trashedPathOf(entity.id), TRASH_PREFIX, entity.name);
        q(`INSERT INTO trash_entries (entity_uid, path, state, trashed_at, trashed_by, reason) VALUES (?, ?, 'trashed', ?, ?, ?)`)
          .run(entity.id, path, now.getTime(), actor, reason);
        insertJobs(db, jobs?.({ type: 'entity.trashed', entityId: entity.id, path }) ?? [], now);
        return entryOf(entity.id)!;
      });
    },

    async restore({ id, to, now, jobs }) {
      return tx(() => {
        const entry = entryOf(id);
        if (!entry) throw new LadingError('NOT_FOUND', `Nothing with the id '${id}' is in the trash.`);
        if (entry.state !== 'trashed') throw new LadingError('CONFLICT', `'${entry.path}' was ${entry.state === 'purged' ? 'purged' : 'taken down'}; its bytes are gone and it cannot be restored.`);
        if (entityAt(to)) throw new LadingError('CONFLICT', `'${to}' already exists.`);
        parentMustBeCollection(to);
        // NOTE: trashed, it counted where it was trashed from; restored, it counts at `to`.
        chargeQuotas(db, [{ removed: entry.path, added: to, amount: () => subtreeUsage(db, trashedPathOf(id)) }]);
        moveSubtree(trashedPathOf(id), to, parentOf(to), baseName(to));
        q('DELETE FROM trash_entries WHERE entity_uid = ?').run(id);
        insertJobs(db, jobs?.({ type: 'entity.restored', entityId: id, path: to }) ?? [], now);
        return entityAt(to)!;
      });
    },

    async getTrashEntry(id) {
      return entryOf(id);
    },

    async withdrawnEntity(id) {
      const row = q(`SELECT ${ENTITY_COLUMNS} FROM entities e WHERE e.uid = ?`).get(id) as Row | undefined;
      if (!row || !(row.path as string).startsWith(TRASH_PREFIX)) return null;
      const entry = entryOf(trashRootOf(row.path as string));
      return entry ? { entity: toEntity(row), entry } : null;
    },

    async listTrash({ user, limit, before }) {
      const page = before ? 'AND (t.trashed_at < ? OR (t.trashed_at = ? AND t.entity_uid < ?))' : '';
      const rows = q(`${TRASH_ENTRY} WHERE t.state = 'trashed' AND (t.trashed_by = ? OR e.owner = ?) ${page}
        ORDER BY t.trashed_at DESC, t.entity_uid DESC LIMIT ?`)
        .all(user, user, ...(before ? [before.at.getTime(), before.at.getTime(), before.id] : []), limit) as Row[];
      return rows.map(toTrashEntry);
    },

    async removeTrashed({ ids, trashedBefore, limit, state, by, reason, now, jobs }) {
      return tx(() => {
        const rows = (ids
          ? ids.slice(0, limit).map((id) => q(`${TRASH_ENTRY} WHERE t.entity_uid = ? AND t.state = 'trashed'`).get(id) as Row | undefined).filter((r) => r !== undefined)
          : q(`${TRASH_ENTRY} WHERE t.state = 'trashed' AND t.trashed_at < ? ORDER BY t.trashed_at LIMIT ?`).all((trashedBefore ?? now).getTime(), limit) as Row[]);
        const blobs: string[] = [];
        chargeQuotas(db, rows.map((row) => ({
          removed: row.trashed_path as Path, added: null, amount: () => subtreeUsage(db, trashedPathOf(row.entity_uid as string)),
        })));
        for (const row of rows) {
          const top = trashedPathOf(row.entity_uid as string);
          const held = q(`SELECT blob FROM entities WHERE kind = 'dataobject' AND blob IS NOT NULL AND (path = ? OR substr(path, 1, ? + 1) = ? || '/')`)
            .all(top, [...top].length, top) as Row[];
          for (const h of held) {
            trackBlobRow(db, h.blob as string, now);
            blobs.push(h.blob as string);
          }
          q('UPDATE trash_entries SET state = ?, removed_at = ?, removed_by = ?, removal_reason = ? WHERE entity_uid = ?')
            .run(state, now.getTime(), by, reason, row.entity_uid as string);
          const type = state === 'purged' ? 'entity.purged' : 'entity.taken_down';
          insertJobs(db, jobs?.({ type, entityId: row.entity_uid as string, path: row.trashed_path as Path }) ?? [], now);
        }
        return { entries: rows.map((r) => entryOf(r.entity_uid as string)!), blobs };
      });
    },

    async listDescendants(path, limit, afterPath) {
      const prefix = path === '/' ? '/' : path + '/';
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e
        WHERE substr(e.path, 1, ?) = ? AND e.path <> ? AND e.path > ? ORDER BY e.path LIMIT ?`)
        .all(prefix.length, prefix, path, afterPath ?? '', limit) as Row[];
      return rows.map(toEntity);
    },

    async setAccess(path, principal, level) {
      tx(() => {
        const id = idOf(path);
        if (level === null) q('DELETE FROM acls WHERE entity_id = ? AND principal = ?').run(id, principal);
        else q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?) ON CONFLICT (entity_id, principal) DO UPDATE SET level = excluded.level').run(id, principal, ACCESS_RANK[level]);
      });
    },

    async listAccess(path) {
      const id = idOf(path);
      const rows = q('SELECT principal, level FROM acls WHERE entity_id = ? ORDER BY principal').all(id) as Row[];
      return rows.map((r): AccessEntry => ({ principal: r.principal as string, level: levelOf(Number(r.level)) }));
    },

    async listEntitiesHeldBy({ principals, except, from, limit }) {
      if (principals.length === 0) return [];
      // NOTE: byte order (BINARY collation): what lies below `except` sorts from `except/` up to,
      // not including, `except0` ('0' follows '/').
      const after = from === null ? '' : `AND e.path ${from.inclusive ? '>=' : '>'} ?`;
      const rows = q(`SELECT ${ENTITY_COLUMNS} FROM entities e
        WHERE e.id IN (SELECT a.entity_id FROM acls a WHERE a.principal IN (${principals.map(() => '?').join(',')}))
          AND substr(e.path, 1, 1) = '/' AND e.path <> ? AND NOT (e.path >= ? AND e.path < ?) ${after}
        ORDER BY e.path LIMIT ?`)
        .all(...principals, except, `${except}/`, `${except}0`, ...(from === null ? [] : [from.path]), limit) as Row[];
      return rows.map(toEntity);
    },

    async accessLevel(path, principals) {
      if (principals.length === 0) return null;
      return db.memo(`access\0${path}\0${principals.join('\0')}`, () => {
        const paths = lineage(path);
        const row = q(`SELECT MAX(a.level) AS level FROM acls a JOIN entities e ON e.id = a.entity_id
          WHERE e.path IN (${paths.map(() => '?').join(',')}) AND a.principal IN (${principals.map(() => '?').join(',')})`)
          .get(...paths, ...principals) as Row;
        return row.level === null ? null : levelOf(Number(row.level));
      }, path);
    },

    async addMeta(path, { attribute, value, unit }) {
      tx(() => {
        q('INSERT OR IGNORE INTO avus (entity_id, attribute, value, unit) VALUES (?, ?, ?, ?)').run(idOf(path), attribute, value, unit);
      });
    },

    async removeMeta(path, attribute, value) {
      tx(() => {
        const id = idOf(path);
        if (value === undefined) q('DELETE FROM avus WHERE entity_id = ? AND attribute = ?').run(id, attribute);
        else q('DELETE FROM avus WHERE entity_id = ? AND attribute = ? AND value = ?').run(id, attribute, value);
      });
    },

    async listMeta(path) {
      const rows = q('SELECT attribute, value, unit FROM avus WHERE entity_id = ? ORDER BY attribute, value, unit').all(idOf(path)) as Row[];
      return rows.map((r): Avu => ({ attribute: r.attribute as string, value: r.value as string, unit: r.unit as string }));
    },
  };
}
