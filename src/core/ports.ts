/**
 * The ports of the core: what the backend needs from the world, as interfaces. Drivers in
 * `src/drivers/` implement them, each for one dependency; the core imports no driver.
 */
import type { Readable, Writable } from 'node:stream';
import type { HandleValues } from './types.ts';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export type {
  AccountStore, BlobTracker, CaStore, Catalog, FixityStore, StoredObject, JobQueueFigures, PoolFigures, CatalogRole, CatalogRoles, HandleStore, InlineStore, JobStore, LockStore, NamespaceStore, OidcRecord, OidcRecordInput,
  OidcStore, PathLookup, PathLookupInput, PublicationStore, QuotaStore, S3KeyStore, SessionStore, ShareStore, StoredCa, TrackedBlob, UploadInput, UploadRecord, UploadStore,
} from './catalog.ts';
export type { AuditStore } from './audit.ts';
export type { SearchStore } from './search.ts';

export interface ResourceCapabilities {
  /** `read` honours a byte range without reading what lies before it. */
  rangeRead: boolean;
  /** Every stream `read` returns has `copyTo` (see `ResourceStream`); when false, none has. */
  copyTo: boolean;
  /**
   * A read already under way finishes whole even when its key is deleted meanwhile (POSIX
   * unlink semantics). Where false (a multipart object on some S3 stores), the backend keeps
   * replaced objects until `recovery.grace` has passed instead of deleting them at once.
   */
  deleteSparesOpenReads: boolean;
  /**
   * The resource has `copy`: it makes a new key from a stored one without the bytes passing
   * through lading (a reflink or `copy_file_range` on files, CopyObject on S3). Where false,
   * the backend copies by reading and writing.
   */
  copy: boolean;
}

/** A key a resource holds (see `Resource.list`). */
export interface StoredKey {
  key: string;
  size: number;
  /** When its bytes were last written (a file's mtime, an object's Last-Modified). */
  modifiedAt: Date;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/**
 * The bytes of a stored object (or of the range asked for), as a readable. A resource that
 * declares `capabilities.copyTo` also gives each stream `copyTo`, a cheaper way to hand the
 * bytes to a destination the caller owns (such as a socket) than consuming the stream.
 */
export interface ResourceStream extends Readable {
  /**
   * Writes the stream's whole range into `dest`, instead of the stream being read: call it
   * before reading the stream, and at most once. Waits for each write to complete before it
   * reuses a buffer, so `dest` may hold a chunk until its write callback. Resolves when the
   * last write has completed; rejects with the resource's or `dest`'s error, and also when
   * `dest` is closed or destroyed before the copy ends (it never waits on a gone destination).
   * In every case the stream is destroyed (its file or connection released) by the time it
   * settles. It never ends `dest`.
   */
  copyTo?(dest: Writable): Promise<void>;
}

/**
 * A resource stores the bytes of data objects under opaque keys. It knows nothing of paths,
 * users or the catalog. Implementations pass `test/contracts/resource-contract.ts`, and their
 * factories reject options they cannot work with when called, not on the first request.
 */
export interface Resource {
  readonly driver: string;
  readonly capabilities: ResourceCapabilities;
  /**
   * Streams `source` into the resource under `key` with backpressure. The key becomes readable
   * only when the returned promise resolves (after the bytes are durable; bytes kept for the
   * catalog's own database become durable with the commit that makes their object visible: see
   * `InlineStore.put`); when it rejects —
   * source error, abort, full disk (`STORAGE_FULL`) — nothing remains under `key` and no
   * temporary is left behind. Never holds the whole body in memory. With `publishAfter`, the
   * driver calls it once, as soon as it begins to store bytes of its own (a file, an upload
   * to the store), and not at all when it stores none (the small objects whose bytes the
   * catalog's commit stores: `InlineStore.put`); the key then does not become readable before
   * the promise it returned resolves, and when that rejects the write rejects with its error,
   * leaving nothing. A driver waits for it as late as it can (before it renames a flushed file
   * into place, or before the store sees the body's end), so the wait overlaps the writing of
   * the bytes.
   */
  write(key: string, source: Readable, options?: { signal?: AbortSignal; publishAfter?: () => Promise<unknown> }): Promise<{ size: number }>;
  /**
   * Opens `key` for reading, the whole object or `range`. The object is opened before the
   * promise resolves; with `deleteSparesOpenReads`, a later `delete` does not cut the stream
   * short. The stream has `copyTo` exactly when `capabilities.copyTo`. `NOT_FOUND`.
   */
  read(key: string, range?: ByteRange): Promise<ResourceStream>;
  /**
   * Stores the bytes of `from` under the fresh key `to`, inside the resource (present exactly
   * when `capabilities.copy`). `to` becomes readable only when the promise resolves, whole and
   * durable as after `write`; when it rejects nothing remains under `to`. `publishAfter` is
   * as for `write`: called once before the driver stores bytes of its own, and not at all
   * when it stores none (bytes kept for the catalog's commit). Rejects with `NOT_FOUND` when
   * `from` does not exist, `STORAGE_FULL`.
   */
  copy?(from: string, to: string, options?: { publishAfter?: () => Promise<unknown> }): Promise<{ size: number }>;
  /** The stored size of `key`, or null when it does not exist. */
  size(key: string): Promise<number | null>;
  /** Removes `key`. Idempotent. */
  delete(key: string): Promise<void>;
  /**
   * Every key stored whole (readable), with its size and when its bytes were last written, in
   * no particular order, read from the store a page at a time (memory stays flat however many
   * there are). Neither temporaries of writes under way nor staged writes not yet complete are
   * keys, nor bytes kept in the catalog's own database (`InlineStore`: they exist only with
   * their object); a key written or deleted while the listing runs may or may not appear. For
   * fixity checks (bytes no object refers to); `UNAVAILABLE` when the store cannot be reached.
   */
  list(): AsyncIterable<StoredKey>;
  /**
   * Removes temporaries of writes that started before `before` and never finished, except
   * those of keys `keep` says are still being written (by another node).
   */
  sweepTemporaries(before: Date, keep?: (key: string) => boolean): Promise<number>;
  /** Writes that arrive in pieces over many requests (resumable uploads); absent when unsupported. */
  readonly staging?: StagedWrites;
  /**
   * Resolves once the store has answered a cheap request (readiness: a stat of the root
   * directory, a HeadBucket); rejects with `UNAVAILABLE` when it cannot be reached. Changes nothing.
   */
  probe(): Promise<void>;
  /** Free and total bytes of the file system holding the objects, where the resource is one (fs); absent otherwise. */
  space?(): Promise<{ free: number; total: number }>;
  close(): Promise<void>;
}

/**
 * What a driver remembers about a staged write between requests: a small JSON-serialisable
 * value the caller stores (in the catalog) and hands back unchanged. Opaque to the caller.
 */
export type StagedState = { readonly [key: string]: unknown };

/** How `StagedWrites.append` reports and records progress. */
export interface AppendOptions {
  /**
   * Durable bytes between two checkpoints at least (the driver may wait for more, e.g. to fill
   * a part); `Infinity`: only one, at the end of `source`.
   */
  checkpointBytes: number;
  /**
   * Records that the staged write now holds exactly `offset` bytes, described by `state`. The
   * driver calls it once those bytes are durable, each time at least `checkpointBytes` more
   * are, and once more when `source` ends or fails with new bytes since the last call (what
   * arrived is kept). Each call covers every chunk taken from `source` so far, never part of
   * one. When it rejects (the caller refuses to acknowledge those bytes), the driver stops,
   * removes what it wrote that no recorded state refers to, and rejects with that error.
   */
  onCheckpoint(offset: number, state: StagedState): Promise<void>;
}

/**
 * A write assembled from appends made by separate requests, possibly on separate nodes, that
 * survives a crash at the last checkpoint. The key is invisible to `read` until `complete`.
 * Contract: the staged-write cases of `test/contracts/resource-contract.ts`.
 */
export interface StagedWrites {
  /** Starts an empty staged write under `key` (a fresh key). Resolves with its state. */
  begin(key: string): Promise<StagedState>;
  /**
   * Appends `source` at `offset` (the offset `state` was recorded with: bytes a crash left
   * past it are discarded), taking its chunks one at a time and in order, and reporting
   * progress through `options.onCheckpoint`. Resolves with the last recorded offset and state
   * when `source` ends; rejects with `source`'s error (after recording what had arrived), with
   * the error `onCheckpoint` rejected with, with `STORAGE_FULL`, or with `CONFLICT` when
   * another append to `key` runs in this process.
   */
  append(key: string, state: StagedState, offset: number, source: AsyncIterable<Buffer>, options: AppendOptions): Promise<{ offset: number; state: StagedState }>;
  /**
   * The first `length` bytes written (recorded at `state`), to rebuild a digest; absent where
   * staged bytes cannot be read before `complete` (S3 parts). `NOT_FOUND`.
   */
  readStaged?(key: string, state: StagedState, length: number): Promise<Readable>;
  /**
   * Makes the `length` bytes recorded at `state` readable under `key` like any written object.
   * Idempotent: completing a write that was completed already resolves.
   */
  complete(key: string, state: StagedState, length: number): Promise<void>;
  /**
   * Removes everything written under `key`, staged or completed: call it only for a write no
   * object refers to. Idempotent.
   */
  abort(key: string, state: StagedState): Promise<void>;
}

/**
 * Verifies the credential a request carries to the backend and names the backend user it
 * belongs to. This is the backend's trust boundary: the HTTP layer never decides who a
 * caller is. Rejects with `PROXY_EXPIRED` or `INVALID_CREDENTIAL`.
 */
export interface Authority {
  resolve(credential: BackendCredential, now: Date): Promise<string>;
  /**
   * The subject DN of a credential that verifies, whose mapping to a user the caller looks up
   * itself (in the same catalog read as what it needs next: see `NamespaceStore.lookup`).
   * Rejects as `resolve` does, except for a DN with no mapping, which it cannot know. Absent
   * where credentials name their user directly.
   */
  subjectOf?(credential: BackendCredential, now: Date): Promise<string>;
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

/**
 * The seam between sessions and the backend's trust boundary. A `CredentialManager` obtains a
 * backend credential for a user who has just proved who they are (login), stores it in a form
 * safe to keep in the catalog, and reopens it per request. The bearer token never reaches the
 * backend; only what `open` returns does.
 */
export interface CredentialStatus {
  /** The credential's end of validity. */
  notAfter: Date;
  /** The credential's start of validity, when it has one. */
  notBefore?: Date;
  /** Subject the backend will see, for messages and `lading proxy show`. */
  subject: string;
  /** Issuer of that subject's certificate, when the credential is a certificate. */
  issuer?: string;
}

export interface CredentialManager {
  /** Obtains a fresh credential for `user`; returns the stored (serialised, encrypted) form. */
  issue(user: string, now: Date): Promise<string>;
  /** The backend credential inside a stored one. */
  open(stored: string): Promise<BackendCredential>;
  /** Validity facts of a stored credential. */
  inspect(stored: string): Promise<CredentialStatus>;
}
