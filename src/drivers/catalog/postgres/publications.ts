/**
 * The publishing role of the PostgreSQL catalog: the access entry of the principal that stands
 * for callers without a credential, changed in one transaction with its `publication_events`
 * row and the jobs the change causes. The entity's row is locked first, so two nodes changing
 * the same entity's publication take turns and only one of them records a change.
 */
import { LadingError } from '../../../core/errors.ts';
import type { Path } from '../../../core/path.ts';
import type { PublicationStore } from '../../../core/ports.ts';
import { ACCESS_RANK, type JobsFor, type PublicationEvent } from '../../../core/types.ts';
import { toPublicationEvent } from '../rows.ts';
import { type PostgresConnection, all, one } from './connection.ts';
import { insertJobs } from './jobs.ts';

type Change = { path: Path; principal: string; actor: string; now: Date; jobs?: JobsFor };

/** The publishing role over `db`; each change runs in one transaction of its own. */
export function createPostgresPublications(db: PostgresConnection): PublicationStore {
  const { pool, S, tx } = db;
  const change = (input: Change, action: PublicationEvent['action']) => tx(async (c) => {
    const { path, principal, actor, now, jobs } = input;
    const entity = await one(c, `SELECT id, uid FROM ${S}entities WHERE path = $1 FOR UPDATE`, [path]);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    const held = (await one(c, `SELECT 1 AS held FROM ${S}acls WHERE entity_id = $1 AND principal = $2`, [entity.id, principal])) !== undefined;
    if (held === (action === 'published')) return { changed: false, jobIds: [] };
    if (action === 'published') await c.query(`INSERT INTO ${S}acls (entity_id, principal, level) VALUES ($1, $2, $3)`, [entity.id, principal, ACCESS_RANK.read]);
    else await c.query(`DELETE FROM ${S}acls WHERE entity_id = $1 AND principal = $2`, [entity.id, principal]);
    await c.query(`INSERT INTO ${S}publication_events (entity_uid, path, action, actor, at) VALUES ($1, $2, $3, $4, $5)`,
      [entity.uid, path, action, actor, now.getTime()]);
    const type = action === 'published' ? 'entity.published' : 'entity.unpublished';
    return { changed: true, jobIds: await insertJobs(db, c, jobs?.({ type, entityId: entity.uid as string, path }) ?? [], now) };
  });

  return {
    async publish(input) {
      return change(input, 'published');
    },

    async unpublish(input) {
      return change(input, 'unpublished');
    },

    async publicationEvents(entityId, limit) {
      const rows = await all(pool, `SELECT * FROM ${S}publication_events WHERE entity_uid = $1 ORDER BY id DESC LIMIT $2`, [entityId, limit]);
      return rows.map(toPublicationEvent);
    },
  };
}
