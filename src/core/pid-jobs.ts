/**
 * What the rule actions do: `pid.register` gives an entity a handle whose suffix is the
 * entity's stable id (so a retried job reuses it and nothing is registered twice) and writes
 * it to the entity's `PID` attribute; `pid.update` rewrites the record of an entity that has
 * one. A record's URL is the entity's public link while anyone may read it (it or a collection
 * above it is published) and its registered link otherwise, as the entity stands when the job
 * runs, so jobs of quick successive changes all write the last state. A renamed, published or
 * unpublished collection fans out one update job per registered entity below it, so the
 * request itself never waits for them. Records carry the B2SAFE fields.
 */
import { ANONYMOUS } from './backend.ts';
import type { JobHandler } from './jobs.ts';
import { type Path, parsePath } from './path.ts';
import type { Clock, JobStore, NamespaceStore, PidProvider } from './ports.ts';
import { RULE_JOB, type RuleJob } from './rules.ts';
import type { Entity, HandleValues } from './types.ts';

export interface PidJobOptions {
  catalog: NamespaceStore & Pick<JobStore, 'enqueueJobs'>;
  clock: Clock;
  provider: PidProvider;
  /** The public URL of an entity under `/api/registered`. */
  linkOf: (path: Path) => string;
  /** Its URL under `/api/public`, where anyone reads a published entity. */
  publicLinkOf: (path: Path) => string;
}

/** Events after which the records of the registered entities below a collection change too. */
const FANS_OUT = new Set(['collection.renamed', 'entity.published', 'entity.unpublished']);

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

export function pidJobHandler(o: PidJobOptions): JobHandler {
  const urlOf = async (entity: Entity): Promise<string> =>
    (await o.catalog.accessLevel(entity.path, [ANONYMOUS])) === null ? o.linkOf(entity.path) : o.publicLinkOf(entity.path);
  return async (job) => {
    const task = JSON.parse(job.payload) as RuleJob;
    const entity = await o.catalog.getEntityById(task.entityId);
    // The entity no longer exists: there is nothing left to register.
    if (!entity) return;
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
    if (entity.kind === 'collection' && FANS_OUT.has(task.event) && task.below === undefined) {
      let after: Path | undefined;
      for (;;) {
        const page = await o.catalog.listDescendants(entity.path, PAGE, after);
        const jobs = page.filter((e) => e.pid).map((e) => ({
          kind: RULE_JOB,
          // NOTE: `below` marks the job as one of a fan-out, so a collection among the
          // descendants (whose own descendants are in these pages too) does not fan out again.
          payload: JSON.stringify({ action: 'pid.update', event: task.event === 'collection.renamed' ? 'object.renamed' : task.event, entityId: e.id, path: e.path, below: entity.path } satisfies RuleJob),
        }));
        if (jobs.length > 0) await o.catalog.enqueueJobs(jobs, o.clock.now());
        if (page.length < PAGE) break;
        after = parsePath(page.at(-1)!.path);
      }
    }
  };
}
