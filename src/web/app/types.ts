/** The shapes the app reads from the API (see /api/specs), as far as it uses them. */

export interface Session {
  user: string;
  home: string;
  csrf_token: string;
  expires_at: string;
  idle_expires_at: string;
  provider: 'embedded' | 'external';
  /** The lifetimes API tokens may be given, in seconds (absent from an older server). */
  token_lifetime?: { default: number; max: number };
  /** The S3 listener's base URL for S3 clients; null when this server serves no S3 (then the app offers no S3 keys). */
  s3_endpoint: string | null;
}

/** An entity record (spec 2.2, with lading's additions to `metadata`). */
export interface RecordFields {
  dataobject: string;
  link: string;
  location: string;
  metadata: {
    PID: string | null; checksum: string | null; name: string; object_type: 'dataobject' | 'collection';
    size?: number | null; modified?: string; owner?: string;
    /** In listings the caller owns (lading's additions): published, granted to others, with live share links. */
    published?: boolean; shared?: boolean; share_links?: boolean;
  };
  path: string;
  /** The caller's access, in "shared with me" records only (not in spec 2.2). */
  access?: AccessLevel;
}

export type AccessLevel = 'read' | 'write' | 'own';

/** The app's view of one entity. */
export interface Entry {
  name: string;
  path: string;
  kind: 'dataobject' | 'collection';
  size: number | null;
  owner: string | null;
  modified: string | null;
  checksum: string | null;
  pid: string | null;
  /** The caller's access, when the answer says (records of "shared with me"). */
  access: AccessLevel | null;
  /** How far the entity is open to others, when the listing says (to its owner). */
  marks: EntryMarksOf | null;
}

/** Published (anyone may read it), shared (granted to other users or groups), with share links. */
export interface EntryMarksOf { published: boolean; shared: boolean; links: boolean }

export function entryOf(record: Record<string, RecordFields>): Entry {
  const [name, r] = Object.entries(record)[0]!;
  return {
    name,
    path: r.path === '/' ? `/${name}` : `${r.path}/${name}`,
    kind: r.metadata.object_type,
    size: r.metadata.size ?? null,
    owner: r.metadata.owner ?? null,
    modified: r.metadata.modified ?? null,
    checksum: r.metadata.checksum,
    pid: r.metadata.PID,
    access: r.access ?? null,
    marks: r.metadata.published === undefined ? null : { published: r.metadata.published, shared: r.metadata.shared ?? false, links: r.metadata.share_links ?? false },
  };
}

export interface Avu { attribute: string; value: string; unit: string | null }

export interface AclEntry { principal: string; level: AccessLevel; from?: string }
export interface AclList { path: string; owner: string; entries: AclEntry[]; inherited: AclEntry[] }

export interface Publication {
  path: string;
  published: boolean;
  via: string | null;
  published_at: string | null;
  published_by: string | null;
  public_url: string | null;
}

export interface ShareLink {
  id: string;
  kind: 'read' | 'upload';
  path: string | null;
  creator: string;
  created_at: string;
  expires_at: string | null;
  max_uses: number | null;
  uses: number;
  /** A drop box's bound on the bytes deposited, all files together; null for a read link. */
  max_bytes: number | null;
  bytes_used: number;
  password: boolean;
  state: 'active' | 'expired' | 'used up' | 'gone';
}

export interface CreatedShare extends ShareLink { token: string; url: string }

export interface ApiToken {
  id: string;
  label: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
}

export interface CreatedToken { id: string; token: string; expires_at: string | null; label?: string }

/** An S3 access key as `/api/s3/keys` lists it (never its secret). */
export interface S3Key {
  access_key_id: string;
  label: string | null;
  created_at: string;
}

export interface CreatedS3Key extends S3Key { secret_access_key: string }

export interface ProxyState {
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  seconds_left: number;
  expired: boolean;
}

/** A member of a shared collection, as `/api/shared` lists it. */
export interface SharedMember {
  name: string;
  kind: 'collection' | 'dataobject';
  size: number | null;
  checksum: string | null;
  created_at: string;
  modified_at: string;
  path: string;
  link: string;
}

/** What the server puts in the page of published data (`/api/public/…`). */
export type PublicPageData =
  | { kind: 'public'; url: string; root: string; rootPath: string; entry: SharedMember & { owner: string } }
  | { error: { status: number; title: string; message: string; passwordRequired: boolean } };

/** What the server puts in a share link's page. */
export type SharePageData =
  | { kind: 'read'; url: string; entry: SharedMember; root: string }
  | { kind: 'upload'; url: string }
  | { error: { status: number; title: string; message: string; passwordRequired: boolean; url?: string | null } };
