/**
 * The namespace role of the PostgreSQL catalog: entities, listings, renames, access lists and
 * AVU metadata. Each method runs in one transaction (READ COMMITTED); races between nodes are
 * settled by row locks (`SELECT … FOR UPDATE` on what a method changes, `FOR KEY SHARE` on the
 * collections it relies on) and unique constraints, never by state kept in a process. The jobs
 * a change causes and the blobs a commit stops or starts tracking are written through the job
 * and blob modules' helpers, inside the change's transaction.
 */
import { randomUUID } from 'node:crypto';
import { LadingError } from '../../../core/errors.ts';
import { type Path, TRASH_PREFIX, baseName, lineage, parentOf, trashedPathOf } from '../../../core/path.ts';
import type { NamespaceStore } from '../../../core/ports.ts';
import {
  ACCESS_RANK, type AccessEntry, type Avu, type BackendEvent, type Collection, type DataObject, type Entity, type JobsFor,
} from '../../../core/types.ts';
import { abandonedBlob, levelOf, toEntity, toUser, toTrashEntry, trashEntryColumns, trashRootOf, uploadNotHeld, marksFrom } from '../rows.ts';
import { trackBlobRow, untrackBlobRow } from './blobs.ts';
import { type PgClientLike, type PgQueryable, type PostgresConnection, type Row, all, one } from './connection.ts';
import { insertJobs } from './jobs.ts';
import { chargeQuotas, moveQuotaRows, subtreeUsage } from './quotas.ts';
import { completeUploadRow, uploadHeldRow } from './uploads.ts';

/** The rows `toEntity` reads, of `entities e` in the schema `S` (the search role selects them too). */
export const entitySelect = (S: string): string => `SELECT e.id, e.uid, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.etag, e.blob, e.created_at, e.modified_at, e.damaged_at, e.damage,
    (SELECT value FROM ${S}avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid
    FROM ${S}entities e`;

/** The namespace role over `db`; each mutating method runs in one transaction of its own. */
export function createPostgresNamespace(db: PostgresConnection): NamespaceStore {
  const { pool, S, tx } = db;
  const ENTITY = entitySelect(S);
  /**
   * The highest level `principals` (an SQL array) hold on any entity at `paths` (a lineage), or
   * NULL. Written so that PostgreSQL probes the access lists by entity, one index lookup for each
   * path of the lineage: as a join, it read every entry the principals hold anywhere (a scan of
   * the whole table for an owner of thousands of objects) and matched them to the lineage.
   */
  const levelOnLineage = (paths: string, principals: string): string => `(SELECT MAX((SELECT MAX(a.level) FROM ${S}acls a
      WHERE a.entity_id = le.id AND a.principal = ANY(${principals}))) FROM ${S}entities le WHERE le.path = ANY(${paths}))`;
  const LOOKUP = `WITH who AS (
      SELECT u.name, u.kind, u.password_hash, u.created_at, u.disabled FROM ${S}users u
      WHERE u.name = COALESCE($1::text, (SELECT m.user_name FROM ${S}subject_map m WHERE m.dn = $2::text))
    ), grp AS (
      SELECT array_agg(g.group_name ORDER BY g.group_name) AS groups FROM ${S}group_members g WHERE g.user_name = (SELECT name FROM who)
    )
    SELECT who.name AS user_name, who.kind AS user_kind, who.password_hash AS user_password_hash, who.created_at AS user_created_at,
      who.disabled AS user_disabled, grp.groups,
      CASE WHEN who.name IS NULL THEN NULL ELSE ${levelOnLineage('$3::text[]', "array_append(COALESCE(grp.groups, '{}'::text[]), who.name) || $5::text[]")} END AS level,
      e.id, e.uid, e.path, e.name, e.kind, e.owner, e.size, e.checksum, e.etag, e.blob, e.created_at, e.modified_at, e.damaged_at, e.damage,
      (SELECT value FROM ${S}avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid,
      (SELECT pe.kind FROM ${S}entities pe WHERE pe.path = $6::text) AS parent_kind
    FROM grp LEFT JOIN who ON true LEFT JOIN ${S}entities e ON e.path = $4::text`;
  const entityAt = async (c: PgQueryable, path: string): Promise<Entity | null> => {
    const row = await one(c, `${ENTITY} WHERE e.path = $1`, [path]);
    return row ? toEntity(row) : null;
  };
  const idOf = async (c: PgQueryable, path: string): Promise<string> => {
    const row = await one(c, `SELECT id FROM ${S}entities WHERE path = $1`, [path]);
    if (!row) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return String(row.id);
  };
  /**
   * Checks that the parent of `path` is a collection and holds a key-share lock on it and on
   * every collection above it until the transaction ends, so a concurrent rename of any of
   * them (which takes `FOR UPDATE` first) waits for this transaction, or makes it see the
   * parent gone. That is what keeps a rename from leaving a new child behind at the old path.
   */
  const lockParent = async (c: PgClientLike, path: Path): Promise<void> => {
    const parent = parentOf(path);
    const rows = await all(c, `SELECT path, kind FROM ${S}entities WHERE path = ANY($1::text[]) ORDER BY path FOR KEY SHARE`, [lineage(parent)]);
    const row = rows.find((r) => r.path === parent);
    if (!row) throw new LadingError('NOT_FOUND', `The collection '${parent}' does not exist.`);
    if (row.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent}' is a data object, not a collection.`);
  };

  /**
   * Locks what a commit at `path` relies on, in one statement: key-share locks on the parent
   * and every collection above it (as `lockParent`) and an update lock on the row at `path`,
   * which it returns (null when there is none), and, last, update locks on the quotas set at
   * `path` and above it, which it returns as `chargeQuotas` reads them (a commit is charged to
   * exactly those). `NOT_FOUND`, `NOT_A_COLLECTION` as `lockParent`.
   */
  const lockTarget = async (c: PgClientLike, path: Path): Promise<{ row: Row | null; quotas: Row[] }> => {
    const parent = parentOf(path);
    const row = (await one(c, `WITH up AS MATERIALIZED (SELECT path, kind FROM ${S}entities WHERE path = ANY($1::text[]) ORDER BY path FOR KEY SHARE),
        here AS MATERIALIZED (SELECT id, uid, kind, blob, size FROM ${S}entities WHERE path = $2 FOR UPDATE),
        q AS MATERIALIZED (SELECT * FROM ${S}quotas WHERE path = ANY($4::text[]) ORDER BY path FOR UPDATE)
      SELECT (SELECT kind FROM up WHERE path = $3) AS parent_kind, here.id, here.uid, here.kind, here.blob, here.size,
        (SELECT json_agg(q ORDER BY q.path) FROM q) AS quotas
      FROM (SELECT 1) AS one LEFT JOIN here ON true`, [lineage(parent), path, parent, lineage(path)]))!;
    if (row.parent_kind === null) throw new LadingError('NOT_FOUND', `The collection '${parent}' does not exist.`);
    if (row.parent_kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent}' is a data object, not a collection.`);
    return { row: row.id === null ? null : row, quotas: (row.quotas as Row[] | null) ?? [] };
  };
  const WRITTEN = 'id, uid, path, name, kind, owner, size, checksum, etag, blob, created_at, modified_at';
  /** A new data object's row and its owner's entry, and the end of its blob's tracking, in one statement. */
  const INSERT_OBJECT = `WITH ins AS (
      INSERT INTO ${S}entities (uid, path, parent, name, kind, owner, size, checksum, blob, created_at, modified_at, etag, verified_at)
      VALUES ($1, $2, $3, $4, 'dataobject', $5, $6, $7, $8, $9, $9, $10, $9) ON CONFLICT (path) DO NOTHING RETURNING ${WRITTEN}
    ), acl AS (
      INSERT INTO ${S}acls (entity_id, principal, level) SELECT id, $5, $11 FROM ins
    ), untracked AS (
      DELETE FROM ${S}blobs WHERE blob = $8 AND EXISTS (SELECT 1 FROM ins) RETURNING 1
    )
    SELECT ins.*, NULL::text AS pid, (SELECT count(*) FROM untracked) AS untracked FROM (SELECT 1) AS one LEFT JOIN ins ON true`;
  /** An overwrite: the row's new bytes, the replaced blob tracked, the new one no longer, in one statement. */
  const OVERWRITE_OBJECT = `WITH upd AS (
      UPDATE ${S}entities SET size = $1, checksum = $2, blob = $3, modified_at = $4, etag = $6,
        verified_at = $4, damaged_at = NULL, damage = NULL, fixity_holder = NULL, fixity_until = NULL WHERE id = $5 RETURNING ${WRITTEN}
    ), tracked AS (
      INSERT INTO ${S}blobs (blob, since, owner) VALUES ($7, $4, NULL) ON CONFLICT (blob) DO NOTHING
    ), untracked AS (
      DELETE FROM ${S}blobs WHERE blob = $3 RETURNING 1
    )
    SELECT upd.*, (SELECT value FROM ${S}avus v WHERE v.entity_id = upd.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid,
      (SELECT count(*) FROM untracked) AS untracked FROM upd`;

  const TRASH_ENTRY = `SELECT ${trashEntryColumns(S)} FROM ${S}trash_entries t JOIN ${S}entities e ON e.uid = t.entity_uid`;
  const entryOf = async (c: PgQueryable, id: string) => {
    const row = await one(c, `${TRASH_ENTRY} WHERE t.entity_uid = $1`, [id]);
    return row ? toTrashEntry(row) : null;
  };
  /** The rows at `from` and below it, by the byte-order range of `rename`. */
  const SUBTREE = (p: string) => `(path = ${p}::text OR (path >= ${p}::text || '/' AND path < ${p}::text || '0'))`;
  /** Moves the rows at `from` and below it to `to`, locked first; the top row takes `parent` and `name`. */
  const moveSubtree = async (c: PgClientLike, from: string, to: string, parent: string, name: string): Promise<void> => {
    await c.query(`SELECT id FROM ${S}entities WHERE ${SUBTREE('$1')} ORDER BY path FOR UPDATE`, [from]);
    await c.query(`UPDATE ${S}entities SET
        path = $1::text || substr(path, $2::int + 1),
        parent = CASE WHEN path = $3::text THEN $4::text ELSE $1::text || substr(parent, $2::int + 1) END,
        name = CASE WHEN path = $3::text THEN $5::text ELSE name END
      WHERE ${SUBTREE('$3')}`, [to, [...from].length, from, parent, name]);
  };

  /** `move` inside the transaction of `c`. */
  const moveRows = async (c: PgClientLike, { from, to, now, jobs, overwrite }: { from: Path; to: Path; now: Date; overwrite: boolean; jobs?: JobsFor | undefined }) => {
    // NOTE: locked first, so creations below `from` (which key-share-lock it) finish before
    // the UPDATE below takes its snapshot, and later ones find their parent moved.
    const moving = await one(c, `SELECT uid, kind, size FROM ${S}entities WHERE path = $1 FOR UPDATE`, [from]);
    if (!moving) throw new LadingError('NOT_FOUND', `'${from}' does not exist.`);
    if (to.startsWith(from + '/')) throw new LadingError('CONFLICT', `'${from}' cannot be moved inside itself.`);
    const existing = await one(c, `SELECT id, uid, kind, blob, size FROM ${S}entities WHERE path = $1 FOR UPDATE`, [to]);
    let replacedBlob: string | null = null;
    if (existing && (!overwrite || existing.kind === 'collection' || moving.kind === 'collection' || existing.uid === moving.uid)) {
      throw new LadingError('CONFLICT', `'${to}' already exists.`);
    }
    // NOTE: charged before anything moves, while the subtree is still at `from`.
    await chargeQuotas(db, c, [
      {
        removed: from, added: to, moves: true,
        amount: async () => (moving.kind === 'dataobject' ? { bytes: Number(moving.size), objects: 1 } : subtreeUsage(db, c, from)),
      },
      ...(existing ? [{ removed: to, added: null, amount: async () => ({ bytes: Number(existing.size), objects: 1 }) }] : []),
    ]);
    if (existing) {
      if (!overwrite || existing.kind === 'collection' || moving.kind === 'collection' || existing.uid === moving.uid) {
        throw new LadingError('CONFLICT', `'${to}' already exists.`);
      }
      // NOTE: acls and avus go with the row (ON DELETE CASCADE).
      await c.query(`DELETE FROM ${S}entities WHERE id = $1`, [existing.id]);
      replacedBlob = existing.blob as string;
      await trackBlobRow(db, c, replacedBlob, now);
    }
    await lockParent(c, to);
    await moveQuotaRows(db, c, from, to);
    // NOTE: descendants are matched by a range in byte order ("C" collation), not LIKE:
    // every path starting with `from/` sorts between `from/` and `from0` ('0' follows '/'),
    // and names may contain % and _ without being patterns.
    const len = [...from].length;
    await c.query(`UPDATE ${S}entities SET
        path = $1::text || substr(path, $2::int + 1),
        parent = CASE WHEN path = $3::text THEN $4::text ELSE $1::text || substr(parent, $2::int + 1) END,
        name = CASE WHEN path = $3::text THEN $5::text ELSE name END,
        modified_at = CASE WHEN path = $3::text THEN $6::bigint ELSE modified_at END
      WHERE path = $3::text OR (path >= $3::text || '/' AND path < $3::text || '0')`,
    [to, len, from, parentOf(to), baseName(to), now.getTime()]);
    const type = moving.kind === 'collection' ? 'collection.renamed' : 'object.renamed';
    await insertJobs(db, c, jobs?.({ type, entityId: moving.uid as string, path: to, from }) ?? [], now);
    return { entity: (await entityAt(c, to))!, replacedBlob };
  };

  return {
    async getEntity(path) {
      return entityAt(pool, path);
    },

    async marksOf(ids, { anonymous, now }) {
      const rows = await all(pool, `SELECT e.uid AS uid,
          EXISTS (SELECT 1 FROM ${S}acls a WHERE a.entity_id = e.id AND a.principal = $2) AS published,
          EXISTS (SELECT 1 FROM ${S}acls a WHERE a.entity_id = e.id AND a.principal <> e.owner AND a.principal <> $2) AS shared,
          EXISTS (SELECT 1 FROM ${S}shares s WHERE s.entity_uid = e.uid AND (s.expires_at IS NULL OR s.expires_at > $3)
            AND (s.max_uses IS NULL OR s.uses < s.max_uses)) AS links
        FROM ${S}entities e WHERE e.uid = ANY($1::text[])`, [ids, anonymous, now.getTime()]);
      return marksFrom(rows);
    },

    async listChildren(path) {
      return (await all(pool, `${ENTITY} WHERE e.parent = $1 ORDER BY e.name`, [path])).map(toEntity);
    },

    async listChildrenAfter(path, after, limit) {
      // NOTE: names are COLLATE "C": byte order, the same as SQLite's.
      return (after === null
        ? await all(pool, `${ENTITY} WHERE e.parent = $1 ORDER BY e.name LIMIT $2`, [path, limit])
        : await all(pool, `${ENTITY} WHERE e.parent = $1 AND e.name > $2 ORDER BY e.name LIMIT $3`, [path, after, limit])).map(toEntity);
    },

    async createCollection({ path, owner, now, jobs }) {
      return tx(async (c) => {
        if (await entityAt(c, path)) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        await lockParent(c, path);
        const uid = randomUUID();
        const row = await one(c, `INSERT INTO ${S}entities (uid, path, parent, name, kind, owner, created_at, modified_at)
          VALUES ($1, $2, $3, $4, 'collection', $5, $6, $6) ON CONFLICT (path) DO NOTHING RETURNING id`,
        [uid, path, parentOf(path), baseName(path), owner, now.getTime()]);
        if (!row) throw new LadingError('CONFLICT', `'${path}' already exists.`);
        await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)`, [row.id, owner, ACCESS_RANK.own]);
        await insertJobs(db, c, jobs?.({ type: 'collection.created', entityId: uid, path }) ?? [], now);
        return (await entityAt(c, path)) as Collection;
      });
    },

    async commitObject({ path, owner, size, checksum, blob, now, overwrite, jobs, fenced, upload, meta, replaceMeta, etag = null }) {
      return tx(async (c) => {
        if (upload && !(await uploadHeldRow(db, c, upload.id, upload.holder))) throw uploadNotHeld(upload.id);
        // NOTE: a round trip per statement is what a small commit costs most: the parent and
        // the object are locked in one, the object's row, its owner's entry and the end of its
        // blob's tracking written in another, and the object read back from what it wrote.
        const locked = await lockTarget(c, path);
        let existing = locked.row;
        let event: BackendEvent | undefined;
        let untracked: boolean | null = null;
        let written: Row | null = null;
        if (!existing) {
          // NOTE: ON CONFLICT waits for a concurrent insert of the same path to finish; when it
          // committed, the object is there now and this commit is an overwrite (or a CONFLICT).
          const uid = randomUUID();
          const inserted = (await one(c, INSERT_OBJECT,
            [uid, path, parentOf(path), baseName(path), owner, size, checksum, blob, now.getTime(), etag, ACCESS_RANK.own]))!;
          if (inserted.id !== null) {
            // NOTE: refused past a quota, the whole transaction (the row just written too) is undone.
            await chargeQuotas(db, c, [{ removed: null, added: path, amount: async () => ({ bytes: size, objects: 1 }) }], locked.quotas);
            event = { type: 'object.created', entityId: uid, path };
            untracked = Number(inserted.untracked) > 0;
            written = inserted;
          } else {
            existing = (await lockTarget(c, path)).row;
            if (!existing) throw new LadingError('CONFLICT', `'${path}' is being changed; try again.`);
          }
        }
        let replacedBlob: string | null = null;
        if (existing) {
          if (existing.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
          if (!overwrite) throw new LadingError('CONFLICT', `'${path}' already exists.`);
          replacedBlob = existing.blob as string;
          const before = Number(existing.size);
          await chargeQuotas(db, c, [{ removed: null, added: path, amount: async () => ({ bytes: size - before, objects: 0 }) }], locked.quotas);
          // NOTE: the new bytes were hashed as they were stored: a check at the commit, which
          // clears a mark of damage the replaced ones had.
          if (replacedBlob === blob) {
            await c.query(`UPDATE ${S}entities SET size = $1, checksum = $2, blob = $3, modified_at = $4, etag = $6,
                verified_at = $4, damaged_at = NULL, damage = NULL, fixity_holder = NULL, fixity_until = NULL WHERE id = $5`,
              [size, checksum, blob, now.getTime(), existing.id, etag]);
            await trackBlobRow(db, c, replacedBlob, now);
          } else {
            written = (await one(c, OVERWRITE_OBJECT, [size, checksum, blob, now.getTime(), existing.id, etag, replacedBlob]))!;
            untracked = Number(written.untracked) > 0;
          }
          if (replaceMeta && replaceMeta.length > 0) {
            await c.query(`DELETE FROM ${S}avus WHERE entity_id = $1 AND attribute = ANY($2::text[])`, [existing.id, [...replaceMeta]]);
            written = null;
          }
          event = { type: 'object.overwritten', entityId: existing.uid as string, path };
        }
        if (!(untracked ?? await untrackBlobRow(db, c, blob)) && fenced && !upload) throw abandonedBlob(path);
        if (meta && meta.length > 0) {
          const id = await idOf(c, path);
          for (const avu of meta) {
            await c.query(`INSERT INTO ${S}avus (entity_id, attribute, value, unit) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [id, avu.attribute, avu.value, avu.unit]);
          }
          written = null;
        }
        const jobIds = event ? await insertJobs(db, c, jobs?.(event) ?? [], now) : [];
        const object = (written ? toEntity(written) : await entityAt(c, path)) as DataObject;
        if (upload && !(await completeUploadRow(db, c, { ...upload, entityId: object.id, jobIds, now }))) throw uploadNotHeld(upload.id);
        return { object, replacedBlob, jobIds };
      });
    },

    async rename(from, to, now, jobs) {
      return (await tx((c) => moveRows(c, { from, to, now, jobs, overwrite: false }))).entity;
    },

    async move(input) {
      return tx((c) => moveRows(c, input));
    },

    async getEntityById(id) {
      const row = await one(pool, `${ENTITY} WHERE e.uid = $1`, [id]);
      return row && !(row.path as string).startsWith(TRASH_PREFIX) ? toEntity(row) : null;
    },

    async trash({ path, actor, reason, now, jobs }) {
      return tx(async (c) => {
        const row = await one(c, `SELECT uid, name FROM ${S}entities WHERE path = $1 FOR UPDATE`, [path]);
        if (!row) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
        const id = row.uid as string;
        await moveSubtree(c, path, trashedPathOf(id), TRASH_PREFIX, row.name as string);
        await c.query(`INSERT INTO ${S}trash_entries (entity_uid, path, state, trashed_at, trashed_by, reason) VALUES ($1, $2, 'trashed', $3, $4, $5)`,
          [id, path, now.getTime(), actor, reason]);
        await insertJobs(db, c, jobs?.({ type: 'entity.trashed', entityId: id, path }) ?? [], now);
        return (await entryOf(c, id))!;
      });
    },

    async restore({ id, to, now, jobs }) {
      return tx(async (c) => {
        const locked = await one(c, `SELECT state FROM ${S}trash_entries WHERE entity_uid = $1 FOR UPDATE`, [id]);
        const entry = locked ? await entryOf(c, id) : null;
        if (!entry) throw new LadingError('NOT_FOUND', `Nothing with the id '${id}' is in the trash.`);
        if (entry.state !== 'trashed') throw new LadingError('CONFLICT', `'${entry.path}' was ${entry.state === 'purged' ? 'purged' : 'taken down'}; its bytes are gone and it cannot be restored.`);
        if (await entityAt(c, to)) throw new LadingError('CONFLICT', `'${to}' already exists.`);
        await lockParent(c, to);
        // NOTE: trashed, it counted where it was trashed from; restored, it counts at `to`.
        await chargeQuotas(db, c, [{ removed: entry.path, added: to, amount: () => subtreeUsage(db, c, trashedPathOf(id)) }]);
        try {
          await moveSubtree(c, trashedPathOf(id), to, parentOf(to), baseName(to));
        } catch (err) {
          // NOTE: a concurrent creation at `to` committed between the check and the move.
          if ((err as { code?: string }).code === '23505') throw new LadingError('CONFLICT', `'${to}' already exists.`, { cause: err });
          throw err;
        }
        await c.query(`DELETE FROM ${S}trash_entries WHERE entity_uid = $1`, [id]);
        await insertJobs(db, c, jobs?.({ type: 'entity.restored', entityId: id, path: to }) ?? [], now);
        return (await entityAt(c, to))!;
      });
    },

    async getTrashEntry(id) {
      return entryOf(pool, id);
    },

    async withdrawnEntity(id) {
      const row = await one(pool, `${ENTITY} WHERE e.uid = $1`, [id]);
      if (!row || !(row.path as string).startsWith(TRASH_PREFIX)) return null;
      const entry = await entryOf(pool, trashRootOf(row.path as string));
      return entry ? { entity: toEntity(row), entry } : null;
    },

    async listTrash({ user, limit, before }) {
      const rows = before
        ? await all(pool, `${TRASH_ENTRY} WHERE t.state = 'trashed' AND (t.trashed_by = $1 OR e.owner = $1) AND (t.trashed_at < $3 OR (t.trashed_at = $3 AND t.entity_uid < $4))
            ORDER BY t.trashed_at DESC, t.entity_uid DESC LIMIT $2`, [user, limit, before.at.getTime(), before.id])
        : await all(pool, `${TRASH_ENTRY} WHERE t.state = 'trashed' AND (t.trashed_by = $1 OR e.owner = $1) ORDER BY t.trashed_at DESC, t.entity_uid DESC LIMIT $2`, [user, limit]);
      return rows.map(toTrashEntry);
    },

    async removeTrashed({ ids, trashedBefore, limit, state, by, reason, now, jobs }) {
      return tx(async (c) => {
        // NOTE: SKIP LOCKED: entries another node is removing now are its own to finish.
        const claimed = ids
          ? await all(c, `SELECT entity_uid, path FROM ${S}trash_entries WHERE entity_uid = ANY($1::text[]) AND state = 'trashed' ORDER BY entity_uid LIMIT $2 FOR UPDATE`, [[...ids], limit])
          : await all(c, `SELECT entity_uid, path FROM ${S}trash_entries WHERE state = 'trashed' AND trashed_at < $1 ORDER BY trashed_at LIMIT $2 FOR UPDATE SKIP LOCKED`, [(trashedBefore ?? now).getTime(), limit]);
        const blobs: string[] = [];
        const entries = [];
        await chargeQuotas(db, c, claimed.map((row) => ({
          removed: row.path as Path, added: null, amount: () => subtreeUsage(db, c, trashedPathOf(row.entity_uid as string)),
        })));
        for (const row of claimed) {
          const id = row.entity_uid as string;
          const held = await all(c, `SELECT blob FROM ${S}entities WHERE kind = 'dataobject' AND blob IS NOT NULL AND ${SUBTREE('$1')}`, [trashedPathOf(id)]);
          for (const h of held) {
            await trackBlobRow(db, c, h.blob as string, now);
            blobs.push(h.blob as string);
          }
          await c.query(`UPDATE ${S}trash_entries SET state = $1, removed_at = $2, removed_by = $3, removal_reason = $4 WHERE entity_uid = $5`,
            [state, now.getTime(), by, reason, id]);
          const type = state === 'purged' ? 'entity.purged' : 'entity.taken_down';
          await insertJobs(db, c, jobs?.({ type, entityId: id, path: row.path as Path }) ?? [], now);
          entries.push((await entryOf(c, id))!);
        }
        return { entries, blobs };
      });
    },

    async listDescendants(path, limit, afterPath) {
      // NOTE: the same byte-order range as `rename`; for the root, every path but '/' itself.
      const low = path === '/' ? '/' : path + '/';
      const high = path === '/' ? '0' : path + '0';
      const rows = await all(pool, `${ENTITY} WHERE e.path >= $1::text AND e.path < $2::text AND e.path <> $3::text AND e.path > $4::text
        ORDER BY e.path LIMIT $5`, [low, high, path, afterPath ?? '', limit]);
      return rows.map(toEntity);
    },

    async setAccess(path, principal, level) {
      await tx(async (c) => {
        const id = await idOf(c, path);
        if (level === null) await c.query(`DELETE FROM ${S}acls WHERE entity_id = $1 AND principal = $2`, [id, principal]);
        else {
          await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)
            ON CONFLICT (entity_id, principal) DO UPDATE SET level = excluded.level`, [id, principal, ACCESS_RANK[level]]);
        }
      });
    },

    async listAccess(path) {
      const id = await idOf(pool, path);
      const rows = await all(pool, `SELECT principal, level FROM ${S}acls WHERE entity_id = $1 ORDER BY principal COLLATE "C"`, [id]);
      return rows.map((r): AccessEntry => ({ principal: r.principal as string, level: levelOf(Number(r.level)) }));
    },

    async listEntitiesHeldBy({ principals, except, from, limit }) {
      if (principals.length === 0) return [];
      // NOTE: the byte-order range of `rename`: what lies below `except` sorts from `except/`
      // up to, not including, `except0`.
      const after = from === null ? '' : `AND e.path ${from.inclusive ? '>=' : '>'} $6::text`;
      const rows = await all(pool, `${ENTITY}
        WHERE e.id IN (SELECT a.entity_id FROM ${S}acls a WHERE a.principal = ANY($1::text[]))
          AND left(e.path, 1) = '/' AND e.path <> $2::text AND NOT (e.path >= $3::text AND e.path < $4::text) ${after}
        ORDER BY e.path LIMIT $5`, [[...principals], except, `${except}/`, `${except}0`, limit, ...(from === null ? [] : [from.path])]);
      return rows.map(toEntity);
    },

    async accessLevel(path, principals) {
      if (principals.length === 0) return null;
      const row = await one(pool, `SELECT ${levelOnLineage('$1::text[]', '$2::text[]')} AS level`, [lineage(path), [...principals]]);
      return row?.level === null || row?.level === undefined ? null : levelOf(Number(row.level));
    },

    async lookup({ path, user, subject, also }) {
      // NOTE: one statement, so one round trip and one snapshot: the account (by name, or
      // through the subject's mapping), its groups, the level on the lineage and the entity.
      const row = (await one(pool, LOOKUP, [user ?? null, subject ?? null, lineage(path), path, [...also], parentOf(path)]))!;
      const groups = (row.groups as string[] | null) ?? [];
      const account = row.user_name === null ? null : toUser({
        name: row.user_name, kind: row.user_kind, password_hash: row.user_password_hash, created_at: row.user_created_at, disabled: row.user_disabled,
      });
      return {
        user: account,
        groups: account ? groups : [],
        level: account && row.level !== null ? levelOf(Number(row.level)) : null,
        entity: row.id === null ? null : toEntity(row),
        parentKind: (row.parent_kind as Entity['kind'] | null) ?? null,
      };
    },

    async addMeta(path, { attribute, value, unit }) {
      await tx(async (c) => {
        await c.query(`INSERT INTO ${S}avus (entity_id, attribute, value, unit) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
          [await idOf(c, path), attribute, value, unit]);
      });
    },

    async removeMeta(path, attribute, value) {
      await tx(async (c) => {
        const id = await idOf(c, path);
        if (value === undefined) await c.query(`DELETE FROM ${S}avus WHERE entity_id = $1 AND attribute = $2`, [id, attribute]);
        else await c.query(`DELETE FROM ${S}avus WHERE entity_id = $1 AND attribute = $2 AND value = $3`, [id, attribute, value]);
      });
    },

    async listMeta(path) {
      const rows = await all(pool, `SELECT attribute, value, unit FROM ${S}avus WHERE entity_id = $1 ORDER BY attribute, value, unit`, [await idOf(pool, path)]);
      return rows.map((r): Avu => ({ attribute: r.attribute as string, value: r.value as string, unit: r.unit as string }));
    },
  };
}
