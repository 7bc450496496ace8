/**
 * WebDAV write locks (RFC 4918 §6-7): who may take, refresh and release a lock, and the one
 * check every changing request passes, that it submitted the token of each lock covering what
 * it changes, as the lock's owner. Locks live in the catalog (`LockStore`), so every node
 * grants and honours the same ones. It speaks no HTTP: the WebDAV front parses the headers.
 */
import { randomUUID } from 'node:crypto';
import type { Actor, Backend } from './backend.ts';
import { LadingError } from './errors.ts';
import { type Path, isWithin } from './path.ts';
import type { Clock, LockStore } from './ports.ts';
import type { DavLock } from './types.ts';

/** The longest a lock is granted for, in seconds, whatever the client asks (an `Infinite` one included). */
export const MAX_LOCK_SECONDS = 24 * 3600;
/** What a lock is granted for when the client names no timeout, in seconds. */
export const DEFAULT_LOCK_SECONDS = 3600;

export interface LocksOptions {
  catalog: LockStore;
  backend: Pick<Backend, 'require'>;
  clock: Clock;
}

/** What a LOCK asks for. */
export interface LockRequest {
  depth: DavLock['depth'];
  scope: DavLock['scope'];
  ownerXml: string;
  /** The timeout asked for, in seconds (null: none named); granted up to `MAX_LOCK_SECONDS`. */
  timeoutSeconds: number | null;
}

/** One thing a request changes: a resource, with what lies below it when `below`. */
export interface LockTarget {
  path: Path;
  below?: boolean;
}

/** Whether `lock` covers `path`: its root, or below it when its depth is infinity. */
export function lockCovers(lock: DavLock, path: Path): boolean {
  return lock.path === path || (lock.depth === 'infinity' && isWithin(path, lock.path));
}

export class Locks {
  readonly #o: LocksOptions;

  constructor(options: LocksOptions) {
    this.#o = options;
  }

  /**
   * Locks `path` (which must exist) for `actor`, who needs write on it. Rejects with
   * `FORBIDDEN`, and with `LOCKED` when a live lock conflicts (see `LockStore.putLock`).
   */
  async lock(actor: Actor, path: Path, request: LockRequest): Promise<DavLock> {
    await this.#o.backend.require(actor, path, 'write');
    const now = this.#o.clock.now();
    const seconds = grantedSeconds(request.timeoutSeconds);
    const lock: DavLock = {
      token: `urn:uuid:${randomUUID()}`, path, depth: request.depth, scope: request.scope, owner: actor.user,
      ownerXml: request.ownerXml, timeoutSeconds: seconds, createdAt: now, expiresAt: new Date(now.getTime() + seconds * 1000),
    };
    const conflicts = await this.#o.catalog.putLock(lock, now);
    if (conflicts.length > 0) throw new LadingError('LOCKED', `'${path}' is locked${conflicts[0]!.path === path ? '' : ` (by a lock on '${conflicts[0]!.path}')`}.`, { details: { conflict: conflicts[0]!.path } });
    return lock;
  }

  /**
   * Refreshes the lock named `token`, which must cover `path` and be `actor`'s, for
   * `timeoutSeconds` (capped as for `lock`). Rejects with `PRECONDITION_FAILED` when no such
   * live lock covers `path`, `FORBIDDEN` when it is another user's.
   */
  async refresh(actor: Actor, path: Path, token: string, timeoutSeconds: number | null): Promise<DavLock> {
    const now = this.#o.clock.now();
    const lock = await this.#o.catalog.getLock(token, now);
    if (!lock || !lockCovers(lock, path)) throw new LadingError('PRECONDITION_FAILED', `No live lock with this token covers '${path}'.`);
    if (lock.owner !== actor.user) throw new LadingError('FORBIDDEN', 'This lock belongs to someone else.');
    const seconds = grantedSeconds(timeoutSeconds);
    const refreshed = await this.#o.catalog.refreshLock(token, seconds, new Date(now.getTime() + seconds * 1000), now);
    if (!refreshed) throw new LadingError('PRECONDITION_FAILED', `No live lock with this token covers '${path}'.`);
    return refreshed;
  }

  /**
   * Releases the lock named `token`, which must cover `path`. Its owner may release it, and so
   * may whoever owns the resource (an admin too). Rejects with `CONFLICT` when no such live
   * lock covers `path` (RFC 4918 §9.11.1), `FORBIDDEN` otherwise.
   */
  async unlock(actor: Actor, path: Path, token: string): Promise<void> {
    const lock = await this.#o.catalog.getLock(token, this.#o.clock.now());
    if (!lock || !lockCovers(lock, path)) throw new LadingError('CONFLICT', `No live lock with this token covers '${path}'.`);
    if (lock.owner !== actor.user) await this.#o.backend.require(actor, lock.path, 'own');
    await this.#o.catalog.deleteLock(token);
  }

  /** The live locks covering `path` (with `below`, also those under it). */
  async at(path: Path, below = false): Promise<DavLock[]> {
    return this.#o.catalog.locksAt(path, this.#o.clock.now(), { below });
  }

  /** The live lock named `token`, or null. */
  async get(token: string): Promise<DavLock | null> {
    return this.#o.catalog.getLock(token, this.#o.clock.now());
  }

  /**
   * Rejects with `LOCKED` unless the request may change every target: for each live lock
   * covering one (and, for a target `below`, each lock under it), `submitted` holds its token
   * and `actor` is its owner; among shared locks on one resource, one submitted suffices.
   */
  async check(actor: Actor, targets: readonly LockTarget[], submitted: ReadonlySet<string>): Promise<void> {
    const now = this.#o.clock.now();
    for (const target of targets) {
      const locks = await this.#o.catalog.locksAt(target.path, now, { below: target.below === true });
      if (locks.length === 0) continue;
      const held = (l: DavLock) => submitted.has(l.token) && l.owner === actor.user;
      const byRoot = new Map<string, DavLock[]>();
      for (const l of locks) byRoot.set(l.path, [...(byRoot.get(l.path) ?? []), l]);
      for (const [root, group] of byRoot) {
        const ok = group.every((l) => l.scope === 'shared') ? group.some(held) : group.filter((l) => l.scope === 'exclusive').every(held);
        if (!ok) throw new LadingError('LOCKED', `'${root}' is locked; send the lock's token in an If header.`, { details: { conflict: root } });
      }
    }
  }

  /** Forgets the locks on `path` and below (it was moved away or deleted). */
  async released(path: Path): Promise<void> {
    await this.#o.catalog.deleteLocksWithin(path);
  }
}

function grantedSeconds(asked: number | null): number {
  if (asked === null || !Number.isFinite(asked) || asked <= 0) return asked === Infinity ? MAX_LOCK_SECONDS : DEFAULT_LOCK_SECONDS;
  return Math.min(Math.floor(asked), MAX_LOCK_SECONDS);
}
