/**
 * Row mappers shared by the SQL catalog drivers: both keep the same tables and columns, so a
 * row means the same in SQLite and in PostgreSQL. Pure functions; no driver is imported here.
 */
import type { QuotaRecord } from '../../core/quotas.ts';
import type { AuditRecord } from '../../core/audit.ts';
import { LadingError } from '../../core/errors.ts';
import { type Path, TRASH_PREFIX } from '../../core/path.ts';
import type { JobQueueFigures, OidcRecord, StoredCa, StoredObject, TrackedBlob, UploadRecord } from '../../core/ports.ts';
import {
  ACCESS_LEVELS, type AccessLevel, type DataObject, type DavLock, type Entity, type EntityMarks, type JobRecord, type JobState, type PrincipalKind,
  type PublicationEvent, type S3KeyRecord, type SessionRecord, type ShareKind, type ShareRecord, type TrashEntry, type UserRecord, type WithdrawnState,
} from '../../core/types.ts';

export type Row = Record<string, unknown>;

/** The marks of `marksOf`'s rows (`uid`, and `published`, `shared`, `links` as 0/1 or booleans), leaving out the unmarked. */
export function marksFrom(rows: readonly Row[]): Map<string, EntityMarks> {
  const out = new Map<string, EntityMarks>();
  for (const row of rows) {
    const marks = { published: Boolean(row.published), shared: Boolean(row.shared), links: Boolean(row.links) };
    if (marks.published || marks.shared || marks.links) out.set(String(row.uid), marks);
  }
  return out;
}

export function levelOf(rank: number): AccessLevel {
  return ACCESS_LEVELS[rank - 1]!;
}

export function toEntity(row: Row): Entity {
  const base = {
    id: row.uid as string,
    path: row.path as Path,
    name: row.name as string,
    owner: row.owner as string,
    createdAt: new Date(Number(row.created_at)),
    modifiedAt: new Date(Number(row.modified_at)),
    pid: (row.pid as string | null) ?? null,
  };
  if (row.kind === 'collection') return { ...base, kind: 'collection' };
  const object: DataObject = { ...base, kind: 'dataobject' as const, size: Number(row.size), checksum: row.checksum as string, blob: row.blob as string };
  if (typeof row.etag === 'string') object.etag = row.etag;
  if (row.damaged_at !== null && row.damaged_at !== undefined) object.damaged = { at: new Date(Number(row.damaged_at)), reason: String(row.damage ?? '') };
  return object;
}

/**
 * The columns of a stored object for the fixity role (`e`: its entity row); both drivers
 * select these, so `toStoredObject` reads one shape.
 */
export const STORED_OBJECT_COLUMNS = 'e.uid, e.path, e.size, e.checksum, e.blob, e.verified_at, e.damaged_at, e.damage';

/**
 * The condition that the entity row `e` holds bytes still kept: a live one (its path starts
 * with '/'), or one in the hidden subtree of a trash entry still `trashed` (not purged or taken
 * down). `S` is the schema prefix.
 */
export const STORED_OBJECT_KEPT = (S: string): string => `(substr(e.path, 1, 1) = '/' OR EXISTS (SELECT 1 FROM ${S}trash_entries t
  WHERE t.state = 'trashed' AND (e.path = '${TRASH_PREFIX}' || t.entity_uid OR substr(e.path, 1, length(t.entity_uid) + ${TRASH_PREFIX.length + 1}) = '${TRASH_PREFIX}' || t.entity_uid || '/')))`;

export function toStoredObject(row: Row): StoredObject {
  const verified = Number(row.verified_at ?? 0);
  return {
    id: row.uid as string,
    path: row.path as string,
    size: Number(row.size),
    checksum: row.checksum as string,
    blob: row.blob as string,
    verifiedAt: verified > 0 ? new Date(verified) : null,
    damaged: row.damaged_at === null || row.damaged_at === undefined ? null : { at: new Date(Number(row.damaged_at)), reason: String(row.damage ?? '') },
  };
}

export function toStoredCa(row: Row): StoredCa {
  return {
    generation: Number(row.generation), certPem: row.cert_pem as string, sealedKey: row.sealed_key as string,
    createdAt: new Date(Number(row.created_at)),
  };
}

export function toS3Key(row: Row): S3KeyRecord {
  return {
    id: row.id as string, user: row.user_name as string, secret: row.secret as string,
    label: (row.label as string | null) ?? null, createdAt: new Date(Number(row.created_at)),
  };
}

/**
 * The columns of a trash entry with its entity's (joined as `e`); `S` is the schema prefix.
 * Both drivers select these, so `toTrashEntry` reads one shape.
 */
export const trashEntryColumns = (S: string): string => `t.entity_uid, t.path AS trashed_path, t.state, t.trashed_at, t.trashed_by, t.reason,
  t.removed_at, t.removed_by, t.removal_reason, e.kind, e.name, e.owner,
  (SELECT value FROM ${S}avus v WHERE v.entity_id = e.id AND v.attribute = 'PID' ORDER BY v.value LIMIT 1) AS pid,
  (SELECT COALESCE(SUM(s.size), 0) FROM ${S}entities s WHERE s.kind = 'dataobject'
    AND (s.path = e.path OR (s.path >= e.path || '/' AND s.path < e.path || '0'))) AS total_size`;

export function toTrashEntry(row: Row): TrashEntry {
  const at = (v: unknown) => (v === null || v === undefined ? null : new Date(Number(v)));
  return {
    id: row.entity_uid as string,
    kind: row.kind === 'collection' ? 'collection' : 'dataobject',
    path: row.trashed_path as Path,
    name: row.name as string,
    owner: row.owner as string,
    pid: (row.pid as string | null) ?? null,
    size: Number(row.total_size ?? 0),
    state: row.state as WithdrawnState,
    trashedAt: new Date(Number(row.trashed_at)),
    trashedBy: row.trashed_by as string,
    reason: (row.reason as string | null) ?? null,
    removedAt: at(row.removed_at),
    removedBy: (row.removed_by as string | null) ?? null,
    removalReason: (row.removal_reason as string | null) ?? null,
  };
}

/** The stable id of the trashed entity whose hidden subtree holds the stored path `path`. */
export function trashRootOf(path: string): string {
  return path.slice(TRASH_PREFIX.length).split('/')[0]!;
}

export function toUser(row: Row): UserRecord {
  return {
    name: row.name as string,
    kind: row.kind as PrincipalKind,
    passwordHash: (row.password_hash as string | null) ?? null,
    createdAt: new Date(Number(row.created_at)),
    disabled: row.disabled === true || Number(row.disabled) === 1,
  };
}

export function toSession(row: Row): SessionRecord {
  const at = (v: unknown) => (v === null || v === undefined ? null : new Date(Number(v)));
  return {
    tokenHash: row.token_hash as string,
    id: row.id as string,
    kind: row.kind === 'browser' ? 'browser' : 'api',
    user: row.user_name as string,
    label: (row.label as string | null) ?? null,
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
    idleExpiresAt: at(row.idle_expires_at),
    lastUsedAt: at(row.last_used_at),
    credential: (row.credential as string | null) ?? null,
  };
}

export function toOidcRecord(row: Row | undefined): OidcRecord | null {
  if (!row) return null;
  return {
    id: row.id as string,
    payload: row.payload as string,
    expiresAt: row.expires_at === null ? null : new Date(Number(row.expires_at)),
    consumedAt: row.consumed_at === null ? null : new Date(Number(row.consumed_at)),
  };
}

export function toJob(row: Row): JobRecord {
  return {
    id: String(row.id),
    kind: row.kind as string,
    payload: row.payload as string,
    state: row.state as JobState,
    attempts: Number(row.attempts),
    runAfter: new Date(Number(row.run_after)),
    leaseOwner: (row.lease_owner as string | null) ?? null,
    leaseUntil: row.lease_until === null ? null : new Date(Number(row.lease_until)),
    lastError: (row.last_error as string | null) ?? null,
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

/** The job queue's figures from rows of `state`, `n` (how many) and `oldest` (first `created_at`) grouped by state. */
export function queueFigures(rows: readonly Row[]): JobQueueFigures {
  const of = (state: JobState) => rows.find((r) => r.state === state);
  const pending = of('pending');
  return {
    pending: Number(pending?.n ?? 0), running: Number(of('running')?.n ?? 0), failed: Number(of('failed')?.n ?? 0),
    oldestPending: pending?.oldest == null ? null : new Date(Number(pending.oldest)),
  };
}

export function toTrackedBlob(row: Row): TrackedBlob {
  return {
    blob: row.blob as string,
    trackedAt: new Date(Number(row.since)),
    owner: (row.owner as string | null) ?? null,
    ownerSeenAt: row.seen_at === null || row.seen_at === undefined ? null : new Date(Number(row.seen_at)),
  };
}

export function toPublicationEvent(row: Row): PublicationEvent {
  return {
    entityId: row.entity_uid as string,
    path: row.path as Path,
    action: row.action as PublicationEvent['action'],
    actor: row.actor as string,
    at: new Date(Number(row.at)),
  };
}

export function toShare(row: Row): ShareRecord {
  return {
    id: row.id as string,
    tokenHash: row.token_hash as string,
    entityId: row.entity_uid as string,
    kind: row.kind as ShareKind,
    creator: row.creator as string,
    createdAt: new Date(Number(row.created_at)),
    expiresAt: row.expires_at === null ? null : new Date(Number(row.expires_at)),
    maxUses: row.max_uses === null ? null : Number(row.max_uses),
    uses: Number(row.uses),
    maxBytes: row.max_bytes === null || row.max_bytes === undefined ? null : Number(row.max_bytes),
    bytesUsed: Number(row.bytes_used ?? 0),
    passwordHash: (row.password_hash as string | null) ?? null,
  };
}

/** The refusal of a link whose creator is no user (`ShareStore.createShare`). */
export function unknownCreator(creator: string): LadingError {
  return new LadingError('NOT_FOUND', `The user '${creator}' does not exist.`);
}

/** The refusal of a fenced commit whose blob recovery took for abandoned (`commitObject`). */
export function abandonedBlob(path: Path): LadingError {
  return new LadingError('UNAVAILABLE', `The upload to '${path}' took too long to reach the catalog and was given up as abandoned; upload it again.`);
}

export function toUpload(row: Row): UploadRecord {
  const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(Number(v)));
  return {
    id: row.id as string,
    owner: row.owner as string,
    path: row.path as Path,
    overwrite: row.overwrite === true || Number(row.overwrite) === 1,
    length: row.length === null || row.length === undefined ? null : Number(row.length),
    offset: Number(row.received),
    metadata: row.metadata as string,
    blob: row.blob as string,
    state: row.state as string,
    status: row.status as UploadRecord['status'],
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
    expiresAt: new Date(Number(row.expires_at)),
    leaseHolder: (row.lease_holder as string | null) ?? null,
    leaseUntil: date(row.lease_until),
    entityId: (row.entity_id as string | null) ?? null,
    jobIds: JSON.parse(row.job_ids as string) as string[],
  };
}

/** The refusal of a commit whose resumable upload is gone, complete or leased by another request. */
export function uploadNotHeld(id: string): LadingError {
  return new LadingError('CONFLICT', `The upload ${id} was completed, terminated or taken over by another request meanwhile.`);
}

export function toDavLock(row: Row): DavLock {
  return {
    token: row.token as string,
    path: row.path as Path,
    depth: row.depth as DavLock['depth'],
    scope: row.scope as DavLock['scope'],
    owner: row.owner as string,
    ownerXml: row.owner_xml as string,
    timeoutSeconds: Number(row.timeout_seconds),
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
  };
}

/**
 * Whether the locks `a` and `b` conflict (RFC 4918 §6.1): one of them is exclusive and each
 * covers the other's root or one lies within the other's depth. Both drivers check a new lock
 * against the live ones they read, in the transaction that records it.
 */
export function locksConflict(a: Pick<DavLock, 'path' | 'depth' | 'scope'>, b: Pick<DavLock, 'path' | 'depth' | 'scope'>): boolean {
  if (a.scope === 'shared' && b.scope === 'shared') return false;
  const within = (p: string, root: string) => root === '/' || p === root || p.startsWith(root + '/');
  return a.path === b.path || (a.depth === 'infinity' && within(b.path, a.path)) || (b.depth === 'infinity' && within(a.path, b.path));
}

/** A `quotas` row as a `QuotaRecord`. */
export function toQuota(row: Row): QuotaRecord {
  return {
    path: row.path as Path,
    user: (row.user_name as string | null) ?? null,
    maxBytes: row.max_bytes === null || row.max_bytes === undefined ? null : Number(row.max_bytes),
    maxObjects: row.max_objects === null || row.max_objects === undefined ? null : Number(row.max_objects),
    bytes: Number(row.bytes_used),
    objects: Number(row.objects_used),
  };
}

/** An audit record from its row (both drivers store the same columns). */
export function toAuditRecord(row: Row): AuditRecord {
  return {
    seq: Number(row.seq), at: new Date(Number(row.at)), actor: (row.actor as string | null) ?? null, address: (row.address as string | null) ?? null,
    door: row.door as AuditRecord['door'], action: row.action as AuditRecord['action'], path: (row.path as string | null) ?? null,
    detail: JSON.parse(row.detail as string) as AuditRecord['detail'], outcome: row.outcome as AuditRecord['outcome'],
    prevHash: row.prev_hash as string, hash: row.hash as string,
  };
}

/**
 * Whether `session` is live at `now`, as the catalogs' `getSession` reads it (and as the SQL
 * condition LIVE says): before its expiry, and before its idle expiry when it has one.
 */
export function sessionLiveAt(session: SessionRecord, now: Date): boolean {
  const t = now.getTime();
  return session.expiresAt.getTime() > t && (session.idleExpiresAt === null || session.idleExpiresAt.getTime() > t);
}
