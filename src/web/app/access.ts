/**
 * What the signed-in user may do where: `own` in their home; elsewhere, what "shared with me"
 * (`GET /api/access/shared-with-me`) says of the shared entity the path is in (or is); unknown
 * otherwise (something made public, say), when the pages offer everything and the API decides.
 * The pages use it to leave out controls the user cannot use; the API still decides every
 * request. "Shared with me" is read once and again whenever its page is opened.
 */
import { useEffect, useState } from 'preact/hooks';
import { request } from './api.ts';
import { type AccessLevel, type Entry, type RecordFields, type Session, entryOf } from './types.ts';

export interface SharedWithMe {
  entries: Entry[];
  /** More entities are shared than the server answers (the first 1,000 by path). */
  truncated: boolean;
}

let shared: Promise<SharedWithMe> | null = null;

/**
 * What others share with the user, read once (again with `fresh`). Rejects with `ApiError`
 * (404 from a server without the route).
 */
export function sharedWithMe(fresh = false): Promise<SharedWithMe> {
  if (fresh || !shared) {
    const reading = request('GET', '/api/access/shared-with-me').then(async (res) => {
      const body = (await res.json()) as { Meta: { truncated?: boolean }; Response: { data: Record<string, RecordFields>[] } };
      return { entries: body.Response.data.map(entryOf), truncated: body.Meta.truncated === true };
    });
    // NOTE: a failed read is not kept: the next page to ask tries again.
    reading.catch(() => { if (shared === reading) shared = null; });
    shared = reading;
  }
  return shared;
}

/** Forgets what was read (at sign-out: the next user's is another). */
export function forgetShared(): void {
  shared = null;
}

const within = (path: string, root: string) => path === root || path.startsWith(root === '/' ? '/' : `${root}/`);

/** The user's access at `path`, and the shared entity it comes from (null in the home or when unknown). */
export interface Access {
  level: AccessLevel | null;
  sharedRoot: Entry | null;
}

export async function accessAt(session: Session, path: string): Promise<Access> {
  if (within(path, session.home)) return { level: 'own', sharedRoot: null };
  const found = await sharedWithMe().then((s) => s.entries.filter((e) => within(path, e.path)), () => []);
  // NOTE: shared entities do not nest (one below another is not listed), so at most one holds the path.
  const root = found[0] ?? null;
  return { level: root?.access ?? null, sharedRoot: root };
}

/** `accessAt` for a page: undefined while it is being found. */
export function useAccess(session: Session, path: string): Access | undefined {
  const [access, setAccess] = useState<{ path: string; access: Access } | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void accessAt(session, path).then((a) => { if (live) setAccess({ path, access: a }); });
    return () => { live = false; };
  }, [session, path]);
  return access?.path === path ? access.access : undefined;
}

/** A level as the pages say it. */
export const LEVEL_TEXT: Record<AccessLevel, string> = { read: 'Read', write: 'Read and write', own: 'Own' };

/** Whether `level` lets one change things (upload, create, rename, metadata): unknown counts as yes. */
export function canWrite(level: AccessLevel | null): boolean {
  return level !== 'read';
}

/** Whether `level` lets one share, see and change who has access, and publish: unknown counts as yes. */
export function canOwn(level: AccessLevel | null): boolean {
  return level === null || level === 'own';
}
