/**
 * The ports of the core: what the backend needs from the world, as interfaces. Drivers in
 * `src/drivers/` implement them, each for one dependency; the core imports no driver.
 */
import type { Readable } from 'node:stream';
import type { Path } from './path.ts';
import type {
  AccessEntry, AccessLevel, Avu, Collection, DataObject, Entity, HandleRecord, HandleValues, JobInput,
  JobRecord, JobState, JobsFor, SessionRecord, UserRecord,
} from './types.ts';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * The catalog: the namespace, access control, metadata, users and sessions. Every method is
 * atomic on its own. Implementations pass `test/contracts/catalog-contract.ts`.
 */
export interface Catalog {
  readonly driver: string;
  close(): Promise<void>;

  /** The entity at `path`, or null. */
  getEntity(path: Path): Promise<Entity | null>;
  /** The children of the collection at `path`, sorted by name; [] for an empty or missing one. */
  listChildren(path: Path): Promise<Entity[]>;
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
   * Overwriting keeps the object's owner, access list, metadata and creation time.
   */
  commitObject(input: {
    path: Path; owner: string; size: number; checksum: string; blob: string; now: Date; overwrite: boolean; jobs?: JobsFor;
  }): Promise<{ object: DataObject; replacedBlob: string | null; jobIds: string[] }>;
  /**
   * Moves the entity at `from` (and, for a collection, everything below it) to `to`, keeping
   * access lists and metadata. Rejects with `NOT_FOUND` when `from` or the parent of `to` is
   * missing, and `CONFLICT` when something exists at `to` or `to` lies inside `from`.
   */
  rename(from: Path, to: Path, now: Date, jobs?: JobsFor): Promise<Entity>;
  /** The entity with this stable id, wherever it now is, or null. */
  getEntityById(id: string): Promise<Entity | null>;
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
   * The highest level any of `principals` holds on `path` or on any collection above it
   * (access granted on a collection covers everything inside it), or null.
   */
  accessLevel(path: Path, principals: readonly string[]): Promise<AccessLevel | null>;

  /** Adds an AVU to the entity at `path` (no-op when the same triple exists). `NOT_FOUND`. */
  addMeta(path: Path, avu: Avu): Promise<void>;
  /** Removes the AVUs with `attribute` (and `value`, when given) from the entity at `path`. */
  removeMeta(path: Path, attribute: string, value?: string): Promise<void>;
  listMeta(path: Path): Promise<Avu[]>;

  /** Creates a user, admin or group. `CONFLICT` when the name is taken. */
  createUser(user: UserRecord): Promise<void>;
  getUser(name: string): Promise<UserRecord | null>;
  listUsers(): Promise<UserRecord[]>;
  setPasswordHash(name: string, hash: string): Promise<void>;
  /** Adds `user` to `group`; `NOT_FOUND` when either is missing. Idempotent. */
  addToGroup(group: string, user: string): Promise<void>;
  groupsOf(user: string): Promise<string[]>;

  putSession(session: SessionRecord): Promise<void>;
  /** The session with this token hash, or null (also when it has expired at `now`). */
  getSession(tokenHash: string, now: Date): Promise<SessionRecord | null>;
  /**
   * Replaces the credential of an existing session; returns false when it is gone. With
   * `expected` given, replaces it only if the stored credential still equals `expected`
   * (compare-and-swap) and returns false otherwise.
   */
  updateSessionCredential(tokenHash: string, credential: string | null, expected?: string | null): Promise<boolean>;
  /** The most recently created session of `user` that is still live at `now`, or null. */
  latestSessionOf(user: string, now: Date): Promise<SessionRecord | null>;
  deleteSession(tokenHash: string): Promise<void>;
  deleteExpiredSessions(now: Date): Promise<number>;

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

  // Durable jobs. The mutating namespace methods above take `jobs`, called inside their
  // transaction with the event they cause, so a change and the jobs it causes commit together.
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
   * Optional: a catalog only one process uses needs no channel besides the worker's own
   * events. Resolves with a function that stops watching.
   */
  watchJobs?(listener: (event: { settled: string } | { enqueued: true }) => void): Promise<() => Promise<void>>;
  /** Jobs, newest first, optionally of one state. */
  listJobs(state: JobState | null, limit: number): Promise<JobRecord[]>;

  /** Creates or replaces a handle record of the embedded handle service. */
  putHandle(handle: string, values: HandleValues, now: Date): Promise<void>;
  getHandle(handle: string): Promise<HandleRecord | null>;

  /** Starts tracking a blob that is being written and is not (yet) referenced by any object. */
  trackBlob(blob: string, now: Date): Promise<void>;
  untrackBlob(blob: string): Promise<void>;
  /** Tracked blobs registered before `before`: leftovers of crashed uploads or overwrites. */
  trackedBlobs(before: Date): Promise<string[]>;

  // The OpenID Connect store: expiring records of the embedded provider (its models, keyed by
  // model name as `kind`), the relying party's login state, sealed refresh tokens, and
  // fixed-window counters for rate limits. Payloads are opaque strings. Contract:
  // `test/contracts/catalog-oidc-contract.ts`.
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

export interface ResourceCapabilities {
  /** `read` honours a byte range without reading what lies before it. */
  rangeRead: boolean;
  /** Large writes go up in parts (S3 multipart). */
  multipart: boolean;
  /**
   * A read already under way finishes whole even when its key is deleted meanwhile (POSIX
   * unlink semantics). Where false (a multipart object on some S3 stores), the backend keeps
   * replaced objects until `recovery.grace` has passed instead of deleting them at once.
   */
  deleteSparesOpenReads: boolean;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/**
 * A resource stores the bytes of data objects under opaque keys. It knows nothing of paths,
 * users or the catalog. Implementations pass `test/contracts/resource-contract.ts`.
 */
export interface Resource {
  readonly driver: string;
  readonly capabilities: ResourceCapabilities;
  /**
   * Streams `source` into the resource under `key` with backpressure. The key becomes readable
   * only when the returned promise resolves (after the bytes are durable); when it rejects —
   * source error, abort, full disk (`STORAGE_FULL`) — nothing remains under `key` and no
   * temporary is left behind. Never holds the whole body in memory.
   */
  write(key: string, source: Readable, options?: { signal?: AbortSignal }): Promise<{ size: number }>;
  /**
   * Opens `key` for reading, the whole object or `range`. The object is opened before the
   * promise resolves; with `deleteSparesOpenReads`, a later `delete` does not cut the stream
   * short. `NOT_FOUND`.
   */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** The stored size of `key`, or null when it does not exist. */
  size(key: string): Promise<number | null>;
  /** Removes `key`. Idempotent. */
  delete(key: string): Promise<void>;
  /** Removes temporaries of writes that started before `before` and never finished. */
  sweepTemporaries(before: Date): Promise<number>;
  close(): Promise<void>;
}

/**
 * Verifies the credential a request carries to the backend and names the backend user it
 * belongs to. This is the backend's trust boundary: the HTTP layer never decides who a
 * caller is. Rejects with `PROXY_EXPIRED` or `INVALID_CREDENTIAL`.
 */
export interface Authority {
  resolve(credential: BackendCredential, now: Date): Promise<string>;
}

/** What the HTTP layer hands the backend on behalf of a user; opaque to the HTTP layer. */
export interface BackendCredential {
  readonly kind: string;
  readonly [key: string]: unknown;
}

/**
 * A certificate authority that issues end-entity user certificates: lading's own (in process)
 * or an identity provider's online CA reached over HTTP.
 */
export interface CertificateIssuer {
  /**
   * Signs the PKCS#10 request `csrPem`, whose single `CN` names the user, and resolves with
   * the PEM certificate. The CA chooses the rest of the subject and the validity. Rejects with
   * `BAD_REQUEST` for an unacceptable request and `UNAVAILABLE` when the CA cannot be reached.
   */
  issue(csrPem: string): Promise<string>;
}

/**
 * A persistent-identifier service: lading's embedded handle service or a Handle.net server.
 * Handles are `<prefix>/<suffix>`.
 */
export interface PidProvider {
  readonly prefix: string;
  /**
   * Creates the handle with these values, or replaces the values of an existing one.
   * Idempotent, so a retried job never makes a second PID. `UNAVAILABLE` when unreachable.
   */
  put(handle: string, values: HandleValues): Promise<void>;
  /** The handle's values, or null when it does not exist. `UNAVAILABLE`. */
  resolve(handle: string): Promise<HandleValues | null>;
}
