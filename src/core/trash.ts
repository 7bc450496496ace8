/**
 * The trash: an owner takes a data object or a collection out of the namespace and can bring
 * it back; its bytes go for good when the trash is emptied, after the retention (the periodic
 * sweep), or at once when an admin takes it down. Withdrawal is a state of the entity, kept
 * with its access list, metadata and PID (see `NamespaceStore.trash`), so a PID always
 * resolves to a tombstone that says when, by whom and why. Every change is audited and causes
 * the rule events `entity.trashed`, `entity.restored`, `entity.purged`, `entity.taken_down`.
 * Takes ports; knows nothing of HTTP.
 */
import type { Actor, Backend } from './backend.ts';
import { type AuditSubject, type Auditor, noAudit, outcomeOf } from './audit.ts';
import { LadingError } from './errors.ts';
import { type Path, childOf, parentOf, parseName, parsePath } from './path.ts';
import type { BlobTracker, Clock, NamespaceStore, Resource } from './ports.ts';
import type { AuditLog } from './publishing.ts';
import type { Entity, JobsFor, TrashEntry } from './types.ts';

/** Default `trash.retention`: 30 days, in seconds. */
export const DEFAULT_TRASH_RETENTION = 30 * 86400;

/** How many entries one catalog transaction removes at a time. */
const BATCH = 100;

/** The longest reason kept, in characters. */
export const MAX_REASON_LENGTH = 1000;

/** Who removes the bytes of entries the retention has run out on. */
export const RETENTION_ACTOR = 'lading';

export interface TrashOptions {
  backend: Pick<Backend, 'require' | 'statAs' | 'zonePath' | 'homeOf'>;
  catalog: NamespaceStore & Pick<BlobTracker, 'untrackBlob'>;
  resource: Pick<Resource, 'delete'>;
  clock: Clock;
  /** How long, in seconds, a trashed entity keeps its bytes before the sweep purges it. */
  retentionSeconds: number;
  /** The jobs events cause (the backend's rules); none when absent. */
  jobs?: JobsFor | undefined;
  /** Called after a change enqueued jobs (to wake the job worker). */
  onJobs?: () => void;
  audit: AuditLog;
  /** The audit trail every change is recorded in; none when absent. */
  trail?: Auditor;
}

/** A withdrawn entity and the record of its withdrawal, for a PID's tombstone. */
export interface Tombstone {
  entity: Entity;
  entry: TrashEntry;
}

export class Trash {
  readonly #o: TrashOptions;
  readonly #trail: Auditor;

  constructor(options: TrashOptions) {
    this.#o = options;
    this.#trail = options.trail ?? noAudit;
  }

  get retentionSeconds(): number {
    return this.#o.retentionSeconds;
  }

  /**
   * Moves the entity at `path` (a collection with everything in it) to the trash, with an
   * optional `reason`. Needs `own`. Rejects with `FORBIDDEN` (whether or not it exists),
   * `NOT_FOUND`, `BAD_REQUEST` (the zone's top collections or a home, or a reason too long).
   */
  async trash(actor: Actor, path: Path, reason: string | null = null): Promise<TrashEntry> {
    return this.#trail.track(actor, 'trash', path, () => this.#trash(actor, path, reason), (e) => ({ entity: e.id, reason: e.reason }));
  }

  async #trash(actor: Actor, path: Path, reason: string | null): Promise<TrashEntry> {
    await this.#o.backend.require(actor, path, 'own');
    const entity = await this.#o.backend.statAs(actor, path);
    const homes = parentOf(this.#o.backend.homeOf('x'));
    if (path === '/' || path === this.#o.backend.zonePath || path === homes || parentOf(path) === homes) {
      throw new LadingError('BAD_REQUEST', `'${path}' is one of the zone's top collections or a home; it cannot be trashed.`);
    }
    const entry = await this.#o.catalog.trash({ path, actor: actor.user, reason: checkReason(reason), now: this.#o.clock.now(), jobs: this.#o.jobs });
    this.#jobsEnqueued();
    this.#o.audit.info({ audit: 'trash', user: actor.user, path, entity: entity.id, kind: entity.kind, reason: entry.reason }, `${actor.user} trashed ${path}`);
    return entry;
  }

  /**
   * Up to `limit` entries still in the trash that `actor` trashed or whose entity they own,
   * newest first; with `before` (an entry's `trashedAt` and `id`), those after that entry,
   * whether or not it is still there.
   */
  async list(actor: Actor, limit: number, before: { at: Date; id: string } | null = null): Promise<TrashEntry[]> {
    return this.#o.catalog.listTrash({ user: actor.user, limit, ...(before ? { before } : {}) });
  }

  /** The entry `id` as `actor` may see it. `NOT_FOUND`. */
  async entry(actor: Actor, id: string): Promise<TrashEntry> {
    return this.#visible(actor, id);
  }

  /**
   * Puts the trashed entity `id` back where it was, or beside it under `newName`; never
   * replaces anything. Needs write on the collection it returns to. Rejects with `NOT_FOUND`
   * (no such entry that `actor` may see, or the collection it returns to is gone), `CONFLICT`
   * (the path is taken, or its bytes were removed), `INVALID_PATH`, `FORBIDDEN`.
   */
  async restore(actor: Actor, id: string, newName: string | null = null): Promise<Entity> {
    let path: string | null = null;
    return this.#trail.track(actor, 'restore', () => path, async () => {
      const restored = await this.#restore(actor, id, newName);
      path = restored.path;
      return restored;
    }, undefined, { entity: id });
  }

  async #restore(actor: Actor, id: string, newName: string | null): Promise<Entity> {
    const entry = await this.#visible(actor, id);
    const to = newName === null ? entry.path : childOf(parentOf(entry.path), parseName(newName));
    await this.#o.backend.require(actor, parentOf(to), 'write');
    if (entry.state !== 'trashed') throw new LadingError('CONFLICT', `'${entry.path}' was ${entry.state === 'purged' ? 'purged' : 'taken down'}; it cannot be restored.`);
    const restored = await this.#o.catalog.restore({ id, to, now: this.#o.clock.now(), jobs: this.#o.jobs }).catch((err: unknown) => {
      if (err instanceof LadingError && err.code === 'CONFLICT' && newName === null) {
        throw new LadingError('CONFLICT', `'${to}' is taken; restore it under another name (newname).`, { cause: err });
      }
      throw err;
    });
    this.#jobsEnqueued();
    this.#o.audit.info({ audit: 'restore', user: actor.user, path: to, entity: id }, `${actor.user} restored ${to}`);
    return restored;
  }

  /** Removes the bytes of the trashed entity `id` now (it stays a tombstone). `NOT_FOUND`, `CONFLICT` (already removed). */
  async purge(actor: Actor, id: string): Promise<TrashEntry> {
    return this.#failures(actor, 'purge', id, async () => {
      const entry = await this.#visible(actor, id);
      if (entry.state !== 'trashed') throw new LadingError('CONFLICT', `'${entry.path}' was already removed.`);
      const [removed] = await this.#remove({ ids: [id], state: 'purged', by: actor.user, reason: null, subject: actor });
      if (!removed) throw new LadingError('CONFLICT', `'${entry.path}' was already removed.`);
      return removed;
    });
  }

  /** Runs `fn`, recording its failure as `action` on the entry `id` (its successes are recorded per entry by `#remove`). */
  async #failures<T>(actor: Actor, action: 'purge' | 'takedown', id: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      await this.#trail.record(actor, action, id.startsWith('/') ? id : null, outcomeOf(err), { entity: id.startsWith('/') ? null : id, error: err instanceof LadingError ? err.code : 'INTERNAL' });
      throw err;
    }
  }

  /** Purges every entry `actor` would list; resolves with how many. */
  async empty(actor: Actor): Promise<number> {
    let count = 0;
    for (;;) {
      const page = await this.#o.catalog.listTrash({ user: actor.user, limit: BATCH });
      if (page.length === 0) return count;
      count += (await this.#remove({ ids: page.map((e) => e.id), state: 'purged', by: actor.user, reason: null, subject: actor })).length;
    }
  }

  /**
   * Purges the entries trashed longer than the retention ago (the periodic sweep, on any node:
   * each entry is removed by one of them). Resolves with how many.
   */
  async purgeExpired(): Promise<number> {
    const trashedBefore = new Date(this.#o.clock.now().getTime() - this.#o.retentionSeconds * 1000);
    let count = 0;
    for (;;) {
      const removed = await this.#remove({
        trashedBefore, state: 'purged', by: RETENTION_ACTOR, reason: `kept ${this.#o.retentionSeconds} seconds in the trash (trash.retention)`, subject: { user: RETENTION_ACTOR },
      });
      count += removed.length;
      if (removed.length < BATCH) return count;
    }
  }

  /**
   * Takes an entity down at once (a legal or privacy request): the entity at `target` (a path
   * of a live entity, which is trashed first) or the trashed entity with the id `target`
   * loses its bytes; its tombstone records `by` and `reason`. For admins only (the caller
   * checks). Rejects with `NOT_FOUND`, `CONFLICT` (already removed), `BAD_REQUEST`.
   */
  async takedown(actor: Actor, target: Path | string, reason: string): Promise<TrashEntry> {
    return this.#failures(actor, 'takedown', target, () => this.#takedown(actor, target, reason));
  }

  async #takedown(actor: Actor, target: Path | string, reason: string): Promise<TrashEntry> {
    const why = checkReason(reason);
    if (why === null) throw new LadingError('BAD_REQUEST', 'A takedown needs a reason.');
    let id = target;
    if (target.startsWith('/')) id = (await this.trash(actor, target as Path, why)).id;
    const entry = await this.#o.catalog.getTrashEntry(id);
    if (!entry) throw new LadingError('NOT_FOUND', `Nothing at or with the id '${target}' is in the trash.`);
    if (entry.state !== 'trashed') throw new LadingError('CONFLICT', `'${entry.path}' was already removed (${entry.state}).`);
    const [removed] = await this.#remove({ ids: [id], state: 'taken_down', by: actor.user, reason: why, subject: actor });
    if (!removed) throw new LadingError('CONFLICT', `'${entry.path}' was already removed.`);
    return removed;
  }

  /**
   * `takedown` by an operator at the server's shell (the `lading takedown` command), recorded
   * as done by `by` (an admin's name, or `operator`). Rejects as `takedown`.
   */
  async takedownByOperator(target: string, reason: string, by = 'operator'): Promise<TrashEntry> {
    const operator: Actor = { user: by, principals: [], admin: true, via: { door: 'admin', address: null } };
    return this.takedown(operator, target.startsWith('/') ? parsePath(target) : target, reason);
  }

  /** The tombstone of the PID `handle` when it names a withdrawn entity here, else null. */
  async tombstone(handle: string): Promise<Tombstone | null> {
    const found = await this.#o.catalog.withdrawnEntity(handle.slice(handle.indexOf('/') + 1));
    return found && found.entity.pid === handle ? found : null;
  }

  async #remove(input: { ids?: string[]; trashedBefore?: Date; state: 'purged' | 'taken_down'; by: string; reason: string | null; subject: AuditSubject }): Promise<TrashEntry[]> {
    const { subject, ...remove } = input;
    const { entries, blobs } = await this.#o.catalog.removeTrashed({ ...remove, limit: BATCH, now: this.#o.clock.now(), jobs: this.#o.jobs });
    if (entries.length > 0) this.#jobsEnqueued();
    for (const blob of blobs) {
      try {
        await this.#o.resource.delete(blob);
        await this.#o.catalog.untrackBlob(blob);
      } catch {
        // NOTE: left tracked on purpose: the blob sweeper removes it later.
      }
    }
    for (const e of entries) {
      this.#o.audit.info({ audit: input.state === 'purged' ? 'purge' : 'takedown', user: input.by, path: e.path, entity: e.id, reason: input.reason }, `${input.by} ${input.state === 'purged' ? 'purged' : 'took down'} ${e.path}`);
      await this.#trail.record(subject, input.state === 'purged' ? 'purge' : 'takedown', e.path, 'ok', { entity: e.id, reason: input.reason });
    }
    return entries;
  }

  async #visible(actor: Actor, id: string): Promise<TrashEntry> {
    const entry = await this.#o.catalog.getTrashEntry(id);
    if (!entry || !(actor.admin || entry.trashedBy === actor.user || entry.owner === actor.user)) {
      throw new LadingError('NOT_FOUND', `Nothing with the id '${id}' is in your trash.`);
    }
    return entry;
  }

  #jobsEnqueued(): void {
    if (this.#o.jobs) this.#o.onJobs?.();
  }
}

function checkReason(reason: string | null): string | null {
  if (reason === null) return null;
  const r = reason.trim();
  if (r.length > MAX_REASON_LENGTH) throw new LadingError('BAD_REQUEST', `A reason may hold at most ${MAX_REASON_LENGTH} characters.`);
  return r === '' ? null : r;
}
