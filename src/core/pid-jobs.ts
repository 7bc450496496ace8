/**
 * What the rule actions do: `pid.register` gives an entity a handle whose suffix is the
 * entity's stable id (so a retried job reuses it and nothing is registered twice) and writes
 * it to the entity's `PID` attribute; `pid.update` rewrites the record of an entity that has
 * one. A record's URL is the entity's public link while anyone may read it (it or a collection
 * above it is published) and its registered link otherwise, as the entity stands when the job
 * runs, so jobs of quick successive changes all write the last state. A renamed, published or
 * unpublished collection fans out one update job per registered entity below it, so the
 * request itself never waits for them. Records carry the B2SAFE fields. While an entity is
 * withdrawn (trashed, purged or taken down, itself or with a collection above it) its record's
 * URL is its tombstone (`tombstoneLinkOf`) and the record says when, by whom and why
 * (`WITHDRAWN/…`); a restore puts the URL back and drops those values.
 */
import { ANONYMOUS } from './backend.ts';
import type { JobHandler } from './jobs.ts';
import type { Path } from './path.ts';
import type { Clock, JobStore, NamespaceStore, PidProvider } from './ports.ts';
import { RULE_JOB, type RuleJob } from './rules.ts';
import type { Entity, HandleValues, TrashEntry } from './types.ts';

export interface PidJobOptions {
  catalog: NamespaceStore & Pick<JobStore, 'enqueueJobs'>;
  clock: Clock;
  provider: PidProvider;
  /** The public URL of an entity under `/api/registered`. */
  linkOf: (path: Path) => string;
  /** Its URL under `/api/public`, where anyone reads a published entity. */
  publicLinkOf: (path: Path) => string;
  /** The URL of a PID's tombstone (its landing page), for the record of a withdrawn entity. */
  tombstoneLinkOf: (pid: string) => string;
}

/** Events after which the records of the registered entities below a collection change too. */
const FANS_OUT = new Set(['collection.renamed', 'entity.published', 'entity.unpublished', 'entity.trashed', 'entity.restored', 'entity.purged', 'entity.taken_down']);

const PAGE = 500;

/** The handle record of an entity whose URL is `url`. */
export function recordOf(entity: Entity, handle: string, url: string): HandleValues {
  const values: HandleValues = { URL: url, 'EUDAT/ROR': handle };
  if (entity.kind === 'dataobject') {
    values['EUDAT/CHECKSUM'] = entity.checksum;
    values['EUDAT/CHECKSUM_TIMESTAMP'] = entity.modifiedAt.toISOString();
  }
  return values;
}

/** The handle record of a withdrawn entity: its URL is its tombstone, and it says when, by whom and why. */
export function tombstoneRecordOf(entity: Entity, entry: TrashEntry, handle: string, url: string): HandleValues {
  const values = recordOf(entity, handle, url);
  values['WITHDRAWN/STATE'] = entry.state;
  values['WITHDRAWN/AT'] = entry.trashedAt.toISOString();
  values['WITHDRAWN/BY'] = entry.trashedBy;
  if (entry.reason !== null) values['WITHDRAWN/REASON'] = entry.reason;
  if (entry.removedAt !== null) values['WITHDRAWN/REMOVED_AT'] = entry.removedAt.toISOString();
  if (entry.removedBy !== null) values['WITHDRAWN/REMOVED_BY'] = entry.removedBy;
  if (entry.removalReason !== null) values['WITHDRAWN/REMOVAL_REASON'] = entry.removalReason;
  return values;
}

export function pidJobHandler(o: PidJobOptions): JobHandler {
  const urlOf = async (entity: Entity): Promise<string> =>
    (await o.catalog.accessLevel(entity.path, [ANONYMOUS])) === null ? o.linkOf(entity.path) : o.publicLinkOf(entity.path);
  return async (job) => {
    const task = JSON.parse(job.payload) as RuleJob;
    const entity = await o.catalog.getEntityById(task.entityId);
    if (!entity) {
      const withdrawn = await o.catalog.withdrawnEntity(task.entityId);
      // The entity no longer exists: there is nothing left to register.
      if (!withdrawn) return;
      const { entity: gone, entry } = withdrawn;
      if (gone.pid) await o.provider.put(gone.pid, tombstoneRecordOf(gone, entry, gone.pid, o.tombstoneLinkOf(gone.pid)));
      if (gone.kind === 'collection' && FANS_OUT.has(task.event) && task.below === undefined) await fanOut(gone.path, task.event);
      return;
    }
    if (task.action === 'pid.register') {
      const handle = entity.pid ?? `${o.provider.prefix}/${entity.id}`;
      await o.provider.put(handle, recordOf(entity, handle, await urlOf(entity)));
      if (entity.pid !== handle) {
        await o.catalog.removeMeta(entity.path, 'PID');
        await o.catalog.addMeta(entity.path, { attribute: 'PID', value: handle, unit: '' });
      }
      return;
    }
    if (entity.pid) await o.provider.put(entity.pid, recordOf(entity, entity.pid, await urlOf(entity)));
    if (entity.kind === 'collection' && FANS_OUT.has(task.event) && task.below === undefined) await fanOut(entity.path, task.event);
  };

  /** Enqueues one update job per registered entity below the collection stored at `path`. */
  async function fanOut(path: Path, event: RuleJob['event']): Promise<void> {
    let after: Path | undefined;
    for (;;) {
      const page = await o.catalog.listDescendants(path, PAGE, after);
      const jobs = page.filter((e) => e.pid).map((e) => ({
        kind: RULE_JOB,
        // NOTE: `below` marks the job as one of a fan-out, so a collection among the
        // descendants (whose own descendants are in these pages too) does not fan out again.
        payload: JSON.stringify({ action: 'pid.update', event: event === 'collection.renamed' ? 'object.renamed' : event, entityId: e.id, path: e.path, below: path } satisfies RuleJob),
      }));
      if (jobs.length > 0) await o.catalog.enqueueJobs(jobs, o.clock.now());
      if (page.length < PAGE) break;
      // NOTE: below a withdrawn collection the stored paths are hidden ones, which no caller's
      // path parses to; they come from the catalog and go back to it unchanged.
      after = page.at(-1)!.path;
    }
  }
}
