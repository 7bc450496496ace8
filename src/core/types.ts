/**
 * Domain types of the storage backend: entities (collections and data objects), users and
 * groups, access levels, metadata (AVUs) and sessions. Plain data, no behaviour, no I/O.
 */
import type { Path } from './path.ts';

export type AccessLevel = 'read' | 'write' | 'own';
export const ACCESS_LEVELS: readonly AccessLevel[] = ['read', 'write', 'own'];
export const ACCESS_RANK: Record<AccessLevel, number> = { read: 1, write: 2, own: 3 };

interface EntityBase {
  /** Stable identifier (a UUID) that survives renames; a PID's suffix is made from it. */
  id: string;
  path: Path;
  name: string;
  owner: string;
  createdAt: Date;
  modifiedAt: Date;
  /** The value of the entity's `PID` attribute, written by the backend's rules; null when none. */
  pid: string | null;
}

export interface DataObject extends EntityBase {
  kind: 'dataobject';
  size: number;
  /** `sha2:<base64 of SHA-256>`, computed while the bytes streamed in. */
  checksum: string;
  /** Key of the bytes on the resource; never shown to clients. */
  blob: string;
  /**
   * The entity tag S3 clients check: the hex MD5 of the bytes when they were stored whole,
   * `<hex MD5 of the parts' MD5s>-<parts>` for a multipart upload. Absent when unknown (objects
   * stored before lading kept it).
   */
  etag?: string;
  /**
   * Set when a fixity check (`core/fixity.ts`) found the stored bytes missing or not matching
   * `checksum`: when and why. Such an object is never served; overwriting it clears the mark,
   * as does a later check that finds its bytes whole again. Absent otherwise.
   */
  damaged?: { at: Date; reason: string };
}

export interface Collection extends EntityBase {
  kind: 'collection';
}

export type Entity = DataObject | Collection;

/** How far an entity is open to others (see `NamespaceStore.marksOf`). */
export interface EntityMarks {
  /** Anyone may read it without signing in. */
  published: boolean;
  /** Users or groups other than its owner hold access entries on it. */
  shared: boolean;
  /** A share link on it works now. */
  links: boolean;
}

export type PrincipalKind = 'user' | 'admin' | 'group';

export interface UserRecord {
  name: string;
  kind: PrincipalKind;
  /** scrypt hash (see `identity/secrets/password.ts`), null for users who only log in through an identity provider. */
  passwordHash: string | null;
  createdAt: Date;
  /** A disabled account cannot log in by any means; absent means enabled. */
  disabled?: boolean;
}

/** An S3 access key pair of a user (see `S3KeyStore`). */
export interface S3KeyRecord {
  /** The public access key id (`AWS_ACCESS_KEY_ID`). */
  id: string;
  user: string;
  /** The secret access key, sealed under the master key; opened only to verify a signature. */
  secret: string;
  /** What the user called the key, or null. */
  label: string | null;
  createdAt: Date;
}

export interface AccessEntry {
  principal: string;
  level: AccessLevel;
}

/** Attribute–value–unit metadata, as in iRODS. */
export interface Avu {
  attribute: string;
  value: string;
  unit: string;
}

/**
 * What a session's token is carried by: `api`, a bearer token (logins, the tokens of the
 * "API access" page); `browser`, the session cookie of a signed-in browser.
 */
export type SessionKind = 'api' | 'browser';

export interface SessionRecord {
  /** SHA-256 of the bearer token, hex; the token itself is never stored. */
  tokenHash: string;
  /** Random public name of the session (lists and revocation name it; it opens nothing). */
  id: string;
  kind: SessionKind;
  user: string;
  /** What the user called the token (tokens made on the "API access" page), or null. */
  label: string | null;
  createdAt: Date;
  /** Absolute end of life. */
  expiresAt: Date;
  /** End of life when unused until then (browser sessions), or null for none. */
  idleExpiresAt: Date | null;
  /** When it was last used, to the minute (see `SessionStore.touchSession`), or null. */
  lastUsedAt: Date | null;
  /** Opaque credential material for the backend (e.g. an encrypted proxy chain), or null. */
  credential: string | null;
}

/** A session as stored by `SessionStore.putSession`: the public name is made when absent, the kind is `api` by default. */
export type SessionInput = Omit<SessionRecord, 'id' | 'kind' | 'label' | 'idleExpiresAt' | 'lastUsedAt'>
  & Partial<Pick<SessionRecord, 'id' | 'kind' | 'label' | 'idleExpiresAt' | 'lastUsedAt'>>;

export type BackendEventType =
  | 'object.created' | 'object.overwritten' | 'object.renamed' | 'collection.created' | 'collection.renamed'
  | 'entity.published' | 'entity.unpublished'
  | 'entity.trashed' | 'entity.restored' | 'entity.purged' | 'entity.taken_down';

/** A change in the namespace that rules can react to (publishing is read access granted to `anonymous`). */
export interface BackendEvent {
  type: BackendEventType;
  entityId: string;
  /** The entity's path after the change; for a withdrawal (trashed, purged, taken down), the path it had when trashed. */
  path: Path;
  /** For renames, the path before. */
  from?: Path;
}

/** A job to enqueue in the same transaction as the change that caused it. */
export interface JobInput {
  kind: string;
  /** JSON text, interpreted by the job's handler. */
  payload: string;
}

/** Produces the jobs a change causes; called inside the catalog's transaction. */
export type JobsFor = (event: BackendEvent) => JobInput[];

export type JobState = 'pending' | 'running' | 'done' | 'failed';

export interface JobRecord {
  id: string;
  kind: string;
  payload: string;
  state: JobState;
  attempts: number;
  runAfter: Date;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The values of a handle record, by type (`URL`, `EUDAT/CHECKSUM`, …). */
export type HandleValues = Record<string, string>;

export interface HandleRecord {
  handle: string;
  values: HandleValues;
  createdAt: Date;
  updatedAt: Date;
}

/** A durable record of publishing or unpublishing an entity: who did it, when, and at which path. */
export interface PublicationEvent {
  /** The entity's stable id. */
  entityId: string;
  /** The entity's path at the time. */
  path: Path;
  action: 'published' | 'unpublished';
  /** The user who did it. */
  actor: string;
  at: Date;
}

/** What a share link lets whoever holds it do: download (`read`) or deposit new files (`upload`, a drop box). */
export type ShareKind = 'read' | 'upload';

/**
 * A share link as the catalog keeps it. The token is never stored, only its SHA-256; the link
 * names its entity by the stable id, so it follows renames.
 */
export interface ShareRecord {
  /** Stable identifier (a UUID) by which the creator lists and revokes the link; not a secret. */
  id: string;
  /** SHA-256 of the link's token, hex. */
  tokenHash: string;
  /** The stable id of the collection or data object the link opens. */
  entityId: string;
  kind: ShareKind;
  /** The user the link acts as: downloads read, and deposits are owned, as this user. */
  creator: string;
  createdAt: Date;
  /** End of life; null for a link that does not expire. */
  expiresAt: Date | null;
  /** How many uses the link allows; null for no limit. */
  maxUses: number | null;
  /** How many uses it has had. */
  uses: number;
  /**
   * A drop box's bound on the bytes deposited through it, all files together; null for a read
   * link, and for a drop box made before links had one (the configured default applies).
   */
  maxBytes: number | null;
  /** Bytes deposited through the link, with those that deposits under way have reserved. */
  bytesUsed: number;
  /** scrypt hash of the link's password, or null when it has none. */
  passwordHash: string | null;
}

/**
 * What a withdrawn entity is: `trashed` (in its owner's trash, bytes kept, restorable),
 * `purged` (the trash removed its bytes after the retention, or when emptied) or `taken_down`
 * (an admin removed its bytes at once). Only a trashed entity can be restored.
 */
export type WithdrawnState = 'trashed' | 'purged' | 'taken_down';

/**
 * The record of an entity taken out of the namespace (see `NamespaceStore.trash`): its row,
 * access list, metadata and PID stay, and so does this record, which a PID's tombstone shows.
 */
export interface TrashEntry {
  /** The entity's stable id (also the entry's id). */
  id: string;
  kind: Entity['kind'];
  /** Where it stood when trashed (where `restore` puts it back by default). */
  path: Path;
  name: string;
  owner: string;
  pid: string | null;
  /** Its bytes in the catalog: a data object's size, or the sum of a collection's data objects' (kept after a purge, for the record). */
  size: number;
  state: WithdrawnState;
  trashedAt: Date;
  trashedBy: string;
  /** Why, as its owner said; null when not said. */
  reason: string | null;
  /** When, by whom and why the bytes were removed (purge or takedown); null while trashed. */
  removedAt: Date | null;
  removedBy: string | null;
  removalReason: string | null;
}

/**
 * A WebDAV lock (RFC 4918 §6, §9.10): a write lock on `path`, and with depth `infinity` on
 * everything below it, held by `owner` and named by `token`. Kept in the catalog, so every node
 * sees and honours the same locks.
 */
export interface DavLock {
  /** The lock token, a URI (`urn:uuid:…`), unique. */
  token: string;
  /** The lock's root: the resource the LOCK named. */
  path: Path;
  depth: 'zero' | 'infinity';
  scope: 'exclusive' | 'shared';
  /** The user who took it; only they may submit its token. */
  owner: string;
  /** The content of the request's `DAV:owner` element, as XML text (returned to clients as sent); '' when none. */
  ownerXml: string;
  /** The timeout granted, in seconds. */
  timeoutSeconds: number;
  createdAt: Date;
  /** When it ends unless refreshed. */
  expiresAt: Date;
}
