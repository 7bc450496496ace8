/**
 * Publishing: an owner makes a data object or a collection (and so everything in it) readable
 * by anyone, without a credential, and takes that back. Publishing is read access granted to
 * the reserved principal `anonymous`, changed only here, together with a durable record (who,
 * when) and the jobs of the `entity.published` / `entity.unpublished` events, and with an
 * audit line. Also the reads of published data as `anonymous`, where what is not published
 * does not exist (`NOT_FOUND`, so existence does not leak), and the public facts behind a PID's
 * landing page. Takes ports; knows nothing of HTTP or URLs.
 */
import { type Actor, ANONYMOUS, type Backend, type CollectionWalk, type ReadPlan } from './backend.ts';
import { type Auditor, noAudit } from './audit.ts';
import { LadingError, isLadingError } from './errors.ts';
import { type Path, lineage } from './path.ts';
import type { ByteRange, Clock, NamespaceStore, PublicationStore, ResourceStream } from './ports.ts';
import type { Collection, DataObject, Entity, JobsFor } from './types.ts';

/** Where audit lines go (pino's shape). */
export interface AuditLog {
  info(fields: Record<string, unknown>, message: string): void;
}

/** Whether an entity is published, and by what. */
export interface PublicationState {
  path: Path;
  /** Anyone may read the entity without a credential. */
  published: boolean;
  /** The entity whose publication covers it: itself or a collection above it; null when not published. */
  via: Path | null;
  /** When and by whom `via` was published, as recorded; null when not published or not recorded. */
  publishedAt: Date | null;
  publishedBy: string | null;
}

/** What a PID's landing page may show, and how its viewer may download the object. */
export interface PidSubject {
  /** The entity the PID names (its record's facts are public, as handle records are). */
  entity: Entity;
  /** Anyone may read it without a credential (it or a collection above it is published). */
  published: boolean;
  /** The viewer may read it (with their own access, or because it is published). */
  viewerMayRead: boolean;
}

export interface PublishingOptions {
  backend: Pick<Backend, 'require' | 'levelOf' | 'anonymousActor' | 'statAs' | 'listAs' | 'openObjectAs' | 'walkAs'>;
  catalog: Pick<NamespaceStore, 'getEntity' | 'getEntityById' | 'accessLevel' | 'listAccess'> & PublicationStore;
  clock: Clock;
  /** The jobs events cause (the backend's rules); none when absent. */
  jobs?: JobsFor;
  /** Called after a change enqueued jobs (to wake the job worker). */
  onJobs?: () => void;
  /** Where the audit line of every publish and unpublish goes. */
  audit: AuditLog;
  /** The audit trail every publish and unpublish is recorded in; none when absent. */
  trail?: Auditor;
}

export class Publishing {
  readonly #o: PublishingOptions;

  constructor(options: PublishingOptions) {
    this.#o = options;
  }

  /**
   * Whether the entity at `path` is published, directly or through a collection above it.
   * Rejects with `FORBIDDEN` unless `actor` may read it (whether or not it exists), `NOT_FOUND`.
   */
  async status(actor: Actor, path: Path): Promise<PublicationState> {
    await this.#o.backend.require(actor, path, 'read');
    await this.#mustExist(path);
    return this.#state(path);
  }

  /**
   * Publishes the entity at `path`: anyone may then read it, and everything below it, without a
   * credential. Idempotent: publishing a published entity keeps its record. Audited. Rejects
   * with `FORBIDDEN` unless `actor` holds `own` (whether or not it exists), `NOT_FOUND`.
   */
  async publish(actor: Actor, path: Path): Promise<PublicationState> {
    return (this.#o.trail ?? noAudit).track(actor, 'publish', path, () => this.#change(actor, path, 'publish'));
  }

  /**
   * Unpublishes the entity at `path`: from the next request on, reads without a credential
   * are refused. Idempotent on an entity that is not published. Audited. Rejects with
   * `FORBIDDEN` unless `actor` holds `own`, `NOT_FOUND`, and `CONFLICT` when the entity is
   * published only through a collection above it (unpublish that one).
   */
  async unpublish(actor: Actor, path: Path): Promise<PublicationState> {
    return (this.#o.trail ?? noAudit).track(actor, 'unpublish', path, () => this.#change(actor, path, 'unpublish'));
  }

  /** The published entity at `path`. `NOT_FOUND` when it does not exist or is not published. */
  async stat(path: Path): Promise<Entity> {
    return this.#hidden(path, () => this.#o.backend.statAs(this.#o.backend.anonymousActor(), path));
  }

  /** The children of a published collection. `NOT_FOUND` (also when not published), `NOT_A_COLLECTION`. */
  async list(path: Path): Promise<{ collection: Collection; children: Entity[] }> {
    return this.#hidden(path, () => this.#o.backend.listAs(this.#o.backend.anonymousActor(), path));
  }

  /**
   * Opens a published data object, as `Backend.openObjectAs` does. `NOT_FOUND` (also when not
   * published), `IS_A_COLLECTION`, and what `plan` throws.
   */
  async open(path: Path, plan?: (object: DataObject) => ReadPlan): Promise<{ object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null }> {
    return this.#hidden(path, () => this.#o.backend.openObjectAs(this.#o.backend.anonymousActor(), path, plan));
  }

  /**
   * The members of a published collection, for an archive of it (see `Backend.walkAs`).
   * `NOT_FOUND` (also when not published), `NOT_A_COLLECTION`.
   */
  async walk(path: Path): Promise<CollectionWalk> {
    return this.#hidden(path, () => this.#o.backend.walkAs(this.#o.backend.anonymousActor(), path));
  }

  /**
   * The entity the PID `handle` names, for its landing page, or null when none here carries
   * it: the entity at the first of `candidates` (the paths its record's URL names) whose `PID`
   * is `handle`, else the entity whose stable id is the handle's suffix, if it carries `handle`.
   * A PID's record is public, so its entity's name, size, checksum, dates and owner are shown
   * to anyone; `viewer` decides only `viewerMayRead`.
   */
  async pidSubject(handle: string, candidates: readonly Path[], viewer: Actor): Promise<PidSubject | null> {
    let entity: Entity | null = null;
    for (const path of candidates) {
      const found = await this.#o.catalog.getEntity(path);
      if (found?.pid === handle) {
        entity = found;
        break;
      }
    }
    if (!entity) {
      const byId = await this.#o.catalog.getEntityById(handle.slice(handle.indexOf('/') + 1));
      if (byId?.pid === handle) entity = byId;
    }
    if (!entity) return null;
    const published = (await this.#o.backend.levelOf(this.#o.backend.anonymousActor(), entity.path)) !== null;
    const viewerMayRead = published || (await this.#o.backend.levelOf(viewer, entity.path)) !== null;
    return { entity, published, viewerMayRead };
  }

  async #change(actor: Actor, path: Path, change: 'publish' | 'unpublish'): Promise<PublicationState> {
    await this.#o.backend.require(actor, path, 'own');
    const entity = await this.#mustExist(path);
    if (change === 'unpublish') {
      const before = await this.#state(path);
      if (before.via !== null && before.via !== path) {
        throw new LadingError('CONFLICT', `'${path}' is published through the collection '${before.via}'; unpublish that collection.`);
      }
    }
    const input = { path, principal: ANONYMOUS, actor: actor.user, now: this.#o.clock.now(), jobs: this.#o.jobs };
    const { changed, jobIds } = change === 'publish' ? await this.#o.catalog.publish(input) : await this.#o.catalog.unpublish(input);
    if (changed) {
      this.#o.audit.info(
        { audit: change, user: actor.user, path, entity: entity.id, kind: entity.kind, at: input.now.toISOString() },
        `${actor.user} ${change}ed ${path}`,
      );
    }
    if (jobIds.length > 0) this.#o.onJobs?.();
    return this.#state(path);
  }

  async #state(path: Path): Promise<PublicationState> {
    const none: PublicationState = { path, published: false, via: null, publishedAt: null, publishedBy: null };
    if ((await this.#o.catalog.accessLevel(path, [ANONYMOUS])) === null) return none;
    let via: Path | null = null;
    for (const candidate of lineage(path).reverse()) {
      if (await this.#publishedItself(candidate)) {
        via = candidate;
        break;
      }
    }
    if (via === null) return none;
    const covering = await this.#o.catalog.getEntity(via);
    const last = covering ? (await this.#o.catalog.publicationEvents(covering.id, 1))[0] : undefined;
    const recorded = last?.action === 'published' ? last : undefined;
    return { path, published: true, via, publishedAt: recorded?.at ?? null, publishedBy: recorded?.actor ?? null };
  }

  async #publishedItself(path: Path): Promise<boolean> {
    return (await this.#o.catalog.listAccess(path)).some((e) => e.principal === ANONYMOUS);
  }

  async #mustExist(path: Path): Promise<Entity> {
    const entity = await this.#o.catalog.getEntity(path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return entity;
  }

  /** Runs a read as `anonymous`, where a refusal is told as absence. */
  async #hidden<T>(path: Path, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (!isLadingError(err, 'FORBIDDEN') && !isLadingError(err, 'NOT_FOUND')) throw err;
      throw new LadingError('NOT_FOUND', `'${path}' does not exist or is not published.`, { cause: err });
    }
  }
}
