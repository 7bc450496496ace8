/**
 * Access lists as their owners see and change them: who may read, write or own an entity —
 * users, groups and `public` (every signed-in user) — on the entity itself and inherited from
 * the collections above it. Only a holder of `own` (or an admin) reads or changes a list. The
 * `anonymous` principal is not set here: publishing (`publishing.ts`) is its only way in. An
 * entity never loses its last owner; `public` never holds `own` (every user could then take the
 * entity over); the owner of a home keeps `own` on it. Takes ports; knows nothing of HTTP.
 */
import { type Actor, ANONYMOUS, type Backend, PUBLIC_GROUP, SYSTEM_OWNER, refusePublicOwn } from './backend.ts';
import { type Auditor, noAudit } from './audit.ts';
import { LadingError } from './errors.ts';
import { type Path, lineage } from './path.ts';
import type { AccountStore, NamespaceStore } from './ports.ts';
import { ACCESS_LEVELS, type AccessEntry, type AccessLevel, type Entity } from './types.ts';

/** The most entities "shared with me" answers; past it, the first ones by path and `truncated`. */
export const SHARED_WITH_ME_MAX = 1000;
/** How many held entities `sharedWith` reads from the catalog at a time. */
const SHARED_PAGE = 250;

/** An entity shared with a user, and the access the user holds on it. */
export interface SharedEntity {
  entity: Entity;
  /** The highest level the user holds there: through their own entries, their groups', `public`'s, or those of the collections above. */
  level: AccessLevel;
}

/** An entry held on a collection above the entity, which covers the entity too. */
export interface InheritedEntry extends AccessEntry {
  /** The collection the entry is set on. */
  from: Path;
}

/** The access list of an entity as its owner sees it. */
export interface AccessList {
  path: Path;
  /** The user who created the entity. */
  owner: string;
  /** Entries set on the entity itself, by principal. */
  entries: AccessEntry[];
  /**
   * Entries set on the collections above it, nearest collection first. Entries of the zone's
   * own owner (`_system`), which nobody signs in as, are left out.
   */
  inherited: InheritedEntry[];
}

export interface AccessControlOptions {
  backend: Pick<Backend, 'require' | 'levelOf' | 'homeOf'>;
  catalog: Pick<NamespaceStore, 'getEntity' | 'listAccess' | 'setAccess' | 'listEntitiesHeldBy'> & Pick<AccountStore, 'getUser'>;
  /** The audit trail every change is recorded in; none when absent. */
  trail?: Auditor;
}

export class AccessControl {
  readonly #o: AccessControlOptions;

  constructor(options: AccessControlOptions) {
    this.#o = options;
  }

  /**
   * The access list of the entity at `path`. Rejects with `FORBIDDEN` unless `actor` holds
   * `own` on it (whether or not it exists) and `NOT_FOUND` when it does not exist.
   */
  async list(actor: Actor, path: Path): Promise<AccessList> {
    const owner = await this.#ownedEntity(actor, path);
    const entries = await this.#o.catalog.listAccess(path);
    return { path, owner, entries, inherited: await this.#inherited(path) };
  }

  /**
   * Gives `principal` exactly `level` on `path` (and so on everything below it), replacing
   * what it held there; answers the new list. Rejects with `FORBIDDEN` unless `actor` holds
   * `own`, `NOT_FOUND` when the path does not exist or the principal is no user, admin or group
   * (nor `public`), `BAD_REQUEST` for an unknown level, for `anonymous` (publish instead) and
   * for `own` to `public`, `CONFLICT` when lowering an `own` entry would leave the entity without
   * an owner, and `FORBIDDEN` when lowering the home owner's entry on their home.
   */
  async grant(actor: Actor, path: Path, principal: string, level: AccessLevel): Promise<AccessList> {
    return (this.#o.trail ?? noAudit).track(actor, 'acl.set', path, () => this.#grant(actor, path, principal, level), undefined, { principal, level });
  }

  async #grant(actor: Actor, path: Path, principal: string, level: AccessLevel): Promise<AccessList> {
    const owner = await this.#ownedEntity(actor, path);
    if (!ACCESS_LEVELS.includes(level)) throw new LadingError('BAD_REQUEST', `level must be one of ${ACCESS_LEVELS.join(', ')}.`);
    await this.#mustBePrincipal(principal);
    refusePublicOwn(principal, level);
    await this.#keepsAnOwner(path, principal, level);
    if (level !== 'own') this.#keepsHomeOwner(path, owner, principal);
    await this.#o.catalog.setAccess(path, principal, level);
    return this.list(actor, path);
  }

  /**
   * Removes `principal`'s entry on `path` itself; answers the new list. Rejects with
   * `FORBIDDEN` unless `actor` holds `own`, `NOT_FOUND` when the path does not exist or has no
   * entry of `principal` (an inherited entry is changed on the collection it is set on),
   * `BAD_REQUEST` for `anonymous` (unpublish instead), `CONFLICT` when the entry is the
   * entity's last `own`, and `FORBIDDEN` for the home owner's entry on their home.
   */
  async revoke(actor: Actor, path: Path, principal: string): Promise<AccessList> {
    return (this.#o.trail ?? noAudit).track(actor, 'acl.set', path, () => this.#revoke(actor, path, principal), undefined, { principal, level: null });
  }

  async #revoke(actor: Actor, path: Path, principal: string): Promise<AccessList> {
    const owner = await this.#ownedEntity(actor, path);
    if (principal === ANONYMOUS) throw this.#anonymousRefused();
    const entries = await this.#o.catalog.listAccess(path);
    if (!entries.some((e) => e.principal === principal)) {
      const from = (await this.#inherited(path)).find((e) => e.principal === principal)?.from;
      throw new LadingError('NOT_FOUND', from
        ? `'${principal}' has no entry on '${path}' itself; its access is set on the collection '${from}'; change it there.`
        : `'${principal}' has no entry on '${path}'.`);
    }
    await this.#keepsAnOwner(path, principal, null);
    this.#keepsHomeOwner(path, owner, principal);
    await this.#o.catalog.setAccess(path, principal, null);
    return this.list(actor, path);
  }

  /**
   * What is shared with `actor`: the top-most entities outside the actor's home on which the
   * actor's user or one of its groups holds an entry of its own — entries of `public` (every
   * user) and `anonymous` (published) do not make an entity shared with anyone in particular —
   * sorted by path in byte order. An entity below one listed is not listed again (the one above
   * covers it). At most `SHARED_WITH_ME_MAX`; `truncated` says more were left out. Memory stays
   * bounded however many entries the actor holds: the catalog is read a page at a time, and
   * what lies below an entity already listed is skipped in the catalog, not read.
   */
  async sharedWith(actor: Actor): Promise<{ shared: SharedEntity[]; truncated: boolean }> {
    const principals = actor.principals.filter((p) => p !== PUBLIC_GROUP && p !== ANONYMOUS);
    const except = this.#o.backend.homeOf(actor.user);
    const taken: Entity[] = [];
    const takenPaths = new Set<string>();
    let from: { path: string; inclusive: boolean } | null = null;
    let truncated = false;
    scan: for (;;) {
      const page = await this.#o.catalog.listEntitiesHeldBy({ principals, except, from, limit: SHARED_PAGE });
      let below: string | undefined;
      for (const entity of page) {
        below = lineage(entity.path).slice(0, -1).find((p) => takenPaths.has(p));
        if (below !== undefined) continue;
        if (taken.length === SHARED_WITH_ME_MAX) {
          truncated = true;
          break scan;
        }
        taken.push(entity);
        takenPaths.add(entity.path);
      }
      if (page.length < SHARED_PAGE) break;
      if (below === '/') break;
      // NOTE: when the page ended below a listed entity T, everything from there up to `T0`
      // ('0' follows '/' in byte order) lies below T too, so the next page starts past it.
      from = below === undefined ? { path: page.at(-1)!.path, inclusive: false } : { path: `${below}0`, inclusive: true };
    }
    const levels = await Promise.all(taken.map((entity) => this.#o.backend.levelOf(actor, entity.path)));
    // NOTE: an entry removed since the scan leaves a null level; that entity is no longer shared.
    const shared = taken.flatMap((entity, i) => (levels[i] ? [{ entity, level: levels[i] }] : []));
    return { shared, truncated };
  }

  /** The entity's owner, once `actor` is known to hold `own` on it. `FORBIDDEN`, `NOT_FOUND`. */
  async #ownedEntity(actor: Actor, path: Path): Promise<string> {
    await this.#o.backend.require(actor, path, 'own');
    const entity = await this.#o.catalog.getEntity(path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    return entity.owner;
  }

  async #inherited(path: Path): Promise<InheritedEntry[]> {
    const above = lineage(path).slice(0, -1).reverse();
    const lists = await Promise.all(above.map(async (from) => (await this.#o.catalog.listAccess(from)).map((e) => ({ ...e, from }))));
    return lists.flat().filter((e) => e.principal !== SYSTEM_OWNER);
  }

  #anonymousRefused(): LadingError {
    return new LadingError('BAD_REQUEST', `'${ANONYMOUS}' (callers without a token) gets read access only by publishing the entity.`);
  }

  /** `NOT_FOUND` unless `principal` is `public` or an existing user, admin or group; `BAD_REQUEST` for `anonymous`. */
  async #mustBePrincipal(principal: string): Promise<void> {
    if (principal === ANONYMOUS) throw this.#anonymousRefused();
    if (principal === PUBLIC_GROUP) return;
    if (!(await this.#o.catalog.getUser(principal))) throw new LadingError('NOT_FOUND', `There is no user or group '${principal}'.`);
  }

  /**
   * `FORBIDDEN` when `principal` is the user whose home `path` is: nobody, a co-owner or the
   * user, lowers or removes that entry. The backend lets a user own their home whatever its
   * list says; refusing here keeps the list saying what holds.
   */
  #keepsHomeOwner(path: Path, owner: string, principal: string): void {
    if (principal !== owner || path !== this.#o.backend.homeOf(principal)) return;
    throw new LadingError('FORBIDDEN', `'${principal}' owns the home '${path}' and always keeps own on it; that entry cannot be lowered or removed.`);
  }

  /**
   * `CONFLICT` when giving `principal` `level` (null: nothing) on `path` would leave no
   * principal but the zone's own owner holding `own` there, directly or through a collection above.
   */
  async #keepsAnOwner(path: Path, principal: string, level: AccessLevel | null): Promise<void> {
    if (level === 'own') return;
    const after = (await this.#o.catalog.listAccess(path)).filter((e) => e.principal !== principal);
    const owners = [...after, ...(await this.#inherited(path))].filter((e) => e.level === 'own');
    if (owners.length === 0) {
      throw new LadingError('CONFLICT', `'${principal}' holds the last own access to '${path}'; grant own to another user or group first, so the entity keeps an owner.`);
    }
  }
}
