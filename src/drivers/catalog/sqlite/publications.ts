/**
 * The publishing role of the SQLite catalog: the access entry of the principal that stands for
 * callers without a credential, changed in one transaction with its `publication_events` row
 * and the jobs the change causes.
 */
import { LadingError } from '../../../core/errors.ts';
import type { PublicationStore } from '../../../core/ports.ts';
import { ACCESS_RANK, type JobsFor, type PublicationEvent } from '../../../core/types.ts';
import type { Path } from '../../../core/path.ts';
import { toPublicationEvent } from '../rows.ts';
import type { Row, SqliteConnection } from './connection.ts';
import { insertJobs } from './jobs.ts';

type Change = { path: Path; principal: string; actor: string; now: Date; jobs?: JobsFor };

/** The publishing role over `db`; each change runs in one transaction of its own. */
export function createSqlitePublications(db: SqliteConnection): PublicationStore {
  const { q, tx } = db;
  const change = (input: Change, action: PublicationEvent['action']) => tx(() => {
    const { path, principal, actor, now, jobs } = input;
    const entity = q('SELECT id, uid FROM entities WHERE path = ?').get(path) as Row | undefined;
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    const id = Number(entity.id);
    const uid = String(entity.uid);
    const held = q('SELECT 1 FROM acls WHERE entity_id = ? AND principal = ?').get(id, principal) !== undefined;
    if (held === (action === 'published')) return { changed: false, jobIds: [] };
    if (action === 'published') q('INSERT INTO acls (entity_id, principal, level) VALUES (?, ?, ?)').run(id, principal, ACCESS_RANK.read);
    else q('DELETE FROM acls WHERE entity_id = ? AND principal = ?').run(id, principal);
    q('INSERT INTO publication_events (entity_uid, path, action, actor, at) VALUES (?, ?, ?, ?, ?)')
      .run(uid, path, action, actor, now.getTime());
    const type = action === 'published' ? 'entity.published' : 'entity.unpublished';
    return { changed: true, jobIds: insertJobs(db, jobs?.({ type, entityId: uid, path }) ?? [], now) };
  });

  return {
    async publish(input) {
      return change(input, 'published');
    },

    async unpublish(input) {
      return change(input, 'unpublished');
    },

    async publicationEvents(entityId, limit) {
      const rows = q('SELECT * FROM publication_events WHERE entity_uid = ? ORDER BY id DESC LIMIT ?').all(entityId, limit) as Row[];
      return rows.map(toPublicationEvent);
    },
  };
}
