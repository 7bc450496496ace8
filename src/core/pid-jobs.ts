/**
 * What the rule actions do: `pid.register` gives an entity a handle whose suffix is the
 * entity's stable id (so a retried job reuses it and nothing is registered twice) and writes
 * it to the entity's `PID` attribute; `pid.update` rewrites the record of an entity that has
 * one. A renamed collection fans out one update job per registered entity below it, so the
 * rename request itself never waits for them. Records carry the B2SAFE fields.
 */
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
}

const PAGE = 500;

/** The handle record of an entity. */
export function recordOf(entity: Entity, handle: string, linkOf: (path: Path) => string): HandleValues {
  const values: HandleValues = { URL: linkOf(entity.path), 'EUDAT/ROR': handle };
  if (entity.kind === 'dataobject') {
    values['EUDAT/CHECKSUM'] = entity.checksum;
    values['EUDAT/CHECKSUM_TIMESTAMP'] = entity.modifiedAt.toISOString();
  }
  return values;
}

export function pidJobHandler(o: PidJobOptions): JobHandler {
  return async (job) => {
    const task = JSON.parse(job.payload) as RuleJob;
    const entity = await o.catalog.getEntityById(task.entityId);
    // The entity no longer exists: there is nothing left to register.
    if (!entity) return;
    if (task.action === 'pid.register') {
      const handle = entity.pid ?? `${o.provider.prefix}/${entity.id}`;
      await o.provider.put(handle, recordOf(entity, handle, o.linkOf));
      if (entity.pid !== handle) {
        await o.catalog.removeMeta(entity.path, 'PID');
        await o.catalog.addMeta(entity.path, { attribute: 'PID', value: handle, unit: '' });
      }
      return;
    }
    if (entity.pid) await o.provider.put(entity.pid, recordOf(entity, entity.pid, o.linkOf));
    if (entity.kind === 'collection' && task.event === 'collection.renamed') {
      let after: Path | undefined;
      for (;;) {
        const page = await o.catalog.listDescendants(entity.path, PAGE, after);
        const jobs = page.filter((e) => e.pid).map((e) => ({
          kind: RULE_JOB,
          payload: JSON.stringify({ action: 'pid.update', event: 'object.renamed', entityId: e.id, path: e.path } satisfies RuleJob),
        }));
        if (jobs.length > 0) await o.catalog.enqueueJobs(jobs, o.clock.now());
        if (page.length < PAGE) break;
        after = parsePath(page.at(-1)!.path);
      }
    }
  };
}
