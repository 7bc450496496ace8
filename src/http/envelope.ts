/**
 * The response envelope of spec section 2.1, and the entity records of 2.2–2.5. Pure functions
 * from domain values to wire shapes; the routes never build envelopes by hand.
 */
import { baseName, parentOf, type Path } from '../core/path.ts';
import type { Entity, EntityMarks } from '../core/types.ts';

export type DataType = "<class 'list'>" | "<class 'dict'>" | "<class 'str'>" | "<class 'NoneType'>";

export interface Envelope<T> {
  Meta: { data_type: DataType; elements: number; errors: number; status: number };
  Response: { data: T; errors: Record<string, string>[] | null };
}

function describe(data: unknown): { data_type: DataType; elements: number } {
  if (Array.isArray(data)) return { data_type: "<class 'list'>", elements: data.length };
  if (typeof data === 'string') return { data_type: "<class 'str'>", elements: 1 };
  if (data === null || data === undefined) return { data_type: "<class 'NoneType'>", elements: 0 };
  return { data_type: "<class 'dict'>", elements: Object.keys(data as object).length };
}

/** A success envelope around `data`. */
export function envelope<T>(data: T, status = 200): Envelope<T> {
  return { Meta: { ...describe(data), errors: 0, status }, Response: { data, errors: null } };
}

/** An error envelope: `data` null, one `{title: message}` object per error. */
export function errorEnvelope(status: number, errors: Record<string, string>[]): Envelope<null> {
  return {
    Meta: { data_type: "<class 'NoneType'>", elements: 0, errors: errors.length, status },
    Response: { data: null, errors },
  };
}

/** Where links and backend locations point; fixed per request. */
export interface Urls {
  /** e.g. `https://staging.example.org` (no trailing slash). */
  base: string;
  /** e.g. `lading://storage.example.org` (no trailing slash). */
  backend: string;
}

// NOTE: the characters encodeURIComponent leaves as they are, and the separator.
const NOTHING_TO_ENCODE = /^[A-Za-z0-9\-_.!~*'()/]*$/;

/** Percent-encodes each segment of a path for use in a URL. */
export function encodePath(path: Path): string {
  if (NOTHING_TO_ENCODE.test(path)) return path;
  return path.split('/').map(encodeURIComponent).join('/');
}

export function linkOf(urls: Urls, path: Path): string {
  return `${urls.base}/api/registered${encodePath(path)}`;
}

/** Where anyone reads a published entity: its URL under `/api/public`. */
export function publicLinkOf(urls: Pick<Urls, 'base'>, path: Path): string {
  return `${urls.base}/api/public${encodePath(path)}`;
}

/** A PID's landing page here, `/api/pids/<pid>`: the URL of a withdrawn entity's record (its tombstone). */
export function pidLinkOf(base: string, pid: string): string {
  return `${base}/api/pids/${pid.split('/').map(encodeURIComponent).join('/')}`;
}

export function locationOf(urls: Urls, path: Path): string {
  return `${urls.backend}${path}`;
}

export interface EntityRecord {
  dataobject: string;
  link: string;
  location: string;
  metadata: {
    PID: string | null; checksum: string | null; name: string; object_type: 'dataobject' | 'collection';
    /** Bytes of a data object; null for a collection. An addition to spec 2.2, for listings in long format. */
    size: number | null;
    /** When the entity last changed (ISO 8601). An addition to spec 2.2. */
    modified: string;
    /** The user who owns the entity. An addition to spec 2.2, for file browsers. */
    owner: string;
    /** Its marks (a listing asked with marks=true, by an owner): additions to spec 2.2. */
    published?: boolean; shared?: boolean; share_links?: boolean;
  };
  path: string;
}

/** `{<name>: record}` as in spec 2.2; `link` is made by `link` (default: the registered link). */
export function entityRecord(urls: Urls, entity: Entity & { marks?: EntityMarks }, link: (urls: Urls, path: Path) => string = linkOf): Record<string, EntityRecord> {
  const { marks } = entity;
  return {
    [entity.name]: {
      dataobject: entity.name,
      link: link(urls, entity.path),
      location: locationOf(urls, entity.path),
      metadata: {
        PID: entity.pid,
        checksum: entity.kind === 'dataobject' ? entity.checksum : null,
        name: entity.name,
        object_type: entity.kind,
        size: entity.kind === 'dataobject' ? entity.size : null,
        modified: entity.modifiedAt.toISOString(),
        owner: entity.owner,
        ...(marks ? { published: marks.published, shared: marks.shared, share_links: marks.links } : {}),
      },
      path: parentOf(entity.path),
    },
  };
}

/** Spec 2.3. */
export function uploadResult(urls: Urls, entity: Entity & { kind: 'dataobject' }) {
  return {
    PID: entity.pid,
    checksum: entity.checksum,
    filename: entity.name,
    link: linkOf(urls, entity.path),
    location: locationOf(urls, entity.path),
    path: parentOf(entity.path),
  };
}

/** Spec 2.4. */
export function collectionResult(urls: Urls, path: Path) {
  return { link: linkOf(urls, path), location: locationOf(urls, path), path };
}

/** Spec 2.5. */
export function renameResult(urls: Urls, path: Path) {
  return { filename: baseName(path), link: linkOf(urls, path), location: locationOf(urls, path), path: parentOf(path) };
}
