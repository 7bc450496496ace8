/**
 * The ports of the core: what the backend needs from the world, as interfaces. Drivers in
 * `src/drivers/` implement them, each for one dependency; the core imports no driver.
 */
import type { Readable } from 'node:stream';
import type { Path } from './path.ts';
import type {
  AccessEntry, AccessLevel, Avu, Collection, DataObject, Entity, SessionRecord, UserRecord,
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
  createCollection(input: { path: Path; owner: string; now: Date }): Promise<Collection>;
  /**
   * Makes a data object visible at `path` whose bytes are already stored under `blob`, in one
   * transaction that also stops tracking `blob` and starts tracking the blob it replaces (so a
   * crash before that one is deleted leaves it to the sweeper). Rejects with `CONFLICT` when an
   * object exists and `overwrite` is false or when `path` is a collection,
   * `NOT_FOUND` when the parent is missing, `NOT_A_COLLECTION` when the parent is a data object.
   * Overwriting keeps the object's owner, access list, metadata and creation time.
   */
  commitObject(input: {
    path: Path; owner: string; size: number; checksum: string; blob: string; now: Date; overwrite: boolean;
  }): Promise<{ object: DataObject; replacedBlob: string | null }>;
  /**
   * Moves the entity at `from` (and, for a collection, everything below it) to `to`, keeping
   * access lists and metadata. Rejects with `NOT_FOUND` when `from` or the parent of `to` is
   * missing, and `CONFLICT` when something exists at `to` or `to` lies inside `from`.
   */
  rename(from: Path, to: Path, now: Date): Promise<Entity>;

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
  /** Replaces the credential of an existing session; returns false when it is gone. */
  updateSessionCredential(tokenHash: string, credential: string | null): Promise<boolean>;
  deleteSession(tokenHash: string): Promise<void>;
  deleteExpiredSessions(now: Date): Promise<number>;

  /** Starts tracking a blob that is being written and is not (yet) referenced by any object. */
  trackBlob(blob: string, now: Date): Promise<void>;
  untrackBlob(blob: string): Promise<void>;
  /** Tracked blobs registered before `before`: leftovers of crashed uploads or overwrites. */
  trackedBlobs(before: Date): Promise<string[]>;
}

export interface ResourceCapabilities {
  /** `read` honours a byte range without reading what lies before it. */
  rangeRead: boolean;
  /** Large writes go up in parts (S3 multipart). */
  multipart: boolean;
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
   * promise resolves, so a later `delete` does not cut the stream short. `NOT_FOUND`.
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
