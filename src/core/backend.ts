/**
 * The storage backend: the zone namespace, permissions and the upload/download use cases, on
 * top of the `Catalog`, `Resource` and `Authority` ports. Every operation first has the
 * authority verify the caller's credential; permissions are decided here and nowhere else.
 * Knows nothing of HTTP.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { type AuditVia, type Auditor, noAudit, outcomeOf } from './audit.ts';
import { LadingError, isLadingError } from './errors.ts';
import { Meter, checksumString } from './meter.ts';
import { isReservedAttribute } from './metadata.ts';
import { type Usage, quotaDeltas } from './quotas.ts';
import { type Path, baseName, childOf, isWithin, lineage, parentOf, parseName, parsePath } from './path.ts';
import type { Authority, BackendCredential, ByteRange, Catalog, Clock, Resource, ResourceStream, TrackedBlob } from './ports.ts';
import type { RuleSet } from './rules.ts';
import {
  ACCESS_RANK, type AccessLevel, type Avu, type Collection, type DataObject, type Entity, type EntityMarks, type JobsFor, type PrincipalKind, type UserRecord,
} from './types.ts';

/** How many children a streamed listing reads from the catalog at a time. */
export const LISTING_PAGE = 1000;

/** The group every user belongs to; access granted to it is access granted to all users. */
export const PUBLIC_GROUP = 'public';
/**
 * The principal of a caller who presents no credential at all. Read access granted to it is
 * what publishing an entity means (`/api/public/…`); no user or group can take the name.
 */
export const ANONYMOUS = 'anonymous';
/**
 * Rejects with `BAD_REQUEST` when `level` is `own` for `public`: every signed-in user would hold
 * `own`, could change the access list and so take the entity over. Every writer of access
 * entries asks this first.
 */
export function refusePublicOwn(principal: string, level: AccessLevel | null): void {
  if (principal === PUBLIC_GROUP && level === 'own') {
    throw new LadingError('BAD_REQUEST', `'${PUBLIC_GROUP}' (every signed-in user) cannot be given own: any user could then change the access list and take the entity over. Give own to a user or a group instead.`);
  }
}

/** Owner of the zone's top collections; not a name a user can take. */
export const SYSTEM_OWNER = '_system';

const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** Validates a user or group name; rejects with `BAD_REQUEST`. */
export function parseUserName(name: string): string {
  if (!USER_NAME.test(name) || name === PUBLIC_GROUP || name === ANONYMOUS) {
    throw new LadingError('BAD_REQUEST', `'${name}' is not a valid user name: use 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit ('public' and 'anonymous' are reserved).`);
  }
  return name;
}

export interface BackendOptions {
  catalog: Catalog;
  resource: Resource;
  authority: Authority;
  clock: Clock;
  /** Zone name: the first segment of every path. */
  zone: string;
  /** Largest accepted upload in bytes. */
  maxUploadBytes: number;
  /** Rules whose jobs are enqueued with the changes that match them; none by default. */
  rules?: RuleSet;
  /** Called after a change enqueued jobs (to wake the job worker). */
  onJobs?: () => void;
  /** This node's name, recorded as the owner of the blobs it writes (see `BlobTracker.heartbeat`). */
  node?: string;
  /** What one copy may take at most; a larger one is refused before it starts (`PAYLOAD_TOO_LARGE`). Default `DEFAULT_COPY_LIMITS`. */
  copyLimits?: CopyLimits;
  /** Where each change is recorded (the audit trail); nothing is recorded when absent. */
  trail?: Auditor;
}

/** The bounds of one copy (`Backend.copy`): the bytes of all its data objects, and its entities (collections included). */
export interface CopyLimits {
  bytes: number;
  entries: number;
}

export const DEFAULT_COPY_LIMITS: CopyLimits = { bytes: 1024 ** 4, entries: 100_000 };

/** How many data objects of a collection a copy copies at once. */
const COPY_CONCURRENCY = 8;

/** Where `move` and `copy` put an entity: into the collection `into`, under `name` (by default its own). */
export interface PlaceOptions {
  into: Path;
  name?: string;
  /** Replace a data object standing at the target (never a collection). */
  overwrite: boolean;
}

/**
 * What start-up recovery and the sweeper may remove. A tracked blob with an owner is removed
 * only when `deadBefore` is given and its owner has not beaten since then (a node that beats
 * is alive, however old its write); without an owner, or without `deadBefore` (a catalog one
 * process owns), when it was tracked before `staleBefore`.
 */
export interface RecoveryCutoff {
  staleBefore: Date;
  deadBefore?: Date;
}

/** Whether `blob` is abandoned under `cutoff` (see `RecoveryCutoff`). */
export function isAbandoned(blob: TrackedBlob, cutoff: RecoveryCutoff): boolean {
  if (blob.owner === null || cutoff.deadBefore === undefined) return blob.trackedAt.getTime() < cutoff.staleBefore.getTime();
  return blob.ownerSeenAt === null || blob.ownerSeenAt.getTime() < cutoff.deadBefore.getTime();
}

// NOTE: a date after every blob's, to ask the catalog for all of them.
const END_OF_TIME = new Date(8.64e15);

export interface UploadOptions {
  /**
   * Replace an existing data object. A promise when the caller learns it only while the body
   * streams (a form field after the file): it is awaited before the commit, and an existing
   * object is then refused only at the commit, after the body.
   */
  overwrite: boolean | Promise<boolean>;
  /** Digests the client announced; a mismatch rejects with `DIGEST_MISMATCH` and stores nothing. */
  expected?: { sha256?: Buffer; md5?: Buffer };
  /**
   * Compute the MD5 of the bytes as they stream (beside the SHA-256) and record it as the
   * object's entity tag (`DataObject.etag`), for the fronts whose clients check one. Off by
   * default: the hash costs time the API's clients do not need.
   */
  md5?: boolean;
  /**
   * Check these before reading the body, and call it with the computed digests once the body
   * has ended, before the commit: a rejection stores nothing (a front's own checksums).
   */
  verify?: (digests: { size: number; sha256: Buffer; md5: Buffer | null }) => void;
  /** User metadata (AVUs) the object gets in its commit's transaction; refused when reserved (`BAD_REQUEST`). */
  meta?: readonly Avu[];
  /** The entity tag to record (a multipart upload's); wins over `md5`'s. */
  etag?: string;
  /**
   * The size the request announced (`Content-Length`), to refuse before reading the body a
   * write the quotas would refuse at its commit (`QUOTA_EXCEEDED`); the commit checks anyway.
   */
  declaredSize?: number;
  /** Attributes whose AVUs an overwritten object loses before `meta` is added (see `commitObject`). */
  replaceMeta?: readonly string[];
}

/**
 * The members of a collection, for writing an archive of it (see `Backend.walkAs`).
 */
export interface CollectionWalk {
  collection: Collection;
  /**
   * Every entity strictly below the collection (whose path sorts after `after`, when given), in byte order of their paths, read from the
   * catalog `LISTING_PAGE` at a time (memory stays flat however many there are). Pages read
   * one after another see the tree as each page's read found it.
   */
  entries(after?: string): AsyncGenerator<Entity>;
  /**
   * Opens the bytes of a data object `entries` yielded, the version that was listed; when
   * those contents have been replaced and removed since, the version now at its path. The
   * stream is exactly `object`'s bytes: size and checksum are those of the returned `object`.
   * `FORBIDDEN` (read access was taken away), `NOT_FOUND` (removed meanwhile).
   */
  open(object: DataObject): Promise<{ object: DataObject; stream: ResourceStream }>;
}

/** An entity of a listing, with its marks when they were asked for and the caller owns it. */
export type Listed = Entity & { marks?: EntityMarks };

export interface ListingOptions {
  /** Give each entity its marks (`NamespaceStore.marksOf`) when the caller holds own on the collection; one more catalog read a page. */
  marks?: boolean;
}

const NO_MARKS: EntityMarks = Object.freeze({ published: false, shared: false, links: false });

/** What `openObject`'s caller decides once it knows the object (size, checksum, dates). */
export interface ReadPlan {
  range?: ByteRange;
  /** Do not open the bytes at all (the caller needs only the object's metadata). */
  skipBody?: boolean;
}

/**
 * Who an operation runs as, with every principal whose access it holds. Minted only inside the
 * core: by `actorOf` from a credential the authority verified, by `anonymousActor` for a caller
 * with none, and by `actorFor` for a core service that verified something else (a share link's
 * token) on behalf of the user it names. The HTTP layer passes actors along and never builds one.
 */
export interface Actor {
  readonly user: string;
  readonly principals: readonly string[];
  readonly admin: boolean;
  /** Where the caller came from (door and address), for the audit trail; absent for the core's own work. */
  readonly via?: AuditVia | undefined;
}

export class Backend {
  readonly zone: string;
  readonly #catalog: Catalog;
  readonly #resource: Resource;
  readonly #node: string | null;
  readonly #authority: Authority;
  readonly #clock: Clock;
  readonly #maxUploadBytes: number;
  readonly #jobs: JobsFor | undefined;
  readonly #onJobs: () => void;
  readonly #copyLimits: CopyLimits;
  readonly #trail: Auditor;
  readonly #background = new Set<Promise<void>>();

  constructor(options: BackendOptions) {
    this.zone = parseName(options.zone);
    this.#catalog = options.catalog;
    this.#resource = options.resource;
    this.#node = options.node ?? null;
    this.#authority = options.authority;
    this.#clock = options.clock;
    this.#maxUploadBytes = options.maxUploadBytes;
    this.#jobs = options.rules && options.rules.rules.length > 0 ? options.rules.jobsFor : undefined;
    this.#onJobs = options.onJobs ?? (() => {});
    this.#copyLimits = options.copyLimits ?? DEFAULT_COPY_LIMITS;
    this.#trail = options.trail ?? noAudit;
  }

  get zonePath(): Path {
    return `/${this.zone}` as Path;
  }

  /** The home collection of `user`: `/<zone>/home/<user>`. */
  homeOf(user: string): Path {
    return parsePath(`/${this.zone}/home/${user}`);
  }

  /**
   * Creates the zone's top collections (`/`, `/<zone>`, `/<zone>/home`) when missing, and
   * removes what crashed uploads left behind (see `RecoveryCutoff`): temporaries on the
   * resource older than `staleBefore` — never one of a blob a live node is writing — and
   * abandoned blobs the catalog tracks but no object references. Idempotent; run at start.
   */
  async init(cutoff: Date | RecoveryCutoff): Promise<{ swept: number }> {
    const c = cutoff instanceof Date ? { staleBefore: cutoff } : cutoff;
    const now = this.#clock.now();
    for (const path of lineage(parsePath(`/${this.zone}/home`))) {
      if (path === '/') continue;
      await this.#catalog.createCollection({ path, owner: SYSTEM_OWNER, now }).catch((err) => {
        if (!isLadingError(err, 'CONFLICT')) throw err;
      });
    }
    const writing = new Set((await this.#catalog.trackedBlobs(END_OF_TIME)).filter((b) => !isAbandoned(b, c)).map((b) => b.blob));
    // NOTE: the staged bytes of open resumable uploads belong to their upload until it expires.
    for (const blob of await this.#catalog.stagedBlobs()) writing.add(blob);
    const swept = await this.#resource.sweepTemporaries(c.staleBefore, (key) => writing.has(key));
    return { swept: swept + (await this.sweep(c)) };
  }

  /**
   * Deletes the blobs the catalog tracks since before `before` and no object references:
   * leftovers of interrupted uploads, and replaced contents kept for readers still streaming
   * them. Returns how many. Idempotent; safe while uploads run (a blob tracked for a write in
   * progress has no stored object yet, and its write still cleans up after itself).
   */
  async sweep(cutoff: Date | RecoveryCutoff): Promise<number> {
    const c = cutoff instanceof Date ? { staleBefore: cutoff } : cutoff;
    let swept = 0;
    // NOTE: owned blobs are judged by their owner's heartbeat, not their age, so all of them
    // are looked at when a heartbeat cut-off is given.
    for (const tracked of await this.#catalog.trackedBlobs(c.deadBefore ? END_OF_TIME : c.staleBefore)) {
      if (!isAbandoned(tracked, c)) continue;
      await this.#resource.delete(tracked.blob);
      await this.#catalog.untrackBlob(tracked.blob);
      swept++;
    }
    return swept;
  }

  /**
   * Creates a user (or admin, or group) and, for users and admins, the home collection, owned
   * by them. `CONFLICT` when the name is taken; `BAD_REQUEST` for an invalid name.
   */
  async addUser(name: string, options: { kind?: PrincipalKind; passwordHash?: string | null } = {}): Promise<void> {
    parseUserName(name);
    const now = this.#clock.now();
    const kind = options.kind ?? 'user';
    await this.#catalog.createUser({ name, kind, passwordHash: options.passwordHash ?? null, createdAt: now });
    if (kind !== 'group') {
      await this.#catalog.createCollection({ path: this.homeOf(name), owner: name, now }).catch((err) => {
        if (!isLadingError(err, 'CONFLICT')) throw err;
      });
    }
  }

  /** The backend user a credential belongs to. `PROXY_EXPIRED`, `INVALID_CREDENTIAL`. */
  async whoami(cred: BackendCredential): Promise<string> {
    return (await this.#actor(cred)).user;
  }

  /**
   * The actor a credential stands for, after the authority verified it: the user, the
   * `public` group, the user's groups. `PROXY_EXPIRED`, `INVALID_CREDENTIAL`.
   */
  actorOf(cred: BackendCredential, via?: AuditVia): Promise<Actor> {
    return this.#actor(cred, via);
  }

  /** The actor of a caller without a credential: it holds only what is granted to `anonymous`. */
  anonymousActor(via?: AuditVia): Actor {
    return { user: ANONYMOUS, principals: [ANONYMOUS], admin: false, ...(via ? { via } : {}) };
  }

  /**
   * The actor of `user`, for a core service that verified a claim other than a credential (a
   * share link) made on that user's behalf. Never an admin's powers: the actor holds what the
   * user, `public` and the user's groups are granted. Rejects with `INVALID_CREDENTIAL` when
   * the user is gone, is a group or is disabled.
   */
  async actorFor(user: string, via?: AuditVia): Promise<Actor> {
    const record = await this.#catalog.getUser(user);
    if (!record || record.kind === 'group' || record.disabled) throw new LadingError('INVALID_CREDENTIAL', `The account '${user}' no longer exists or is disabled.`);
    return { user, principals: [user, PUBLIC_GROUP, ...(await this.#catalog.groupsOf(user))], admin: false, ...(via ? { via } : {}) };
  }

  /**
   * Rejects with `FORBIDDEN` unless `actor` holds `level` on `path` (or on a collection above
   * it); an admin holds every level.
   */
  async require(actor: Actor, path: Path, level: AccessLevel): Promise<void> {
    return this.#require(actor, path, level);
  }

  /**
   * The highest level `actor` holds on `path`, or null; `own` for an admin, and for a user in
   * their own home (see `#ownsAsHome`).
   */
  async levelOf(actor: Actor, path: Path): Promise<AccessLevel | null> {
    if (actor.admin || this.#ownsAsHome(actor, path)) return 'own';
    return this.#catalog.accessLevel(path, actor.principals);
  }

  /**
   * The entity at `path`. Rejects with `FORBIDDEN` when the caller may not read it (whether or
   * not it exists, so existence does not leak) and `NOT_FOUND` when it does not exist.
   */
  async stat(cred: BackendCredential, path: Path): Promise<Entity> {
    const { level, entity } = await this.#actorAt(cred, path);
    refuseBelow(level, 'read', path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return entity;
  }

  /** `stat` as `actor`. */
  async statAs(actor: Actor, path: Path): Promise<Entity> {
    await this.#require(actor, path, 'read');
    return this.#mustExist(path);
  }

  /** The children of a collection. `FORBIDDEN`, `NOT_FOUND`, `NOT_A_COLLECTION`. */
  async list(cred: BackendCredential, path: Path): Promise<{ collection: Collection; children: Entity[] }> {
    return this.listAs(await this.#actor(cred), path);
  }

  /** `list` as `actor`. */
  async listAs(actor: Actor, path: Path): Promise<{ collection: Collection; children: Entity[] }> {
    await this.#require(actor, path, 'read');
    const entity = await this.#mustExist(path);
    if (entity.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object, not a collection.`);
    return { collection: entity, children: await this.#catalog.listChildren(path) };
  }

  /**
   * The children of a collection as a stream, for listings of any size: read access and the
   * collection are checked here, once; `entries` then yields the children whose names sort after
   * `after` (all when null), in byte order, reading `LISTING_PAGE` of them from the catalog at a
   * time, so memory stays flat however many there are. `FORBIDDEN`, `NOT_FOUND`,
   * `NOT_A_COLLECTION`.
   */
  async listing(cred: BackendCredential, path: Path, after: string | null = null, options: ListingOptions = {}): Promise<{ collection: Collection; entries: AsyncGenerator<Listed> }> {
    return this.listingAs(await this.#actor(cred), path, after, options);
  }

  /** `listing` as `actor`. */
  async listingAs(actor: Actor, path: Path, after: string | null = null, options: ListingOptions = {}): Promise<{ collection: Collection; entries: AsyncGenerator<Listed> }> {
    await this.#require(actor, path, 'read');
    const entity = await this.#mustExist(path);
    if (entity.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object, not a collection.`);
    const catalog = this.#catalog;
    // NOTE: who else may read an entity is its owners' business: marks go to those holding own.
    const marked = options.marks === true && (await this.levelOf(actor, path)) === 'own';
    const now = this.#clock.now();
    async function* entries(): AsyncGenerator<Listed> {
      let from = after;
      for (;;) {
        const page: Listed[] = await catalog.listChildrenAfter(path, from, LISTING_PAGE);
        if (marked && page.length > 0) {
          const marks = await catalog.marksOf(page.map((e) => e.id), { anonymous: ANONYMOUS, now });
          for (const e of page) e.marks = marks.get(e.id) ?? NO_MARKS;
        }
        yield* page;
        if (page.length < LISTING_PAGE) return;
        from = page.at(-1)!.name;
      }
    }
    return { collection: entity, entries: entries() };
  }

  /**
   * Everything below the collection at `path`, for an archive of it. Read access is checked
   * here, and again as each object is opened (access may be taken away while an archive is
   * written). `FORBIDDEN`, `NOT_FOUND`, `NOT_A_COLLECTION`. See `CollectionWalk`.
   */
  async walkAs(actor: Actor, path: Path): Promise<CollectionWalk> {
    await this.#require(actor, path, 'read');
    const collection = await this.#mustExist(path);
    if (collection.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object, not a collection.`);
    const catalog = this.#catalog;
    return {
      collection,
      async *entries(from?: string) {
        // NOTE: a bound, not a path (it need not name an entity): compared only.
        let after = from as Path | undefined;
        for (;;) {
          const page = await catalog.listDescendants(path, LISTING_PAGE, after);
          yield* page;
          if (page.length < LISTING_PAGE) return;
          after = page.at(-1)!.path;
        }
      },
      open: async (listed) => {
        if (!isWithin(listed.path, path)) throw new LadingError('NOT_FOUND', `'${listed.path}' is not in '${path}'.`);
        await this.#require(actor, listed.path, 'read');
        let object = listed;
        for (let attempt = 0; ; attempt++) {
          refuseDamaged(object);
          try {
            return { object, stream: await this.#resource.read(object.blob) };
          } catch (err) {
            if (!isLadingError(err, 'NOT_FOUND') || attempt >= 3) throw err;
          }
          // NOTE: the listed contents were replaced and removed meanwhile: the member becomes
          // the current version, whole, with its own size and checksum.
          const now = await this.#catalog.getEntity(listed.path);
          if (now?.kind !== 'dataobject') throw new LadingError('NOT_FOUND', `'${listed.path}' was removed while it was being read.`);
          object = now;
        }
      },
    };
  }

  /**
   * Opens a data object for reading. `plan` sees the object first and picks a range (or throws,
   * e.g. `RANGE_NOT_SATISFIABLE`) or skips the body. When a concurrent overwrite replaces the
   * bytes between lookup and open, the lookup is repeated, so the stream always matches the
   * returned object. `FORBIDDEN`, `NOT_FOUND`, `IS_A_COLLECTION`, `OBJECT_DAMAGED` (a fixity
   * check marked it: see `core/fixity.ts`; refused before `plan` is asked, HEAD included).
   */
  async openObject(
    cred: BackendCredential, path: Path, plan: (object: DataObject) => ReadPlan = () => ({}),
  ): Promise<{ object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null }> {
    const { level, entity } = await this.#actorAt(cred, path);
    refuseBelow(level, 'read', path);
    return this.#open(path, plan, entity);
  }

  /** `openObject` as `actor`. */
  async openObjectAs(
    actor: Actor, path: Path, plan: (object: DataObject) => ReadPlan = () => ({}),
  ): Promise<{ object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null }> {
    await this.#require(actor, path, 'read');
    return this.#open(path, plan);
  }

  /** `openObjectAs` once read access is established; `found` is the entity just read at `path`, if it was. */
  async #open(
    path: Path, plan: (object: DataObject) => ReadPlan, found?: Entity | null,
  ): Promise<{ object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null }> {
    for (let attempt = 0; ; attempt++) {
      const entity = attempt === 0 && found !== undefined ? found : await this.#catalog.getEntity(path);
      if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
      if (entity.kind !== 'dataobject') throw new LadingError('IS_A_COLLECTION', `'${path}' is a collection; only data objects can be downloaded.`);
      refuseDamaged(entity);
      const { range, skipBody } = plan(entity);
      if (skipBody) return { object: entity, range, stream: null };
      try {
        return { object: entity, range, stream: await this.#resource.read(entity.blob, range) };
      } catch (err) {
        if (!isLadingError(err, 'NOT_FOUND') || attempt >= 3) throw err;
      }
    }
  }

  /**
   * Streams `source` into a new data object at `path` (or over the existing one with
   * `overwrite`). The bytes go to a fresh blob while being hashed; the object becomes visible
   * only when the catalog commit succeeds, so a failure at any point — client gone, limit
   * crossed, digest mismatch, full disk, crash — leaves the previous state. Concurrent readers
   * of an overwritten object see the whole old or the whole new content.
   * Rejects with `FORBIDDEN`, `CONFLICT` (exists without `overwrite`, or is a collection),
   * `NOT_FOUND` (no parent), `NOT_A_COLLECTION`, `PAYLOAD_TOO_LARGE`, `DIGEST_MISMATCH`,
   * `INCOMPLETE_BODY`, `STORAGE_FULL`.
   */
  async upload(cred: BackendCredential, path: Path, source: Readable, options: UploadOptions, via?: AuditVia): Promise<{ object: DataObject; jobIds: string[] }> {
    const { actor, level, entity, parentKind } = await this.#actorAt(cred, path, true, via);
    return this.#trackedUpload(actor, path, source, options, async () => {
      // NOTE: nothing at `path` has no access list of its own: the level on it is its parent's.
      refuseUploadTarget(path, options.overwrite !== false, level, entity, parentKind);
      const size = options.declaredSize;
      if (size !== undefined) await this.checkQuota(path, { bytes: size - (entity?.kind === 'dataobject' ? entity.size : 0), objects: entity ? 0 : 1 });
    });
  }

  /** `upload` as `actor`; the new object is owned by `actor.user`. Recorded as `upload` or `overwrite`. */
  async uploadAs(actor: Actor, path: Path, source: Readable, options: UploadOptions): Promise<{ object: DataObject; jobIds: string[] }> {
    return this.#trackedUpload(actor, path, source, options, () => this.checkUploadTarget(actor, path, options.overwrite !== false, options.declaredSize));
  }

  /** An upload recorded in the audit trail, refused first by `check` as its commit would refuse it. */
  async #trackedUpload(actor: Actor, path: Path, source: Readable, options: UploadOptions, check: () => Promise<void>): Promise<{ object: DataObject; jobIds: string[] }> {
    let replaced = false;
    return this.#trail.track(actor, () => (replaced ? 'overwrite' : 'upload'), path, async () => {
      const outcome = await this.#uploadAs(actor, path, source, options, check);
      replaced = outcome.replaced;
      return outcome;
    }, ({ object }) => ({ size: object.size }));
  }

  async #uploadAs(actor: Actor, path: Path, source: Readable, options: UploadOptions, check: () => Promise<void>): Promise<{ object: DataObject; jobIds: string[]; replaced: boolean }> {
    // Refuse before reading the body what would be refused at commit anyway.
    await check();

    const blob = randomUUID();
    // NOTE: the blob must be tracked (durably) before it can appear under its key, or a crash
    // between that and the commit would leave it stored and unknown to the sweeper. The
    // resource starts the tracking when it begins to store bytes and publishes them only once
    // it is done, so the catalog's flush overlaps the body and the flush of its bytes instead
    // of preceding them. A small object kept for the catalog's commit stores nothing before
    // it, so it is never tracked: its upload spares a transaction and a flush of the log.
    let tracked = null as Promise<void> | null;
    const track = (): Promise<void> => (tracked ??= this.#catalog.trackBlob(blob, this.#clock.now(), this.#node));
    for (const avu of options.meta ?? []) {
      if (isReservedAttribute(avu.attribute)) throw new LadingError('BAD_REQUEST', `The attribute '${avu.attribute}' is reserved.`);
    }
    const meter = new Meter({ limit: this.#maxUploadBytes, md5: options.expected?.md5 !== undefined || options.md5 === true });
    const detach = feed(source, meter);
    try {
      await this.#resource.write(blob, meter, { publishAfter: track });
      const { size, sha256, md5 } = meter.result;
      const expected = options.expected;
      if (expected?.sha256 && !expected.sha256.equals(sha256)) {
        throw new LadingError('DIGEST_MISMATCH', `The content's SHA-256 digest (${sha256.toString('base64')}) does not match the one the request announced (${expected.sha256.toString('base64')}); nothing was stored.`);
      }
      if (expected?.md5 && md5 && !expected.md5.equals(md5)) {
        throw new LadingError('DIGEST_MISMATCH', `The content's MD5 digest (${md5.toString('base64')}) does not match the one the request announced (${expected.md5.toString('base64')}); nothing was stored.`);
      }
      options.verify?.({ size, sha256, md5 });
      const { object, replacedBlob, jobIds } = await this.#catalog.commitObject({
        path, owner: actor.user, size, checksum: checksumString(sha256), blob, now: this.#clock.now(),
        overwrite: await options.overwrite, jobs: this.#jobs, fenced: true,
        ...(options.meta && options.meta.length > 0 ? { meta: options.meta } : {}),
        ...(options.replaceMeta && options.replaceMeta.length > 0 ? { replaceMeta: options.replaceMeta } : {}),
        ...(options.etag !== undefined ? { etag: options.etag } : options.md5 === true && md5 ? { etag: md5.toString('hex') } : {}),
      });
      if (jobIds.length > 0) this.#onJobs();
      // NOTE: the commit left the replaced blob tracked; where deleting it now could cut a
      // download of the old content short, `sweep` deletes it after the grace period instead.
      // Deleting a large file takes milliseconds the answer need not wait for: until it is
      // gone the blob stays tracked, so a crash meanwhile leaves it to the sweeper.
      if (replacedBlob && this.#resource.capabilities.deleteSparesOpenReads) this.#inBackground(this.#discard(replacedBlob));
      return { object, jobIds, replaced: replacedBlob !== null };
    } catch (err) {
      detach();
      meter.destroy();
      // NOTE: untracking before the tracking has settled could leave the row behind.
      await tracked?.catch(() => {});
      // NOTE: a commit whose answer was lost may have made the object visible with these
      // bytes: they stay, tracked, for the sweeper to judge once this node is gone.
      if (!isLadingError(err, 'UNAVAILABLE') || err.details.maybeCommitted !== true) await this.#discard(blob);
      throw err;
    }
  }

  /**
   * Refuses what a commit of a new data object at `path` by `actor` would refuse, before any
   * byte is read: `FORBIDDEN` (no write access), `CONFLICT` (a collection, or an object
   * without `overwrite`), `NOT_FOUND` (no parent), `NOT_A_COLLECTION`; with `size`, the size
   * the object will have, `QUOTA_EXCEEDED` when the quotas would refuse it now.
   */
  async checkUploadTarget(actor: Actor, path: Path, overwrite: boolean, size?: number): Promise<void> {
    const existing = await this.#catalog.getEntity(path);
    // NOTE: nothing at `path` has no access list of its own, so its access is its parent's,
    // which every upload into the same collection reads and the catalog can remember.
    await this.#require(actor, path, 'write', existing ? path : parentOf(path));
    if (existing?.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
    if (existing && !overwrite) throw new LadingError('CONFLICT', `'${path}' already exists.`);
    await this.#mustBeCollection(parentOf(path));
    if (size !== undefined) await this.checkQuota(path, { bytes: size - (existing?.kind === 'dataobject' ? existing.size : 0), objects: existing ? 0 : 1 });
  }

  /**
   * Refuses with `QUOTA_EXCEEDED` a write that would add `needs` at `path`, when the quotas at
   * and above it would refuse it now. A fast answer before any byte is read, not a promise:
   * racing writers may all pass it; the commit's own check, in its transaction, is the one
   * that holds.
   */
  async checkQuota(path: Path, needs: Usage): Promise<void> {
    const quotas = await this.#catalog.quotasCovering(path);
    if (quotas.length > 0) quotaDeltas(quotas, [{ removed: null, added: path, amount: needs }]);
  }

  /**
   * Makes visible at `path` a data object whose bytes a resumable upload already stored under
   * `blob`, with their known size and `sha2:` checksum, as `uploadAs` does for a streamed
   * body: the same rules and jobs, owned by `actor.user`, the replaced blob discarded, and the
   * upload marked complete in the same catalog transaction (lease-fenced: see
   * `NamespaceStore.commitObject`). Rejects with `FORBIDDEN`, `CONFLICT` (exists without
   * `overwrite`, is a collection, or the upload is no longer held), `NOT_FOUND`,
   * `NOT_A_COLLECTION`. On failure `blob` is left to the upload.
   */
  async commitStagedAs(actor: Actor, input: {
    path: Path; blob: string; size: number; checksum: string; overwrite: boolean; upload: { id: string; holder: string; expiresAt: Date };
  }): Promise<{ object: DataObject; jobIds: string[] }> {
    let replaced = false;
    return this.#trail.track(actor, () => (replaced ? 'overwrite' : 'upload'), input.path, async () => {
      await this.#require(actor, input.path, 'write');
      const { object, replacedBlob, jobIds } = await this.#catalog.commitObject({
        path: input.path, owner: actor.user, size: input.size, checksum: input.checksum, blob: input.blob, now: this.#clock.now(),
        overwrite: input.overwrite, jobs: this.#jobs, upload: input.upload,
      });
      replaced = replacedBlob !== null;
      if (jobIds.length > 0) this.#onJobs();
      if (replacedBlob && this.#resource.capabilities.deleteSparesOpenReads) this.#inBackground(this.#discard(replacedBlob));
      return { object, jobIds };
    }, ({ object }) => ({ size: object.size }), { staged: true });
  }

  /**
   * Creates a collection. With `parents`, missing collections above it are created too and an
   * existing collection at `path` is returned as is (like `mkdir -p`). Rejects with
   * `FORBIDDEN`, `CONFLICT` (exists, or a data object is in the way), `NOT_FOUND` (no parent,
   * without `parents`), `NOT_A_COLLECTION`.
   */
  async createCollection(cred: BackendCredential, path: Path, options: { parents: boolean }, via?: AuditVia): Promise<Collection> {
    return this.createCollectionAs(await this.#actor(cred, via), path, options);
  }

  /**
   * `createCollection` as `actor`. Recorded as `mkdir` when it created a collection or failed
   * (not when `parents` found every collection there already).
   */
  async createCollectionAs(actor: Actor, path: Path, options: { parents: boolean }): Promise<Collection> {
    let created = 0;
    try {
      const collection = await this.#createCollectionAs(actor, path, options, () => created++);
      if (created > 0) await this.#trail.record(actor, 'mkdir', path, 'ok', options.parents ? { parents: true } : {});
      return collection;
    } catch (err) {
      await this.#trail.record(actor, 'mkdir', path, outcomeOf(err), { error: isLadingError(err) ? err.code : 'INTERNAL' });
      throw err;
    }
  }

  async #createCollectionAs(actor: Actor, path: Path, options: { parents: boolean }, onCreated: () => void): Promise<Collection> {
    const targets = options.parents ? lineage(path).slice(1) : [path];
    let last: Collection | null = null;
    for (const target of targets) {
      const existing = await this.#catalog.getEntity(target);
      if (existing && options.parents) {
        if (existing.kind !== 'collection') throw new LadingError('CONFLICT', `'${target}' is a data object.`);
        last = existing;
        continue;
      }
      await this.#require(actor, target, 'write');
      try {
        last = await this.#catalog.createCollection({ path: target, owner: actor.user, now: this.#clock.now(), jobs: this.#jobs });
        onCreated();
      } catch (err) {
        // NOTE: with `parents`, a collection another request made meanwhile is as good as
        // one made here (concurrent uploads into a new folder, on one node or several).
        const raced = options.parents && isLadingError(err, 'CONFLICT') ? await this.#catalog.getEntity(target) : null;
        if (raced?.kind !== 'collection') throw err;
        last = raced;
        continue;
      }
      if (this.#jobs) this.#onJobs();
    }
    if (!last) throw new LadingError('CONFLICT', `'${path}' already exists.`);
    return last;
  }

  /**
   * Renames the entity at `path` to `newName` within the same collection; a collection's
   * contents follow. Rejects with `INVALID_PATH` (bad name), `FORBIDDEN`, `NOT_FOUND`,
   * `CONFLICT` (the new name is taken).
   */
  async rename(cred: BackendCredential, path: Path, newName: string, via?: AuditVia): Promise<Entity> {
    return this.renameAs(await this.#actor(cred, via), path, newName);
  }

  /** `rename` as `actor`. Recorded as `rename`. */
  async renameAs(actor: Actor, path: Path, newName: string): Promise<Entity> {
    return this.#trail.track(actor, 'rename', path, () => this.#renameAs(actor, path, newName), (e) => ({ to: e.path }));
  }

  async #renameAs(actor: Actor, path: Path, newName: string): Promise<Entity> {
    const target = childOf(parentOf(path), parseName(newName));
    await this.#require(actor, path, 'write');
    await this.#mustExist(path);
    await this.#require(actor, parentOf(target), 'write');
    if (target === path) return this.#mustExist(path);
    const renamed = await this.#catalog.rename(path, target, this.#clock.now(), this.#jobs);
    if (this.#jobs) this.#onJobs();
    return renamed;
  }

  /**
   * Moves the entity at `path` into the collection `into` (under `name`, by default its own),
   * in one catalog transaction; a collection's whole subtree follows, with access lists,
   * metadata and PIDs, and the rules see a rename (`object.renamed`/`collection.renamed`
   * with the old and new path). Needs write on the entity, on the collection it leaves and on
   * `into` (and on a data object it replaces). Never replaces anything unless `overwrite`, and
   * then only a data object with a data object. Rejects with `BAD_REQUEST` (into itself or
   * below itself), `INVALID_PATH` (bad name), `FORBIDDEN`, `NOT_FOUND`, `NOT_A_COLLECTION`
   * (`into` is a data object), `CONFLICT` (the target exists: a collection, or anything
   * without `overwrite`).
   */
  async move(cred: BackendCredential, path: Path, options: PlaceOptions, via?: AuditVia): Promise<Entity> {
    return this.moveAs(await this.#actor(cred, via), path, options);
  }

  /** `move` as `actor`. Recorded as `move`. */
  async moveAs(actor: Actor, path: Path, options: PlaceOptions): Promise<Entity> {
    return this.#trail.track(actor, 'move', path, () => this.#moveAs(actor, path, options), (e) => ({ to: e.path }), { into: options.into });
  }

  async #moveAs(actor: Actor, path: Path, options: PlaceOptions): Promise<Entity> {
    const { into, overwrite } = options;
    const target = childOf(into, options.name === undefined ? baseName(path) : parseName(options.name));
    await this.#require(actor, path, 'write');
    const entity = await this.#mustExist(path);
    if (isWithin(into, path)) throw new LadingError('BAD_REQUEST', `'${path}' cannot be moved into itself or a collection inside it.`);
    await this.#require(actor, parentOf(path), 'write');
    await this.#require(actor, into, 'write');
    await this.#mustBeCollection(into);
    if (target === path) return entity;
    const existing = await this.#catalog.getEntity(target);
    if (existing) {
      if (!overwrite || existing.kind === 'collection' || entity.kind === 'collection') throw new LadingError('CONFLICT', `'${target}' already exists.`);
      await this.#require(actor, target, 'write');
    }
    const { entity: moved, replacedBlob } = await this.#catalog.move({ from: path, to: target, now: this.#clock.now(), overwrite, jobs: this.#jobs });
    if (this.#jobs) this.#onJobs();
    if (replacedBlob && this.#resource.capabilities.deleteSparesOpenReads) this.#inBackground(this.#discard(replacedBlob));
    return moved;
  }

  /**
   * Copies the entity at `path` into the collection `into` (under `name`, by default its
   * own). A data object's bytes are copied by the resource itself where it can
   * (`Resource.copy`), else streamed; its checksum is reused, its metadata copied except the
   * attributes the rules own (`PID`, `EUDAT/…`), and it commits like an upload: owned by the
   * caller, invisible until durable, an `object.created` event (so rules give it a PID of its
   * own). A collection is copied whole, walked in pages: its collections are created, then
   * its data objects copied, each committed on its own, so a copy that fails midway leaves
   * the entities copied so far (and answers the error). Access lists are not copied: copies
   * inherit the destination's. The source's bytes and entities must stay within the copy
   * limits, checked before anything is copied. Needs read on the entity and write on `into`
   * (and on a data object it replaces). Rejects with `BAD_REQUEST` (a collection into itself,
   * an object onto itself), `INVALID_PATH`, `FORBIDDEN`, `NOT_FOUND`, `NOT_A_COLLECTION`,
   * `CONFLICT` (the target exists: a collection, or anything without `overwrite`, or anything
   * for a collection's copy), `PAYLOAD_TOO_LARGE` (over a copy limit), `STORAGE_FULL`.
   */
  async copy(cred: BackendCredential, path: Path, options: PlaceOptions, via?: AuditVia): Promise<{ entity: Entity; jobIds: string[] }> {
    return this.copyAs(await this.#actor(cred, via), path, options);
  }

  /** `copy` as `actor`; the copies are owned by `actor.user`. Recorded as `copy`. */
  async copyAs(actor: Actor, path: Path, options: PlaceOptions): Promise<{ entity: Entity; jobIds: string[] }> {
    return this.#trail.track(actor, 'copy', path, () => this.#copyAs(actor, path, options), ({ entity }) => ({ to: entity.path }), { into: options.into });
  }

  async #copyAs(actor: Actor, path: Path, options: PlaceOptions): Promise<{ entity: Entity; jobIds: string[] }> {
    const { into, overwrite } = options;
    const target = childOf(into, options.name === undefined ? baseName(path) : parseName(options.name));
    const source = await this.statAs(actor, path);
    if (source.kind === 'collection' && isWithin(into, path)) throw new LadingError('BAD_REQUEST', `'${path}' cannot be copied into itself or a collection inside it.`);
    if (target === path) throw new LadingError('BAD_REQUEST', `'${path}' cannot be copied onto itself.`);
    await this.#require(actor, into, 'write');
    await this.#mustBeCollection(into);
    const limits = this.#copyLimits;
    if (source.kind === 'dataobject') {
      if (source.size > limits.bytes) throw copyTooLarge(`${source.size} bytes`, `limits.copy_bytes (${limits.bytes})`);
      await this.checkUploadTarget(actor, target, overwrite, source.size);
      const { object, jobIds } = await this.#copyObject(actor, source, target, overwrite);
      return { entity: object, jobIds };
    }
    if (await this.#catalog.getEntity(target)) throw new LadingError('CONFLICT', `'${target}' already exists.`);
    // NOTE: counted before anything is created, so a copy over the limits leaves nothing.
    let entries = 1;
    let bytes = 0;
    let collections = 0;
    for await (const e of this.#descendants(path)) {
      entries++;
      if (e.kind === 'dataobject') bytes += e.size;
      else collections++;
      if (entries > limits.entries) throw copyTooLarge(`more than ${limits.entries} entities`, `limits.copy_entries (${limits.entries})`);
      if (bytes > limits.bytes) throw copyTooLarge(`more than ${limits.bytes} bytes`, `limits.copy_bytes (${limits.bytes})`);
    }
    // NOTE: a copy the quotas would refuse midway is refused before anything is created.
    await this.checkQuota(target, { bytes, objects: entries - 1 - collections });
    const jobIds: string[] = [];
    const created = await this.#catalog.createCollection({ path: target, owner: actor.user, now: this.#clock.now(), jobs: this.#jobs });
    if (this.#jobs) this.#onJobs();
    const rebase = (p: Path): Path => parsePath(target + p.slice(path.length));
    let objects: DataObject[] = [];
    const flush = async (): Promise<void> => {
      const batch = objects;
      objects = [];
      for (let i = 0; i < batch.length; i += COPY_CONCURRENCY) {
        const outcomes = await Promise.all(batch.slice(i, i + COPY_CONCURRENCY).map((o) => this.#copyObject(actor, o, rebase(o.path), false)));
        for (const o of outcomes) jobIds.push(...o.jobIds);
      }
    };
    // NOTE: in path order a collection comes before what it holds; its data objects wait in
    // `objects` until it exists, and are copied a few at a time.
    for await (const e of this.#descendants(path)) {
      if (e.kind === 'dataobject') {
        objects.push(e);
        if (objects.length >= LISTING_PAGE) await flush();
        continue;
      }
      await flush();
      await this.#catalog.createCollection({ path: rebase(e.path), owner: actor.user, now: this.#clock.now(), jobs: this.#jobs });
    }
    await flush();
    return { entity: created, jobIds };
  }

  /** The entities strictly below `path`, in path order, read `LISTING_PAGE` at a time. */
  async *#descendants(path: Path): AsyncGenerator<Entity> {
    let after: Path | undefined;
    for (;;) {
      const page = await this.#catalog.listDescendants(path, LISTING_PAGE, after);
      yield* page;
      if (page.length < LISTING_PAGE) return;
      after = page.at(-1)!.path;
    }
  }

  /**
   * Copies the data object `source` to `target` (see `copy`): the bytes to a fresh blob,
   * tracked before they can appear, then one commit with the reused checksum and the copied
   * metadata. When the source's bytes were replaced meanwhile, copies its new content.
   */
  async #copyObject(actor: Actor, source: DataObject, target: Path, overwrite: boolean): Promise<{ object: DataObject; jobIds: string[] }> {
    // NOTE: a copy would carry the recorded checksum over other bytes, unmarked.
    refuseDamaged(source);
    const blob = randomUUID();
    let tracked = null as Promise<void> | null;
    const track = (): Promise<void> => (tracked ??= this.#catalog.trackBlob(blob, this.#clock.now(), this.#node));
    try {
      let from = source;
      for (let attempt = 0; ; attempt++) {
        try {
          if (this.#resource.copy) await this.#resource.copy(from.blob, blob, { publishAfter: track });
          else await this.#resource.write(blob, await this.#resource.read(from.blob), { publishAfter: track });
          break;
        } catch (err) {
          if (!isLadingError(err, 'NOT_FOUND') || attempt >= 3) throw err;
          // NOTE: an overwrite replaced the bytes between the lookup and the copy.
          const now = await this.#catalog.getEntity(from.path);
          if (now?.kind !== 'dataobject' || now.id !== from.id) throw err;
          from = now;
        }
      }
      const meta = (await this.#catalog.listMeta(from.path)).filter((avu) => !isReservedAttribute(avu.attribute));
      const { object, replacedBlob, jobIds } = await this.#catalog.commitObject({
        path: target, owner: actor.user, size: from.size, checksum: from.checksum, blob, now: this.#clock.now(),
        overwrite, jobs: this.#jobs, fenced: true, meta, etag: from.etag ?? null,
      });
      if (jobIds.length > 0) this.#onJobs();
      if (replacedBlob && this.#resource.capabilities.deleteSparesOpenReads) this.#inBackground(this.#discard(replacedBlob));
      return { object, jobIds };
    } catch (err) {
      await tracked?.catch(() => {});
      if (!isLadingError(err, 'UNAVAILABLE') || err.details.maybeCommitted !== true) await this.#discard(blob);
      throw err;
    }
  }

  /** Grants (or with null revokes) access; the caller needs `own`. `FORBIDDEN`, `NOT_FOUND`, `BAD_REQUEST` (see `refusePublicOwn`). */
  async setAccess(cred: BackendCredential, path: Path, principal: string, level: AccessLevel | null, via?: AuditVia): Promise<void> {
    const actor = await this.#actor(cred, via);
    await this.#trail.track(actor, 'acl.set', path, async () => {
      await this.#require(actor, path, 'own');
      await this.#mustExist(path);
      refusePublicOwn(principal, level);
      await this.#catalog.setAccess(path, principal, level);
    }, undefined, { principal, level });
  }

  async #actor(cred: BackendCredential, via?: AuditVia): Promise<Actor> {
    const user = await this.#authority.resolve(cred, this.#clock.now());
    const record = await this.#catalog.getUser(user);
    refuseAccount(record);
    const groups = await this.#catalog.groupsOf(user);
    return { user, principals: [user, PUBLIC_GROUP, ...groups], admin: record.kind === 'admin', ...(via ? { via } : {}) };
  }

  /**
   * The actor of `cred`, the level it holds on `path` (as `levelOf` says), the entity at
   * `path` and the kind of its parent, read from the catalog together (`lookup`: one round trip to a shared catalog),
   * for the requests that begin by reading one path. Refuses as `#actor` does.
   */
  async #actorAt(cred: BackendCredential, path: Path, parent = false, via?: AuditVia): Promise<{ actor: Actor; level: AccessLevel | null; entity: Entity | null; parentKind: Entity['kind'] | null }> {
    const now = this.#clock.now();
    const also = [PUBLIC_GROUP];
    const subject = this.#authority.subjectOf ? await this.#authority.subjectOf(cred, now) : null;
    const found = await this.#catalog.lookup(subject === null
      ? { path, user: await this.#authority.resolve(cred, now), also, parent }
      : { path, subject, also, parent });
    if (!found.user && subject !== null) throw new LadingError('INVALID_CREDENTIAL', `The certificate subject '${subject}' is not mapped to a backend user.`);
    refuseAccount(found.user);
    const { name } = found.user;
    const actor: Actor = { user: name, principals: [name, PUBLIC_GROUP, ...found.groups], admin: found.user.kind === 'admin', ...(via ? { via } : {}) };
    const level = actor.admin || this.#ownsAsHome(actor, path) ? 'own' : found.level;
    return { actor, level, entity: found.entity, parentKind: found.parentKind };
  }

  /** Refuses unless `actor` holds `level` on `path`, whose access is that of `from` (by default itself). */
  async #require(actor: Actor, path: Path, level: AccessLevel, from: Path = path): Promise<void> {
    if (actor.admin || this.#ownsAsHome(actor, from)) return;
    refuseBelow(await this.#catalog.accessLevel(from, actor.principals), level, path);
  }

  /**
   * Whether `path` lies in `actor`'s own home, where the user always holds `own`: whatever
   * entries co-owners or an admin change there, the owner of a home is never locked out of it.
   */
  #ownsAsHome(actor: Actor, path: Path): boolean {
    return actor.user !== ANONYMOUS && isWithin(path, this.homeOf(actor.user));
  }

  async #mustExist(path: Path): Promise<Entity> {
    const entity = await this.#catalog.getEntity(path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return entity;
  }

  async #mustBeCollection(path: Path): Promise<void> {
    const entity = await this.#catalog.getEntity(path);
    if (!entity) throw new LadingError('NOT_FOUND', `The collection '${path}' does not exist.`);
    if (entity.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${path}' is a data object, not a collection.`);
  }

  /**
   * Resolves once the work the backend started after answering (deleting replaced contents)
   * has finished; called before the drivers close, and by tests that look at the disk.
   */
  async settled(): Promise<void> {
    while (this.#background.size > 0) await Promise.all(this.#background);
  }

  #inBackground(work: Promise<void>): void {
    this.#background.add(work);
    void work.finally(() => this.#background.delete(work));
  }

  /** Deletes a blob nothing references any more; if that fails the catalog still tracks it for the sweeper. */
  async #discard(blob: string): Promise<void> {
    try {
      await this.#resource.delete(blob);
      await this.#catalog.untrackBlob(blob);
    } catch {
      // NOTE: left tracked on purpose; `init` removes it at the next start.
    }
  }
}

/**
 * Rejects with `OBJECT_DAMAGED` when a fixity check marked `object` damaged (see
 * `core/fixity.ts`): its bytes are missing or not the ones recorded, and are never served.
 */
function refuseDamaged(object: DataObject): void {
  if (!object.damaged) return;
  throw new LadingError('OBJECT_DAMAGED', `The stored bytes of '${object.path}' are damaged (${object.damaged.reason}, found ${object.damaged.at.toISOString()}); they are not served until an operator restores them or the object is uploaded again.`);
}

/**
 * Refuses a credential whose account is gone, is a group or is disabled (`INVALID_CREDENTIAL`):
 * a disabled user is refused at the next request, whatever sessions are still open.
 */
function refuseAccount(record: UserRecord | null): asserts record is UserRecord {
  if (!record || record.kind === 'group') throw new LadingError('INVALID_CREDENTIAL', `The credential names no backend user.`);
  if (record.disabled) throw new LadingError('INVALID_CREDENTIAL', `The account '${record.name}' is disabled.`);
}

/**
 * Refuses what a commit of a new data object at `path` would refuse, given what is there
 * (`existing`), the kind of its parent and the level held on it (see `checkUploadTarget`).
 */
function refuseUploadTarget(path: Path, overwrite: boolean, held: AccessLevel | null, existing: Entity | null, parentKind: Entity['kind'] | null): void {
  refuseBelow(held, 'write', path);
  if (existing?.kind === 'collection') throw new LadingError('CONFLICT', `'${path}' is a collection.`);
  if (existing && !overwrite) throw new LadingError('CONFLICT', `'${path}' already exists.`);
  const parent = parentOf(path);
  if (parentKind === null) throw new LadingError('NOT_FOUND', `The collection '${parent}' does not exist.`);
  if (parentKind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${parent}' is a data object, not a collection.`);
}

/** Refuses with `FORBIDDEN` unless `held` is at least `level`. */
function refuseBelow(held: AccessLevel | null, level: AccessLevel, path: Path): void {
  if (held === null || ACCESS_RANK[held] < ACCESS_RANK[level]) {
    throw new LadingError('FORBIDDEN', `You do not have ${level} access to '${path}'.`);
  }
}

function copyTooLarge(what: string, limit: string): LadingError {
  return new LadingError('PAYLOAD_TOO_LARGE', `The copy would hold ${what}, over ${limit}; nothing was copied.`);
}

/**
 * Pipes `source` into `meter`, turning an early end of the source (client gone, parser error)
 * into an `INCOMPLETE_BODY` error on the meter so the resource write fails. Returns a function
 * that detaches the source without destroying it, so an error reply can still be sent.
 */
function feed(source: Readable, meter: Meter): () => void {
  const fail = (cause?: unknown): void => {
    if (!meter.destroyed) {
      meter.destroy(isLadingError(cause) ? cause : new LadingError('INCOMPLETE_BODY', 'The request body ended before it was complete; nothing was stored.', { cause }));
    }
  };
  const onClose = (): void => {
    if (!source.readableEnded) fail();
  };
  // NOTE: a source that failed before the upload got to it (the client left during the
  // checks, a form refused after its file began) emits nothing more.
  if (source.destroyed && !source.readableEnded) {
    fail(source.errored ?? undefined);
    return () => {};
  }
  source.on('error', fail);
  source.on('close', onClose);
  source.pipe(meter);
  return () => {
    source.off('error', fail);
    source.off('close', onClose);
    source.unpipe(meter);
  };
}

