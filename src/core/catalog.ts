/**
 * The catalog port, as named roles: the namespace (with access control and metadata), accounts,
 * sessions, durable jobs, PID records, blob tracking, the OpenID Connect store, publishing,
 * share links, and the fixity of stored bytes,
 * composed into `Catalog`. Drivers in `src/drivers/catalog/` implement it; the core imports no driver.
 * A method that changes the catalog resolves only once the change is durable (it survives a
 * power cut), so nothing answered from it is ever taken back; only `heartbeat`, `forgetNode`,
 * `untrackBlob` and the `InlineStore`'s `put` and `delete` may resolve earlier.
 */
import type { AuditStore } from './audit.ts';
import type { Path } from './path.ts';
import type { QuotaRecord } from './quotas.ts';
import type { SearchStore } from './search.ts';
import type {
  AccessEntry, AccessLevel, Avu, Collection, DataObject, Entity, EntityMarks, HandleRecord, HandleValues, JobInput,
  DavLock, JobRecord, JobState, JobsFor, PublicationEvent, S3KeyRecord, SessionInput, SessionKind, SessionRecord, ShareRecord, TrashEntry, UserRecord,
} from './types.ts';

/** Whose view of which path `NamespaceStore.lookup` reads: the account by name or by subject DN. */
export type PathLookupInput = {
  path: Path;
  also: readonly string[];
  /** Whether `parentKind` is wanted; a driver may leave it null without (default false). */
  parent?: boolean;
} & ({ user: string; subject?: undefined } | { subject: string; user?: undefined });

/** What `NamespaceStore.lookup` read. */
export interface PathLookup {
  /** The account, or null when there is none by that name or the subject is mapped to none. */
  user: UserRecord | null;
  /** The groups of `user`, sorted as `groupsOf` sorts them; [] without a user. */
  groups: string[];
  /** The highest level `user`, `groups` or `also` hold on the path or above it; null when none, or without a user. */
  level: AccessLevel | null;
  /** The entity at the path, or null. */
  entity: Entity | null;
  /** With `parent`, the kind of the entity at the path's parent (the root's parent is the root), or null when there is none. */
  parentKind: Entity['kind'] | null;
}

/**
 * The namespace: collections and data objects, their access lists and their attribute-value-unit
 * metadata. Every method is atomic on its own. The mutating methods take `jobs`, called inside
 * their transaction with the event they cause, so a change and the jobs it causes commit
 * together (see `JobStore`). Contract: `test/contracts/catalog-namespace-contract.ts`.
 */
export interface NamespaceStore {
  /** The entity at `path`, or null. */
  getEntity(path: Path): Promise<Entity | null>;
  /** The children of the collection at `path`, sorted by name; [] for an empty or missing one. */
  listChildren(path: Path): Promise<Entity[]>;
  /**
   * Up to `limit` children of the collection at `path` whose names sort after `after` in byte
   * order (from the first when null), sorted so; [] past the last or for a missing collection.
   * Pages read one after another see the children as each page's read found them.
   */
  listChildrenAfter(path: Path, after: string | null, limit: number): Promise<Entity[]>;
  /**
   * Creates a collection owned by `owner`, who gets `own` access on it. Rejects with `CONFLICT`
   * when anything exists at `path`, `NOT_FOUND` when the parent is missing, and
   * `NOT_A_COLLECTION` when the parent is a data object.
   */
  createCollection(input: { path: Path; owner: string; now: Date; jobs?: JobsFor }): Promise<Collection>;
  /**
   * Makes a data object visible at `path` whose bytes are already stored under `blob`, in one
   * transaction that also stops tracking `blob` and starts tracking the blob it replaces (so a
   * crash before that one is deleted leaves it to the sweeper). Rejects with `CONFLICT` when an
   * object exists and `overwrite` is false or when `path` is a collection,
   * `NOT_FOUND` when the parent is missing, `NOT_A_COLLECTION` when the parent is a data object.
   * Overwriting keeps the object's owner, access list, metadata and creation time. With
   * `fenced`, `blob` must still be tracked, or have its bytes kept for this commit
   * (`InlineStore.put`, never tracked): when recovery took it for abandoned meanwhile (its
   * writer was silent too long, so its bytes may be gone), rejects with `UNAVAILABLE` and
   * commits nothing. With `upload`, the bytes are those of that resumable upload (see
   * `UploadStore`), which the same transaction marks complete, recording the object and
   * the jobs: it must be open and leased by `upload.holder`, or this rejects with `CONFLICT`
   * and commits nothing. Rejects with `UNAVAILABLE` when the catalog cannot be reached; then
   * nothing was committed, unless `details.maybeCommitted` says the connection was lost while
   * committing (the object may be visible, with `blob` as its bytes).
   */
  commitObject(input: {
    path: Path; owner: string; size: number; checksum: string; blob: string; now: Date; overwrite: boolean; jobs?: JobsFor; fenced?: boolean;
    upload?: { id: string; holder: string; expiresAt: Date };
    /** AVUs added to the object in the same transaction (an existing triple is kept once); none by default. */
    meta?: readonly Avu[];
    /**
     * Attributes whose AVUs an overwritten object loses in the same transaction, before `meta`
     * is added (a front's own attributes that describe the bytes, such as their content type).
     */
    replaceMeta?: readonly string[];
    /** The entity tag of the new bytes (see `DataObject.etag`); null or absent when unknown, which clears an overwritten object's. */
    etag?: string | null;
  }): Promise<{ object: DataObject; replacedBlob: string | null; jobIds: string[] }>;
  /**
   * Moves the entity at `from` (and, for a collection, everything below it) to `to`, keeping
   * access lists and metadata. Rejects with `NOT_FOUND` when `from` or the parent of `to` is
   * missing, and `CONFLICT` when something exists at `to` or `to` lies inside `from`.
   */
  rename(from: Path, to: Path, now: Date, jobs?: JobsFor): Promise<Entity>;
  /**
   * `rename` that may also replace: with `overwrite`, a data object at `to` gives way to the
   * data object moved there, in the same transaction — its row, access list and metadata go,
   * and its blob is tracked (see `BlobTracker`) and returned, for the caller to delete. The
   * event is `rename`'s. Rejects as `rename` does, and with `CONFLICT` when `to` holds a
   * collection, or anything while `overwrite` is false or the entity moved is a collection.
   */
  move(input: { from: Path; to: Path; now: Date; overwrite: boolean; jobs?: JobsFor }): Promise<{ entity: Entity; replacedBlob: string | null }>;
  /** The entity with this stable id, wherever it now is, or null (also when it is trashed: see `trash`). */
  getEntityById(id: string): Promise<Entity | null>;

  /**
   * Takes the entity at `path` (with everything below a collection) out of the namespace, in
   * one transaction: its rows move to the hidden `trashedPathOf(id)` (so no lookup by path,
   * listing, access check or `getEntityById` finds them, and `path` is free), keeping access
   * lists, metadata and PIDs; a trash entry records when, by whom and why; the jobs of an
   * `entity.trashed` event (with the old path) are enqueued. Rejects with `NOT_FOUND` when
   * nothing is at `path`.
   */
  trash(input: { path: Path; actor: string; reason: string | null; now: Date; jobs?: JobsFor }): Promise<TrashEntry>;
  /**
   * Puts the trashed entity `id` back at `to` (whose parent must be a live collection), in one
   * transaction that drops its trash entry and enqueues the jobs of an `entity.restored` event.
   * Never replaces: rejects with `CONFLICT` when something is at `to` or the entry is no longer
   * `trashed` (its bytes are gone), `NOT_FOUND` when there is no such entry or the parent of
   * `to` is missing, `NOT_A_COLLECTION` when the parent is a data object.
   */
  restore(input: { id: string; to: Path; now: Date; jobs?: JobsFor }): Promise<Entity>;
  /** The trash entry of the entity `id` (trashed, purged or taken down), or null. */
  getTrashEntry(id: string): Promise<TrashEntry | null>;
  /**
   * The withdrawn entity `id` — trashed itself, or below a trashed collection — as it is
   * stored (its `path` is a hidden one), with the entry that withdrew it; null when `id` is
   * live or unknown.
   */
  withdrawnEntity(id: string): Promise<{ entity: Entity; entry: TrashEntry } | null>;
  /**
   * Up to `limit` trash entries still `trashed`, trashed by `user` or of entities `user` owns,
   * newest first; with `before`, those trashed before that entry (paging).
   */
  listTrash(input: { user: string; limit: number; before?: { at: Date; id: string } }): Promise<TrashEntry[]>;
  /**
   * Withdraws the bytes of trashed entities for good: the entries given by `ids`, or those
   * trashed before `trashedBefore` (at most `limit`), each still `trashed`, become `state`
   * (with `by`, `reason` and `now`) and the blobs of their data objects are tracked (see
   * `BlobTracker`) and returned for the caller to delete, in one transaction per call; the
   * jobs of an `entity.purged` or `entity.taken_down` event are enqueued for each. Entries no
   * longer `trashed` are left alone, so two nodes never remove the same entry twice.
   */
  removeTrashed(input: {
    ids?: readonly string[]; trashedBefore?: Date; limit: number; state: 'purged' | 'taken_down'; by: string; reason: string | null; now: Date; jobs?: JobsFor;
  }): Promise<{ entries: TrashEntry[]; blobs: string[] }>;
  /**
   * Entities strictly below the collection at `path`, ordered by path, at most `limit`,
   * starting after `afterPath` (for paging through large trees).
   */
  listDescendants(path: Path, limit: number, afterPath?: Path): Promise<Entity[]>;

  /** Sets (or with `null` removes) `principal`'s access level on the entity at `path`. `NOT_FOUND`. */
  setAccess(path: Path, principal: string, level: AccessLevel | null): Promise<void>;
  /** The access list of the entity at `path` itself (not inherited entries). */
  listAccess(path: Path): Promise<AccessEntry[]>;
  /**
   * Up to `limit` entities on which one of `principals` holds an entry of its own (entries
   * inherited from a collection above do not count), sorted by path in byte order, leaving out
   * `except` and everything below it. With `from`, only those whose path sorts after
   * `from.path` (at or after it when `from.inclusive`). [] when `principals` is empty.
   */
  listEntitiesHeldBy(input: {
    principals: readonly string[]; except: Path; from: { path: string; inclusive: boolean } | null; limit: number;
  }): Promise<Entity[]>;
  /**
   * The highest level any of `principals` holds on `path` or on any collection above it
   * (access granted on a collection covers everything inside it), or null.
   */
  accessLevel(path: Path, principals: readonly string[]): Promise<AccessLevel | null>;
  /**
   * How far each entity of `ids` (stable ids) is open to others, from its own access entries and
   * links: `published` when `anonymous` holds an entry, `shared` when a principal other than its
   * owner and `anonymous` does, `links` when a share link on it is live at `now` (not expired,
   * not used up). Only the ids with at least one mark are in the answer; one read for all.
   */
  marksOf(ids: readonly string[], input: { anonymous: string; now: Date }): Promise<Map<string, EntityMarks>>;
  /**
   * What a request on `path` reads before it acts, as of one moment: the account named `user`
   * (or the one `subject`, a certificate subject DN, is mapped to), its groups, the highest
   * level that account, its groups or any of `also` hold on `path` or on a collection above
   * it, the entity at `path` and the kind of its parent. One read where the driver can make it one (a request's
   * round trip to a shared catalog). It decides nothing: the caller refuses a missing,
   * disabled or group account and a level too low, and hides what it may not see.
   */
  lookup(input: PathLookupInput): Promise<PathLookup>;

  /** Adds an AVU to the entity at `path` (no-op when the same triple exists). `NOT_FOUND`. */
  addMeta(path: Path, avu: Avu): Promise<void>;
  /** Removes the AVUs with `attribute` (and `value`, when given) from the entity at `path`. */
  removeMeta(path: Path, attribute: string, value?: string): Promise<void>;
  listMeta(path: Path): Promise<Avu[]>;
}

/**
 * Users, admins and groups, group memberships, and the mapping of certificate subject DNs to
 * users. Contract: `test/contracts/catalog-accounts-contract.ts`.
 */
export interface AccountStore {
  /** Creates a user, admin or group. `CONFLICT` when the name is taken. */
  createUser(user: UserRecord): Promise<void>;
  getUser(name: string): Promise<UserRecord | null>;
  listUsers(): Promise<UserRecord[]>;
  /** Sets (or with null removes) a user's password hash. `NOT_FOUND` when the user is missing. */
  setPasswordHash(name: string, hash: string | null): Promise<void>;
  /** Disables or enables an account. `NOT_FOUND` when the user is missing. Idempotent. */
  setDisabled(name: string, disabled: boolean): Promise<void>;
  /** Adds `user` to `group`; `NOT_FOUND` when either is missing. Idempotent. */
  addToGroup(group: string, user: string): Promise<void>;
  groupsOf(user: string): Promise<string[]>;

  /**
   * Maps a certificate subject DN (`/O=…/CN=…` form) to a backend user, as grid storage maps
   * DNs to accounts. Idempotent; `CONFLICT` when the DN is mapped to another user, `NOT_FOUND`
   * when the user does not exist.
   */
  mapSubject(dn: string, user: string): Promise<void>;
  /** The user a subject DN is mapped to, or null. */
  userForSubject(dn: string): Promise<string | null>;
  /** The subject DNs mapped to `user`, sorted. */
  subjectsOf(user: string): Promise<string[]>;
  /** Removes a DN's mapping. Idempotent. */
  unmapSubject(dn: string): Promise<void>;
}

/**
 * Login sessions of existing users, keyed by the hash of their token, with the credential
 * (sealed proxy) each holds. A session is live until its `expiresAt` and, when it has one, its
 * `idleExpiresAt`; a dead one is found by no lookup. Contract:
 * `test/contracts/catalog-sessions-contract.ts`.
 */
export interface SessionStore {
  /** Stores a session, replacing one with the same token hash; a missing `id` is made up, a missing `kind` is `api`. */
  putSession(session: SessionInput): Promise<void>;
  /** The session with this token hash, or null (also when it is dead at `now`). */
  getSession(tokenHash: string, now: Date): Promise<SessionRecord | null>;
  /**
   * Records that the session was used at `usedAt` and, for a session with an idle deadline,
   * moves that deadline to `idleExpiresAt`; only while it is live at `usedAt` (a session that
   * idled out stays dead). False when there is no such live session.
   */
  touchSession(tokenHash: string, usedAt: Date, idleExpiresAt: Date | null): Promise<boolean>;
  /**
   * Replaces the credential of an existing session; returns false when it is gone. With
   * `expected` given, replaces it only if the stored credential still equals `expected`
   * (compare-and-swap) and returns false otherwise.
   */
  updateSessionCredential(tokenHash: string, credential: string | null, expected?: string | null): Promise<boolean>;
  /** The most recently created session of `user` that is still live at `now`, or null. */
  latestSessionOf(user: string, now: Date): Promise<SessionRecord | null>;
  /** The sessions of `kind` of `user` that are live at `now`, oldest first. */
  listSessionsOf(user: string, kind: SessionKind, now: Date): Promise<SessionRecord[]>;
  deleteSession(tokenHash: string): Promise<void>;
  /** Ends the session of `user` whose public name is `id`; false when `user` has none by that name. */
  deleteSessionById(user: string, id: string): Promise<boolean>;
  /** Ends every session of `user`; returns how many there were. Idempotent. */
  deleteSessionsOf(user: string): Promise<number>;
  /** Removes the sessions dead at `now` (past either deadline); returns how many. */
  deleteExpiredSessions(now: Date): Promise<number>;
}

/** What `JobStore.watchJobs` tells its listener. */
export type JobEvent = { settled: string } | { enqueued: true } | { interrupted: unknown } | { resumed: true };

/**
 * Durable jobs. The mutating methods of `NamespaceStore` take `jobs`, called inside their
 * transaction with the event they cause, so a change and the jobs it causes commit together.
 * Contract: `test/contracts/catalog-jobs-contract.ts`.
 */
export interface JobStore {
  /** Enqueues jobs outside any namespace change; returns their ids. */
  enqueueJobs(jobs: JobInput[], now: Date): Promise<string[]>;
  /**
   * Claims up to `limit` jobs for `worker` until `leaseUntil`: pending jobs due at `now`, and
   * running jobs whose lease has expired (their worker died). Each job goes to one worker.
   */
  claimJobs(worker: string, now: Date, leaseUntil: Date, limit: number): Promise<JobRecord[]>;
  /** Marks a claimed job done; false when `worker` no longer holds it. */
  completeJob(id: string, worker: string, now: Date): Promise<boolean>;
  /** Records a failure: pending again from `retryAt`, or failed for good when `retryAt` is null. */
  failJob(id: string, worker: string, error: string, now: Date, retryAt: Date | null): Promise<boolean>;
  /** Returns running jobs claimed before `before` to pending (for a single-owner catalog at start). */
  releaseJobs(before: Date): Promise<number>;
  getJob(id: string): Promise<JobRecord | null>;
  /**
   * Calls `listener` whenever a job settles (done, or failed for good) or jobs are enqueued —
   * also by other processes sharing this catalog — so waiters and idle workers wake at once.
   * When the channel is lost (the catalog stopped or restarts) it says so once with
   * `interrupted`, keeps trying to get it back for as long as it watches, and says `resumed`
   * when it has: events of the time between are lost, so a listener looks again then.
   * Optional: a catalog only one process uses needs no channel besides the worker's own
   * events. Resolves with a function that stops watching.
   */
  watchJobs?(listener: (event: JobEvent) => void): Promise<() => Promise<void>>;
  /** Jobs, newest first, optionally of one state. */
  listJobs(state: JobState | null, limit: number): Promise<JobRecord[]>;
  /**
   * Removes up to `limit` done jobs that settled before `before` (their `updatedAt`), oldest
   * first; returns how many went. Pending, running and failed jobs stay. A waiter takes a job
   * it cannot find for settled (`JobWorker.waitFor`), so removing one never strands it.
   */
  pruneJobs(before: Date, limit: number): Promise<number>;
  /**
   * How many jobs are pending (due or waiting for a retry), running and failed for good, and
   * when the oldest pending one was enqueued (null for none): the queue as the metrics show it.
   */
  jobQueue(): Promise<JobQueueFigures>;
}

/** The job queue's figures (see `JobStore.jobQueue`). */
export interface JobQueueFigures {
  pending: number;
  running: number;
  failed: number;
  oldestPending: Date | null;
}

/** The records of the embedded handle service. Contract: `test/contracts/catalog-handles-contract.ts`. */
export interface HandleStore {
  /** Creates or replaces a handle record of the embedded handle service. */
  putHandle(handle: string, values: HandleValues, now: Date): Promise<void>;
  getHandle(handle: string): Promise<HandleRecord | null>;
}

/**
 * Publishing: read access granted to the principal that stands for callers without a
 * credential, changed together with a durable record of who changed it and when, and with the
 * jobs the change causes, in one transaction. Contract:
 * `test/contracts/catalog-publications-contract.ts`.
 */
export interface PublicationStore {
  /**
   * Grants `principal` read access on the entity at `path`, records a `published` event by
   * `actor` at `now` and enqueues the jobs `jobs` gives for an `entity.published` event, in
   * one transaction. When `principal` already holds access there, changes nothing and resolves
   * with `changed: false` and no jobs. Rejects with `NOT_FOUND` when nothing is at `path`.
   */
  publish(input: { path: Path; principal: string; actor: string; now: Date; jobs?: JobsFor }): Promise<{ changed: boolean; jobIds: string[] }>;
  /**
   * Removes `principal`'s access on the entity at `path` itself (not on collections above it),
   * records an `unpublished` event and enqueues the jobs of an `entity.unpublished` event, in
   * one transaction. When `principal` holds no access there, changes nothing (`changed:
   * false`). Rejects with `NOT_FOUND` when nothing is at `path`.
   */
  unpublish(input: { path: Path; principal: string; actor: string; now: Date; jobs?: JobsFor }): Promise<{ changed: boolean; jobIds: string[] }>;
  /** The publication events of the entity with the stable id `entityId`, newest first, at most `limit`. */
  publicationEvents(entityId: string, limit: number): Promise<PublicationEvent[]>;
}

/**
 * Blobs written to the resource but referenced by no object, so the sweeper can delete what a
 * crash left behind, and the heartbeats of the nodes writing them, so that a node sweeps only
 * what a dead node left. `NamespaceStore.commitObject` stops and starts tracking in its own
 * transaction (a replaced blob is tracked with no owner). Contract:
 * `test/contracts/catalog-blobs-contract.ts`.
 */
export interface BlobTracker {
  /**
   * Starts tracking a blob that is being written and is not (yet) referenced by any object;
   * `owner` names the node writing it (see `heartbeat`), null for none. No-op when tracked.
   */
  trackBlob(blob: string, now: Date, owner?: string | null): Promise<void>;
  untrackBlob(blob: string): Promise<void>;
  /**
   * Tracked blobs registered before `before` (leftovers of crashed uploads or overwrites, or
   * writes still under way), oldest first, each with its owner and when that owner last beat
   * (null when it has no owner or no heartbeat row). Which are abandoned is the caller's call.
   */
  trackedBlobs(before: Date): Promise<TrackedBlob[]>;
  /** Records that the node `node` is alive at `now`. */
  heartbeat(node: string, now: Date): Promise<void>;
  /** Removes a node's heartbeat (it stopped in order). Idempotent. */
  forgetNode(node: string): Promise<void>;
}

/** A tracked blob, as `BlobTracker.trackedBlobs` reports it. */
export interface TrackedBlob {
  blob: string;
  trackedAt: Date;
  owner: string | null;
  ownerSeenAt: Date | null;
}

/**
 * The OpenID Connect store: expiring records of the embedded provider (its models, keyed by
 * model name as `kind`), the relying party's login state, sealed refresh tokens, and
 * fixed-window counters for rate limits. Payloads are opaque strings. Contract:
 * `test/contracts/catalog-oidc-contract.ts`.
 */
export interface OidcStore {
  /** Stores the record `kind`/`id`, replacing any existing one (and clearing its consumption). */
  oidcPut(kind: string, id: string, record: OidcRecordInput): Promise<void>;
  /** Stores the record only when no live one exists at `now`; returns whether it was stored. */
  oidcInsert(kind: string, id: string, record: OidcRecordInput, now: Date): Promise<boolean>;
  /** The record, or null when missing or expired at `now`. */
  oidcGet(kind: string, id: string, now: Date): Promise<OidcRecord | null>;
  /** The live record of `kind` whose `uid` index is `uid`, or null. */
  oidcGetByUid(kind: string, uid: string, now: Date): Promise<OidcRecord | null>;
  /** The live record of `kind` whose `userCode` index is `userCode`, or null. */
  oidcGetByUserCode(kind: string, userCode: string, now: Date): Promise<OidcRecord | null>;
  /** Every live record of `kind`. */
  oidcList(kind: string, now: Date): Promise<OidcRecord[]>;
  /**
   * Marks the record consumed at `now`. Returns true only for the one call that consumed a
   * live, unconsumed record, so two racing consumers cannot both win.
   */
  oidcConsume(kind: string, id: string, now: Date): Promise<boolean>;
  /** Removes the record. Idempotent. */
  oidcDelete(kind: string, id: string): Promise<void>;
  /** Removes every record, of any kind, whose `grantId` index is `grantId`. Idempotent. */
  oidcDeleteByGrantId(grantId: string): Promise<void>;
  /** Removes records expired at `now`; returns how many. */
  oidcDeleteExpired(now: Date): Promise<number>;
  /**
   * A fixed-window counter: with `increment`, atomically adds one (starting a new window of
   * `windowSeconds` when the last one has ended); returns the count in the current window (0
   * when none is running) and when it ends.
   */
  oidcCount(key: string, now: Date, windowSeconds: number, increment: boolean): Promise<{ count: number; resetsAt: Date }>;
  /** Clears a counter. Idempotent. */
  oidcResetCount(key: string): Promise<void>;
}

/** A resumable upload as created (see `UploadStore`). */
export interface UploadInput {
  /** Random id, the last segment of the upload's URL. */
  id: string;
  owner: string;
  /** The data object the upload becomes. */
  path: Path;
  overwrite: boolean;
  /** Total size in bytes; null while the client defers it. */
  length: number | null;
  /** The Upload-Metadata header as sent, returned on HEAD. */
  metadata: string;
  /** Resource key of the staged bytes (and of the object once complete). */
  blob: string;
  /** The staged write's state (`StagedWrites`), as JSON. */
  state: string;
  createdAt: Date;
  expiresAt: Date;
  /** The lease the creating request holds, if it appends at once. */
  lease?: { holder: string; until: Date } | null;
}

/** A stored resumable upload. */
export interface UploadRecord extends Omit<UploadInput, 'lease'> {
  /** Bytes acknowledged: durable and recorded. */
  offset: number;
  status: 'open' | 'complete';
  updatedAt: Date;
  leaseHolder: string | null;
  leaseUntil: Date | null;
  /** Once complete: the id of the object it became, and the jobs its commit enqueued. */
  entityId: string | null;
  jobIds: string[];
}

/**
 * Resumable uploads (tus): the open ones with their acknowledged offset and staged-write
 * state, leases that keep two requests from appending to one upload at once (a holder that
 * lost its lease can record nothing), and the completed ones until they expire. The row owns
 * its staged blob until `NamespaceStore.commitObject` marks it complete; the blob is never
 * tracked by `BlobTracker`. Contract: `test/contracts/catalog-uploads-contract.ts`.
 */
/** The `metadata` of an upload row that is one part of another upload (see `countOpenUploads`). */
export const UPLOAD_PART = 's3-part';

export interface UploadStore {
  /** Stores a new open upload at offset 0. `CONFLICT` when the id is taken. */
  createUpload(upload: UploadInput): Promise<void>;
  getUpload(id: string): Promise<UploadRecord | null>;
  /** The open uploads of `owner`, oldest first. */
  listUploads(owner: string): Promise<UploadRecord[]>;
  /**
   * How many open uploads `owner` (every user together when null) has that have not expired at
   * `now`, and when the first of them expires (null for none). The rows whose `metadata` is
   * `UPLOAD_PART` are parts of another upload (S3's multipart uploads) and are not counted:
   * an upload in parts counts once.
   */
  countOpenUploads(owner: string | null, now: Date): Promise<{ count: number; firstExpiry: Date | null }>;
  /**
   * Takes the lease of an open upload for `holder` until `until`: when no one holds it, its
   * lease ended before `now`, or `holder` holds it already. False otherwise (and for an upload
   * that is missing or complete).
   */
  claimUpload(id: string, holder: string, now: Date, until: Date): Promise<boolean>;
  /** Extends `holder`'s lease to `until`; false when `holder` no longer holds it. */
  renewUpload(id: string, holder: string, until: Date): Promise<boolean>;
  /** Gives up `holder`'s lease. No-op when it does not hold it. */
  releaseUpload(id: string, holder: string): Promise<void>;
  /**
   * Ends every upload's lease, whoever holds it; resolves with how many there were. Only for a
   * process that knows no other one is appending: a start on a catalog no other process uses
   * (the data directory's lock held), whose leases are its dead predecessors'.
   */
  releaseUploadLeases(): Promise<number>;
  /**
   * Records `offset` and `state` (JSON), extends the lease to `leaseUntil` and the expiry to
   * `expiresAt`: only while `holder` holds the lease of the open upload (false otherwise, and
   * nothing changes). An offset never goes down.
   */
  checkpointUpload(id: string, holder: string, input: { offset: number; state: string; now: Date; expiresAt: Date; leaseUntil: Date }): Promise<boolean>;
  /** Sets the length of an upload created with a deferred one, while `holder` holds its lease; false otherwise or when already set. */
  setUploadLength(id: string, holder: string, length: number): Promise<boolean>;
  /** Removes the upload (open or complete); false when missing. */
  deleteUpload(id: string): Promise<boolean>;
  /** Uploads that expired before `now` and whose lease (if any) ended before `now`, at most `limit`, oldest expiry first. */
  expiredUploads(now: Date, limit: number): Promise<UploadRecord[]>;
  /** The blobs of every open upload (which recovery must not take for leftovers). */
  stagedBlobs(): Promise<string[]>;
}

/**
 * Share links: found by the hash of their token or by their id, listed by entity or creator,
 * revoked, and used up atomically, so that every node sharing the catalog sees a revocation or
 * the last use at once. Contract: `test/contracts/catalog-shares-contract.ts`.
 */
export interface ShareStore {
  /**
   * Stores a new link with no use yet and resolves with it. Rejects with `CONFLICT` when its id
   * or its token hash is taken.
   */
  createShare(share: Omit<ShareRecord, 'uses' | 'bytesUsed'>): Promise<ShareRecord>;
  /** The link whose token has this hash, or null (also once revoked). Expired or used-up links are returned. */
  getShareByToken(tokenHash: string): Promise<ShareRecord | null>;
  /** The link with this id, or null. */
  getShare(id: string): Promise<ShareRecord | null>;
  /** The links of the entity with this stable id, oldest first. */
  listSharesOfEntity(entityId: string): Promise<ShareRecord[]>;
  /** The links `creator` made (or that act as `creator`), oldest first. */
  listSharesOfCreator(creator: string): Promise<ShareRecord[]>;
  /** How many links of `creator` are active at `now`: neither expired (at or before `now`) nor used up. */
  countActiveShares(creator: string, now: Date): Promise<number>;
  /** Removes the link; true when it existed. Idempotent. */
  revokeShare(id: string): Promise<boolean>;
  /**
   * Sets the link's expiry and use limit to what `change` gives (a field left out stays; null
   * removes it); its uses and everything else stay. Resolves with the link as it is now, or null
   * when there is no such link.
   */
  updateShare(id: string, change: { expiresAt?: Date | null; maxUses?: number | null }): Promise<ShareRecord | null>;
  /**
   * Takes one use of the link, atomically: true when it was taken, false when the link is
   * gone, expired at `now` or used up — so two racing requests cannot both take the last use.
   */
  consumeShareUse(id: string, now: Date): Promise<boolean>;
  /** Gives back one use taken by `consumeShareUse` (for an upload that failed); never below zero. No-op when the link is gone. */
  releaseShareUse(id: string): Promise<void>;
  /** Removes every link that expired before `before` (not at it); resolves with how many. */
  purgeExpiredShares(before: Date): Promise<number>;
  /**
   * Reserves `bytes` (a non-negative integer) of the link's byte bound, atomically: true when
   * its `bytesUsed` plus `bytes` stays within its `maxBytes` (`fallback` when it has none) and
   * the reservation was added, false otherwise (also when the link is gone) — so racing
   * deposits on any node never pass the bound together.
   */
  reserveShareBytes(id: string, bytes: number, fallback: number): Promise<boolean>;
  /** Gives back `bytes` reserved by `reserveShareBytes`; never below zero. No-op when the link is gone. */
  releaseShareBytes(id: string, bytes: number): Promise<void>;
}

/**
 * WebDAV locks (see `DavLock`), shared by every node. A lock is live until its `expiresAt`;
 * expired ones are ignored by every method and removed by `putLock`. Contract:
 * `test/contracts/catalog-locks-contract.ts`.
 */
export interface LockStore {
  /**
   * Records `lock` unless a live lock conflicts with it, atomically across nodes: one on the
   * same path, on an ancestor with depth `infinity`, or (for a lock of depth `infinity`) below
   * it, where either lock is exclusive. Resolves to the conflicting locks: [] when recorded.
   */
  putLock(lock: DavLock, now: Date): Promise<DavLock[]>;
  /**
   * The live locks that cover `path`: on it, and on its ancestors with depth `infinity`; with
   * `below`, also every lock on an entity below it. In no particular order.
   */
  locksAt(path: Path, now: Date, options?: { below?: boolean }): Promise<DavLock[]>;
  /** The live lock named `token`, or null. */
  getLock(token: string, now: Date): Promise<DavLock | null>;
  /** Moves a live lock's end to `expiresAt` (with its new timeout); the lock, or null when it is not live. */
  refreshLock(token: string, timeoutSeconds: number, expiresAt: Date, now: Date): Promise<DavLock | null>;
  /** Removes the lock named `token`; false when there was none. */
  deleteLock(token: string): Promise<boolean>;
  /** Removes every lock on `path` and below it (what they locked was moved away or deleted); how many. */
  deleteLocksWithin(path: Path): Promise<number>;
}

/**
 * S3 access keys: a user's key pairs for the S3 front, found by their public id. The secret is
 * stored as given (the caller seals it). Revoking deletes the row, so every node sharing the
 * catalog refuses the key at its next lookup. Contract: `test/contracts/catalog-s3-keys-contract.ts`.
 */
export interface S3KeyStore {
  /** Stores a new key. `CONFLICT` when its id is taken. */
  createS3Key(key: S3KeyRecord): Promise<void>;
  /** The key with this id, or null (also once revoked). */
  getS3Key(id: string): Promise<S3KeyRecord | null>;
  /** The keys of `user`, oldest first. */
  listS3Keys(user: string): Promise<S3KeyRecord[]>;
  /** Deletes `user`'s key `id`; false when `user` has no such key. */
  deleteS3Key(user: string, id: string): Promise<boolean>;
}

/**
 * A data object whose bytes the resource holds, as the fixity checks see it (see `FixityStore`):
 * live, or trashed and not yet purged or taken down. `path` is the stored one (a trashed
 * object's is hidden: `trash:<id>…`).
 */
export interface StoredObject {
  id: string;
  path: string;
  size: number;
  checksum: string;
  blob: string;
  /** When a check last read its bytes whole (its commit counts as one); null: never. */
  verifiedAt: Date | null;
  /** What the last check found wrong, or null. */
  damaged: { at: Date; reason: string } | null;
}

/**
 * Fixity: what the checks of stored bytes against their checksums read and record (see
 * `core/fixity.ts`). A commit (`NamespaceStore.commitObject`) counts as a check of the bytes it
 * commits and clears a mark of damage. Contract: `test/contracts/catalog-fixity-contract.ts`.
 */
export interface FixityStore {
  /**
   * Up to `limit` stored objects whose blobs sort after `after` (from the first when null), in
   * byte order of their blobs: every live data object, and every trashed one whose bytes are
   * still kept. Pages read one after another see the catalog as each page's read found it.
   */
  storedObjects(after: string | null, limit: number): Promise<StoredObject[]>;
  /**
   * Which of `blobs` the catalog knows of: the bytes of a data object (also one trashed,
   * purged or taken down whose row still names them), a tracked blob (`BlobTracker`), or the
   * staged bytes of a resumable upload. Bytes of any other key are no object's.
   */
  knownBlobs(blobs: readonly string[]): Promise<Set<string>>;
  /**
   * Claims, for `holder` until `until`, up to `limit` stored objects last checked before
   * `dueBefore` (never-checked ones first, then the oldest check), leaving out those another
   * holder's claim covers at `now`: so checkers on several nodes never take the same object at
   * once. Resolves with what it claimed.
   */
  claimFixity(input: { holder: string; now: Date; dueBefore: Date; until: Date; limit: number }): Promise<StoredObject[]>;
  /**
   * Records a check of the bytes `blob` at `now`, for the stored object they still belong to:
   * whole (`damage` null: a mark of damage is cleared) or damaged (`damage` says why: the
   * object is marked, and downloads refuse it with `OBJECT_DAMAGED`). Ends any claim on it.
   * Resolves with the object as recorded, or null when no stored object holds `blob` any more
   * (it was overwritten or removed meanwhile: nothing is recorded).
   */
  recordFixity(input: { blob: string; now: Date; damage: string | null }): Promise<StoredObject | null>;
  /** How many stored objects are marked damaged. */
  countDamaged(): Promise<number>;
}

/**
 * A certificate authority kept in the catalog, so that every node sharing it signs with the
 * same CA and trusts the same ones. The highest generation signs; older ones are kept as trust
 * anchors while certificates they signed may still be in use.
 */
export interface StoredCa {
  /** 1 for the first CA, one more at each rotation. */
  generation: number;
  /** The CA certificate, PEM. */
  certPem: string;
  /** The CA's private key, sealed by the caller (under the master key); the catalog never sees it open. */
  sealedKey: string;
  createdAt: Date;
}

/**
 * The CAs of the deployment, shared by every node. Contract: `test/contracts/catalog-ca-contract.ts`.
 */
export interface CaStore {
  /**
   * Stores `ca` unless a CA of its generation is stored; resolves true when it stored it.
   * Atomic: of several nodes adding the same generation at once exactly one stores it, and the
   * others then find that one with `listCas`.
   */
  addCa(ca: StoredCa): Promise<boolean>;
  /** Every stored CA, the highest generation first. */
  listCas(): Promise<StoredCa[]>;
}

/**
 * Quotas and their usage. A quota bounds the bytes and the data objects below a collection
 * (trashed ones counted at the path they were trashed from, until purged); its usage is
 * counted only while it exists, changed by `NamespaceStore`'s `commitObject`, `rename`,
 * `move`, `restore` and `removeTrashed` in their own transactions, which refuse with
 * `QUOTA_EXCEEDED` (committing nothing) a change that would add bytes or objects past a bound
 * of a quota at or above a path they write to — atomically, so writers racing on any number of
 * nodes never pass a bound together. A quota set on a collection that is moved travels with
 * it. Contract: `test/contracts/catalog-quotas-contract.ts`.
 */
export interface QuotaStore {
  /**
   * Sets the quota of the collection at `path` (replacing its bounds and its `user`), counting
   * its usage anew in the same transaction, so no change committed meanwhile is lost or
   * counted twice. Resolves with the quota. `NOT_FOUND` when nothing is at `path`,
   * `NOT_A_COLLECTION` for a data object.
   */
  setQuota(input: { path: Path; user: string | null; maxBytes: number | null; maxObjects: number | null }): Promise<QuotaRecord>;
  /** The quota set at `path`, with its usage, or null. */
  getQuota(path: Path): Promise<QuotaRecord | null>;
  /** Every quota, sorted by path. */
  listQuotas(): Promise<QuotaRecord[]>;
  /** The quotas at `path` and above it, outermost first. */
  quotasCovering(path: Path): Promise<QuotaRecord[]>;
  /** Removes the quota at `path` (its counters go with it); false when there was none. */
  clearQuota(path: Path): Promise<boolean>;
}

/**
 * The roles of the catalog by name. A driver composes one of each into a `Catalog`, and the
 * contract suites are listed by these names, so a role added here without a suite (or a
 * driver part) does not compile.
 */
export interface CatalogRoles {
  namespace: NamespaceStore;
  accounts: AccountStore;
  sessions: SessionStore;
  jobs: JobStore;
  handles: HandleStore;
  blobs: BlobTracker;
  oidc: OidcStore;
  publications: PublicationStore;
  shares: ShareStore;
  uploads: UploadStore;
  locks: LockStore;
  s3Keys: S3KeyStore;
  fixity: FixityStore;
  cas: CaStore;
  quotas: QuotaStore;
  audit: AuditStore;
  search: SearchStore;
}

/** The name of one role of the catalog. */
export type CatalogRole = keyof CatalogRoles;

/**
 * The catalog: every role in one store, behind one connection. Every method is atomic on its
 * own. Implementations pass every suite `test/contracts/catalog-contract.ts` lists.
 */
export interface Catalog extends NamespaceStore, AccountStore, SessionStore, JobStore, HandleStore, BlobTracker, OidcStore, PublicationStore, ShareStore, UploadStore, LockStore, S3KeyStore, FixityStore, CaStore, QuotaStore, AuditStore, SearchStore {
  readonly driver: string;
  /**
   * Resolves once the catalog has answered a trivial query (readiness); rejects with
   * `UNAVAILABLE` when it cannot be reached. Changes nothing.
   */
  ping(): Promise<void>;
  /** The connection pool's figures, where the catalog has a pool (PostgreSQL); absent otherwise. */
  poolFigures?(): PoolFigures;
  /**
   * Where small objects' bytes may be kept, in the catalog's own database; absent when the
   * catalog does not offer it.
   */
  readonly inline?: InlineStore;
  close(): Promise<void>;
}

/** Connections of a catalog's pool: open, idle among them, and requests waiting for one. */
export interface PoolFigures {
  total: number;
  idle: number;
  waiting: number;
}

/**
 * Bytes of small objects kept in the catalog's own database (see
 * `drivers/resource/inline.ts`), under the keys a resource would use. Reads are synchronous:
 * they cost less than a hand-off to a thread.
 */
export interface InlineStore {
  /**
   * Keeps `bytes` for `key` (replacing what was there) until the catalog's commit of the data
   * object whose blob is `key` stores them, in that commit's own transaction: they are durable
   * exactly when their object is, and no row of bytes exists without its object. Until then
   * `get` and `size` see them in this process and `delete` drops them; a crash loses them with
   * the upload they belong to. Resolves at once.
   */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes under `key`, or null. */
  get(key: string): Buffer | null;
  /** The size of what is under `key`, or null. */
  size(key: string): number | null;
  /**
   * Removes `key`, kept or stored; resolves to false when it was not there. Not waited for: see
   * the driver.
   */
  delete(key: string): Promise<boolean>;
}

/** What `oidcPut`/`oidcInsert` store. The optional indexes are what lookups search by. */
export interface OidcRecordInput {
  payload: string;
  /** End of life; null for a record that does not expire. */
  expiresAt: Date | null;
  uid?: string | null;
  userCode?: string | null;
  grantId?: string | null;
}

/** A stored record of the OpenID Connect store. */
export interface OidcRecord {
  id: string;
  payload: string;
  expiresAt: Date | null;
  /** When it was consumed (authorization codes, login state), or null. */
  consumedAt: Date | null;
}

