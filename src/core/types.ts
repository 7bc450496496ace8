/**
 * Domain types of the storage backend: entities (collections and data objects), users and
 * groups, access levels, metadata (AVUs) and sessions. Plain data, no behaviour, no I/O.
 */
import type { Path } from './path.ts';

export type AccessLevel = 'read' | 'write' | 'own';
export const ACCESS_LEVELS: readonly AccessLevel[] = ['read', 'write', 'own'];
export const ACCESS_RANK: Record<AccessLevel, number> = { read: 1, write: 2, own: 3 };

interface EntityBase {
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
}

export interface Collection extends EntityBase {
  kind: 'collection';
}

export type Entity = DataObject | Collection;

export type PrincipalKind = 'user' | 'admin' | 'group';

export interface UserRecord {
  name: string;
  kind: PrincipalKind;
  /** scrypt hash (see `core/password.ts`), null for users who only log in through an identity provider. */
  passwordHash: string | null;
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

export interface SessionRecord {
  /** SHA-256 of the bearer token, hex; the token itself is never stored. */
  tokenHash: string;
  user: string;
  createdAt: Date;
  expiresAt: Date;
  /** Opaque credential material for the backend (e.g. an encrypted proxy chain), or null. */
  credential: string | null;
}
