/**
 * Share links: the use cases behind them and every decision about them. An owner creates,
 * lists and revokes links to a collection or a data object; anyone holding a link's token
 * opens it, and reads below it (a `read` link) or deposits new files directly inside it (an
 * `upload` link, a drop box), acting as the link's creator through the `Backend`. It holds the
 * abuse limits (active links per user, requests per link and per address, failed passwords),
 * counted in the catalog so every node counts together, and writes the audit lines. It keeps
 * no link's validity in memory: every request looks the link up again. Knows nothing of HTTP
 * and hashes passwords only through the functions it is given.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Readable, Transform } from 'node:stream';
import type { Actor, Backend, CollectionWalk, ReadPlan } from './backend.ts';
import { type AuditVia, type Auditor, noAudit } from './audit.ts';
import { LadingError, isLadingError } from './errors.ts';
import type { Observer } from './observer.ts';
import { type Path, ROOT, childOf, isWithin, parseName, parsePath } from './path.ts';
import type { ByteRange, Clock, NamespaceStore, OidcStore, ResourceStream, ShareStore } from './ports.ts';
import { ACCESS_RANK, type Collection, type DataObject, type Entity, type ShareKind, type ShareRecord } from './types.ts';

/** The abuse limits of share links; each is a count in a fixed window, or a count. */
export interface ShareLimits {
  /** Active links (neither expired nor used up) one user may hold; creating one more is refused. */
  maxActivePerUser: number;
  /** Length of the window requests are counted in, in seconds. */
  requestWindowSeconds: number;
  /** Requests one link may receive per window, from all addresses together. */
  requestsPerLink: number;
  /** Requests one client address may send to share links per window, to any link or none. */
  requestsPerAddress: number;
  /**
   * Wrong passwords one link accepts from one address per password window before refusing that
   * address every attempt; from every address together it accepts `LINK_PASSWORD_FACTOR` times
   * as many before refusing everyone.
   */
  maxFailedPasswords: number;
  /** Length of the window failed passwords are counted in, in seconds. */
  passwordWindowSeconds: number;
  /** Seconds an expired link is kept (answering `GONE`, listed as expired) before it is removed. */
  expiredRetentionSeconds: number;
  /**
   * Bytes a drop box takes in all, every file together, when its creator gives no `maxBytes`
   * (and for drop boxes made before links had a bound of their own).
   */
  dropMaxBytes: number;
}

/** Password hashing, given by the composition root (the core does not import `identity/`). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Compares in constant time; false for any malformed hash. */
  verify(password: string, hash: string): Promise<boolean>;
}

/** The structured logger audit lines go to (pino's shape). */
export interface ShareAuditLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface ShareServiceOptions {
  backend: Pick<Backend, 'require' | 'levelOf' | 'actorFor' | 'statAs' | 'listAs' | 'openObjectAs' | 'uploadAs' | 'walkAs'>;
  catalog: ShareStore & Pick<NamespaceStore, 'getEntity' | 'getEntityById'> & Pick<OidcStore, 'oidcCount' | 'oidcDeleteExpired'>;
  clock: Clock;
  passwords: PasswordHasher;
  limits: ShareLimits;
  log: ShareAuditLog;
  /** Told of each use of a link and each refusal by a limit (the metrics); none by default. */
  observer?: Pick<Observer, 'shareUsed' | 'limited'>;
  /** The audit trail links' creation, use and revocation are recorded in; none when absent. */
  trail?: Auditor;
}

/** What an owner asks for when creating a link. */
export interface NewShare {
  /** The collection or data object to share. */
  path: Path;
  kind: ShareKind;
  /** End of life; absent or null for none. */
  expiresAt?: Date | null;
  /** Seconds from now to the end of life, instead of `expiresAt`. */
  expiresIn?: number | null;
  /** How many uses the link allows (see `ShareService`); absent or null for no limit. */
  maxUses?: number | null;
  /** A password the link's users must send; absent or null for none. */
  password?: string | null;
  /**
   * For a drop box: how many bytes it takes in all, every file together; absent or null for
   * the configured `dropMaxBytes`. Not for a read link.
   */
  maxBytes?: number | null;
}

/** What an owner changes of a link: a field left out stays, null removes the bound. */
export interface ShareChange {
  /** A new end of life, or null for none. */
  expiresAt?: Date | null;
  /** Seconds from now to the new end of life, instead of `expiresAt`. */
  expiresIn?: number | null;
  /** How many uses the link allows in all (uses taken so far count), or null for no limit. */
  maxUses?: number | null;
}

/** Whether a link works now, as its owner sees it. */
export type ShareState = 'active' | 'expired' | 'used up' | 'gone';

/** A link as its owner sees it: the record (its password hash is never shown), where it leads, and whether it works. */
export interface ShareView {
  share: ShareRecord;
  /** The entity's path now, or null when the entity is gone. */
  path: Path | null;
  state: ShareState;
  /** A drop box's byte bound: its own, or the configured default for one without; null for a read link. */
  maxBytes: number | null;
}

/**
 * A link accepts this many times `maxFailedPasswords` wrong passwords from every address
 * together: a guesser at one address cannot lock the password out for the others, and one
 * spread over many addresses is still stopped.
 */
export const LINK_PASSWORD_FACTOR = 5;

/** Longest password a link may have (scrypt takes any length; this bounds the work a request asks for). */
export const MAX_SHARE_PASSWORD_LENGTH = 1024;

/** How long a password found right is remembered, so a viewer's many range requests do not each run scrypt. */
const VERIFIED_TTL_MS = 10 * 60_000;
const VERIFIED_MAX = 1024;
/** How often, at most, expired counters are removed while requests come. */
const PURGE_EVERY_MS = 10 * 60_000;
/**
 * Bytes a deposit of unknown length reserves of its drop box's bound at a time: each
 * reservation is one catalog update, and a deposit holds at most this much it may not use.
 */
const RESERVE_STEP = 8 * 1024 * 1024;

/** What an opened link holds that only this module sees: the record, and the actor the link acts as. */
const OPENED = new WeakMap<ShareAccess, { share: ShareRecord; actor: Actor }>();

/**
 * An opened link: what one request holding its token may do. Only `ShareService.open` makes
 * one that the service accepts; the actor the link acts as stays inside this module, so the
 * HTTP layer can pass an access along but never act with it.
 */
export class ShareAccess {
  readonly kind: ShareKind;
  /** The shared entity as it was when the link was opened. */
  readonly root: Entity;
  /** Whether the link needs a password (which was given, or it would not be open). */
  readonly passwordProtected: boolean;

  private constructor(share: ShareRecord, root: Entity, actor: Actor) {
    this.kind = share.kind;
    this.root = root;
    this.passwordProtected = share.passwordHash !== null;
    OPENED.set(this, { share, actor });
  }

  /** @internal Used by `ShareService.open` only (the constructor is private to keep it so). */
  static mint(share: ShareRecord, root: Entity, actor: Actor, key: symbol): ShareAccess {
    if (key !== MINT) throw new TypeError('A ShareAccess is made only by ShareService.open.');
    return new ShareAccess(share, root, actor);
  }

  /**
   * The path of `entity` relative to the shared entity: `/` for the entity itself, `/a/b` below
   * it. What answers to link users say instead of the owner's full path.
   */
  relative(entity: Entity): Path {
    if (entity.path === this.root.path) return ROOT;
    return entity.path.slice(this.root.path === ROOT ? 0 : this.root.path.length) as Path;
  }
}

const MINT = Symbol('ShareAccess');

/** The record and actor of an access `open` made; `TypeError` for any other object. */
function inner(access: ShareAccess): { share: ShareRecord; actor: Actor } {
  const found = OPENED.get(access);
  if (!found) throw new TypeError('This ShareAccess was not made by ShareService.open.');
  return found;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Seconds until `resetsAt`, at least 1. */
function secondsUntil(resetsAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
}

function tooMany(message: string, retryAfter: number): LadingError {
  return new LadingError('TOO_MANY_REQUESTS', `${message} Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`, { details: { retryAfter } });
}

// NOTE: one answer for every link that leads nowhere (unknown, revoked, entity gone, creator
// without access), so that whoever holds a token learns nothing about the owner's account.
function leadsNowhere(): LadingError {
  return new LadingError('NOT_FOUND', 'No such link: it was revoked, or what it shared is no longer there. Ask its owner for a new one.');
}

/**
 * The share-link use cases. A use is a download that sends bytes (a whole object, 200, or a
 * range, 206 — each counts) or an uploaded file; HEAD, 304, listings and refused requests take
 * none. A link stops working when revoked (404), expired or used up (410), when its entity is
 * gone, or when its creator no longer holds the access it grants (`read` for a read link,
 * `write` for a drop box) or is disabled (404) — all checked on every request.
 */
export class ShareService {
  readonly #o: ShareServiceOptions;
  // NOTE: remembers that a password was right for a link, keyed by a hash of the link, its
  // stored hash and the password; validity is still read from the catalog on every request.
  readonly #verified = new Map<string, number>();
  #lastPurge = 0;

  constructor(options: ShareServiceOptions) {
    this.#o = options;
  }

  /**
   * Creates a link to the entity at `input.path` and resolves with its view and its token,
   * which is shown only now (the catalog keeps its SHA-256). The caller needs `own` on the
   * entity. The link acts as the caller — or, when an admin creates it, as the entity's owner,
   * since a link never carries an admin's powers — who must hold the access the link grants.
   * Rejects with `FORBIDDEN` (no `own`; or the user the link would act as cannot read, or for a
   * drop box write, the entity), `NOT_FOUND`, `NOT_A_COLLECTION` (a drop box onto a data
   * object), `BAD_REQUEST` (both `expiresAt` and `expiresIn`, an expiry not in the future or
   * not a date, a use count or byte bound that is not a positive integer, a byte bound for a
   * read link, an empty or over-long password),
   * and `TOO_MANY_REQUESTS` (`details.retryAfter`) when the user the link acts as already
   * holds `maxActivePerUser` active links (`FORBIDDEN` for everyone when that limit is 0).
   * Logs an audit line (never the token or the password).
   */
  async create(actor: Actor, input: NewShare): Promise<{ view: ShareView; token: string }> {
    // NOTE: the record names the link's id, never its token or password.
    return this.#trail.track(actor, 'share.create', input.path, () => this.#create(actor, input), ({ view }) => ({
      share: view.share.id, kind: input.kind, passwordProtected: (input.password ?? null) !== null,
    }), { kind: input.kind });
  }

  get #trail(): Auditor {
    return this.#o.trail ?? noAudit;
  }

  async #create(actor: Actor, input: NewShare): Promise<{ view: ShareView; token: string }> {
    const { backend, catalog, clock, limits } = this.#o;
    const now = clock.now();
    await backend.require(actor, input.path, 'own');
    const entity = await catalog.getEntity(input.path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${input.path}' does not exist.`);
    if (input.kind === 'upload' && entity.kind !== 'collection') {
      throw new LadingError('NOT_A_COLLECTION', `'${input.path}' is a data object; a drop box (kind upload) needs a collection.`);
    }
    const expiresAt = expiryOf(input, now);
    const maxUses = input.maxUses ?? null;
    if (maxUses !== null && !(Number.isSafeInteger(maxUses) && maxUses > 0)) throw new LadingError('BAD_REQUEST', 'max_uses must be a positive integer.');
    const maxBytes = input.kind === 'upload' ? input.maxBytes ?? limits.dropMaxBytes : null;
    if (input.kind === 'read' && input.maxBytes != null) throw new LadingError('BAD_REQUEST', 'max_bytes bounds what a drop box (kind upload) takes; a read link takes nothing.');
    if (maxBytes !== null && !(Number.isSafeInteger(maxBytes) && maxBytes > 0)) throw new LadingError('BAD_REQUEST', 'max_bytes must be a positive integer.');
    const password = input.password ?? null;
    if (password !== null && (password.length === 0 || password.length > MAX_SHARE_PASSWORD_LENGTH)) {
      throw new LadingError('BAD_REQUEST', `A link's password must have 1 to ${MAX_SHARE_PASSWORD_LENGTH} characters.`);
    }

    const creator = actor.admin ? entity.owner : actor.user;
    const acting = await backend.actorFor(creator).catch((err: unknown) => {
      if (isLadingError(err, 'INVALID_CREDENTIAL')) throw new LadingError('FORBIDDEN', `A link acts as '${creator}', who is not an active user.`);
      throw err;
    });
    const needed = input.kind === 'read' ? 'read' : 'write';
    const held = await backend.levelOf(acting, entity.path);
    if (held === null || ACCESS_RANK[held] < ACCESS_RANK[needed]) {
      throw new LadingError('FORBIDDEN', `A link acts as '${creator}', who does not have ${needed} access to '${entity.path}'.`);
    }
    if (limits.maxActivePerUser === 0) throw new LadingError('FORBIDDEN', 'This server allows no share links.');
    if ((await catalog.countActiveShares(creator, now)) >= limits.maxActivePerUser) {
      const retryAfter = await this.#whenOneEnds(creator, now);
      this.#o.log.warn({ user: actor.user, creator, path: entity.path, kind: input.kind, retryAfter }, 'share link refused: too many active links');
      this.#o.observer?.limited?.('share_links_per_user');
      throw tooMany(`'${creator}' already has ${limits.maxActivePerUser} active links, the most allowed; revoke some (DELETE /api/shares/<id>) or wait until one expires.`, retryAfter);
    }

    const token = randomBytes(32).toString('base64url');
    const share = await catalog.createShare({
      id: randomUUID(), tokenHash: sha256Hex(token), entityId: entity.id, kind: input.kind, creator, createdAt: now,
      expiresAt, maxUses, maxBytes, passwordHash: password === null ? null : await this.#o.passwords.hash(password),
    });
    this.#o.log.info({
      user: actor.user, creator, path: entity.path, kind: share.kind, share: share.id,
      expiresAt: expiresAt?.toISOString() ?? null, maxUses, ...(maxBytes === null ? {} : { maxBytes }), passwordProtected: password !== null,
    }, 'share link created');
    return { view: viewOf(share, entity, now, limits.dropMaxBytes), token };
  }

  /**
   * The links of the entity at `path`, oldest first. The caller needs `own` on it. Rejects
   * with `FORBIDDEN` and `NOT_FOUND`.
   */
  async listOf(actor: Actor, path: Path): Promise<ShareView[]> {
    await this.#o.backend.require(actor, path, 'own');
    const entity = await this.#o.catalog.getEntity(path);
    if (!entity) throw new LadingError('NOT_FOUND', `'${path}' does not exist.`);
    const now = this.#o.clock.now();
    return (await this.#o.catalog.listSharesOfEntity(entity.id)).map((share) => viewOf(share, entity, now, this.#o.limits.dropMaxBytes));
  }

  /** The links that act as the caller (those the caller made, and those an admin made on the caller's entities), oldest first. */
  async listMine(actor: Actor): Promise<ShareView[]> {
    const now = this.#o.clock.now();
    const out: ShareView[] = [];
    for (const share of await this.#o.catalog.listSharesOfCreator(actor.user)) {
      out.push(viewOf(share, await this.#o.catalog.getEntityById(share.entityId), now, this.#o.limits.dropMaxBytes));
    }
    return out;
  }

  /**
   * Removes the links that expired more than `limits.expiredRetentionSeconds` before `now`
   * (until then they answer `GONE` and are listed as expired); resolves with how many. Safe on
   * every node at once.
   */
  async purgeExpired(now: Date): Promise<number> {
    return this.#o.catalog.purgeExpiredShares(new Date(now.getTime() - this.#o.limits.expiredRetentionSeconds * 1000));
  }

  /**
   * Revokes the link `id`: the next request holding its token, on any node, gets 404.
   * Allowed to the user the link acts as, to an admin, and to whoever holds `own` on its
   * entity. Rejects with `NOT_FOUND` when there is no such link or the caller may not revoke
   * it (one answer for both). Resolves with the view the link had. Logs an audit line.
   */
  async revoke(actor: Actor, id: string): Promise<ShareView> {
    let path: string | null = null;
    return this.#trail.track(actor, 'share.revoke', () => path, async () => {
      const view = await this.#revoke(actor, id);
      path = view.path;
      return view;
    }, undefined, { share: id });
  }

  /**
   * Changes the expiry and the use limit of the link `id` (its token stays, so the link already
   * handed out keeps working under the new bounds; its uses so far still count). Allowed to whom
   * `revoke` allows. A link that expired or was used up works again once its new bounds allow
   * it. Rejects with `NOT_FOUND` when there is no such link or the caller may not change it (one
   * answer for both), `BAD_REQUEST` for an empty change, both `expiresAt` and `expiresIn`, an
   * expiry not in the future, or a use limit that is not a positive integer, and with
   * `TOO_MANY_REQUESTS` when it would bring back a link while its creator holds the most active
   * links allowed. Resolves with the
   * link's view as it is now. Records `share.update` in the audit trail and logs a line.
   */
  async update(actor: Actor, id: string, change: ShareChange): Promise<ShareView> {
    let path: string | null = null;
    return this.#trail.track(actor, 'share.update', () => path, async () => {
      const view = await this.#update(actor, id, change);
      path = view.path;
      return view;
    }, (view) => ({ expiresAt: view.share.expiresAt?.toISOString() ?? null, maxUses: view.share.maxUses }), { share: id });
  }

  async #update(actor: Actor, id: string, change: ShareChange): Promise<ShareView> {
    const { catalog, clock, limits } = this.#o;
    const now = clock.now();
    const timed = change.expiresAt !== undefined || change.expiresIn !== undefined;
    if (!timed && change.maxUses === undefined) throw new LadingError('BAD_REQUEST', 'Give what to change: expires_at or expires_in (null for no expiry), max_uses (null for no limit).');
    const expiresAt = timed ? expiryOf(change, now) : undefined;
    const maxUses = change.maxUses;
    if (maxUses !== undefined && maxUses !== null && !(Number.isSafeInteger(maxUses) && maxUses > 0)) throw new LadingError('BAD_REQUEST', 'max_uses must be a positive integer.');
    const { share, entity } = await this.#manageable(actor, id, 'change');
    // NOTE: a link brought back to life counts against its creator's active links, as a new one would.
    const after = { ...share, ...(expiresAt === undefined ? {} : { expiresAt }), ...(maxUses === undefined ? {} : { maxUses }) };
    if (viewOf(share, entity, now, limits.dropMaxBytes).state !== 'active' && viewOf(after, entity, now, limits.dropMaxBytes).state === 'active'
      && (await catalog.countActiveShares(share.creator, now)) >= limits.maxActivePerUser) {
      throw tooMany(`'${share.creator}' already has ${limits.maxActivePerUser} active links, the most allowed; revoke some or wait until one expires.`, await this.#whenOneEnds(share.creator, now));
    }
    const updated = await catalog.updateShare(share.id, { ...(expiresAt === undefined ? {} : { expiresAt }), ...(maxUses === undefined ? {} : { maxUses }) });
    if (!updated) throw new LadingError('NOT_FOUND', `No link '${id}' that you may change.`);
    const view = viewOf(updated, entity, now, limits.dropMaxBytes);
    this.#o.log.info({
      user: actor.user, creator: share.creator, path: view.path, kind: share.kind, share: share.id,
      expiresAt: updated.expiresAt?.toISOString() ?? null, maxUses: updated.maxUses,
    }, 'share link changed');
    return view;
  }

  /**
   * The link `id` and its entity, when `actor` may manage it: the user the link acts as, an
   * admin, or a holder of `own` on its entity. `NOT_FOUND` otherwise (and for no such link).
   */
  async #manageable(actor: Actor, id: string, verb: string): Promise<{ share: ShareRecord; entity: Entity | null }> {
    const { backend, catalog } = this.#o;
    const share = await catalog.getShare(id);
    const entity = share ? await catalog.getEntityById(share.entityId) : null;
    const allowed = share !== null && (actor.admin || actor.user === share.creator
      || (entity !== null && (await backend.levelOf(actor, entity.path)) === 'own'));
    if (!share || !allowed) throw new LadingError('NOT_FOUND', `No link '${id}' that you may ${verb}.`);
    return { share, entity };
  }

  async #revoke(actor: Actor, id: string): Promise<ShareView> {
    const { catalog, clock } = this.#o;
    const { share, entity } = await this.#manageable(actor, id, 'revoke');
    const view = viewOf(share, entity, clock.now(), this.#o.limits.dropMaxBytes);
    await catalog.revokeShare(id);
    this.#o.log.info({ user: actor.user, creator: share.creator, path: view.path, kind: share.kind, share: share.id }, 'share link revoked');
    return view;
  }

  /**
   * Opens the link whose token is `token` for one request from `client.address`, checking
   * everything on the spot: the requests of the address and of the link in the current window
   * (`TOO_MANY_REQUESTS` with `details.retryAfter`), the token (`NOT_FOUND`: unknown or
   * revoked), the password when the link has one (`UNAUTHENTICATED` with
   * `details.passwordRequired` when it is missing or wrong; `TOO_MANY_REQUESTS`, even for the
   * right one, once the link has had `maxFailedPasswords` wrong ones from this address in the
   * window, or `LINK_PASSWORD_FACTOR` times as many from every address), the expiry
   * and the uses (`GONE`), and that the entity is still there and its creator still holds the
   * access the link grants (`NOT_FOUND`).
   */
  async open(token: string, client: { password: string | null; address: string }): Promise<ShareAccess> {
    const { backend, catalog, clock, limits } = this.#o;
    const now = clock.now();
    this.#purgeCounters(now);
    const window = limits.requestWindowSeconds;
    const byAddress = await catalog.oidcCount(`share-requests:address:${client.address}`, now, window, true);
    if (byAddress.count > limits.requestsPerAddress) {
      this.#o.observer?.limited?.('share_requests_per_address');
      throw tooMany(`This address sent more than ${limits.requestsPerAddress} requests to share links in ${window} seconds.`, secondsUntil(byAddress.resetsAt, now));
    }
    const share = await catalog.getShareByToken(sha256Hex(token));
    if (!share) throw leadsNowhere();
    const byLink = await catalog.oidcCount(`share-requests:link:${share.id}`, now, window, true);
    if (byLink.count > limits.requestsPerLink) {
      this.#o.observer?.limited?.('share_requests_per_link');
      throw tooMany(`This link received more than ${limits.requestsPerLink} requests in ${window} seconds.`, secondsUntil(byLink.resetsAt, now));
    }
    const via: AuditVia = { door: 'share', address: client.address };
    if (share.passwordHash !== null) {
      await this.#checkPassword(share, share.passwordHash, client, now).catch(async (err: unknown) => {
        // NOTE: refusals by the password limiter are not recorded one by one: it bounds them.
        if (isLadingError(err, 'UNAUTHENTICATED') && client.password !== null) {
          await this.#trail.record({ user: null, via }, 'share.use', null, 'denied', { share: share.id, error: 'WRONG_PASSWORD' });
        }
        throw err;
      });
    }
    if (share.expiresAt !== null && share.expiresAt.getTime() <= now.getTime()) {
      throw new LadingError('GONE', `This link expired at ${share.expiresAt.toISOString()}; ask its owner for a new one.`);
    }
    if (share.maxUses !== null && share.uses >= share.maxUses) throw usedUp(share);
    const root = await catalog.getEntityById(share.entityId);
    if (!root) throw leadsNowhere();
    const actor = await backend.actorFor(share.creator, via).catch((err: unknown) => {
      throw isLadingError(err, 'INVALID_CREDENTIAL') ? leadsNowhere() : err;
    });
    const needed = share.kind === 'read' ? 'read' : 'write';
    const held = await backend.levelOf(actor, root.path);
    if (held === null || ACCESS_RANK[held] < ACCESS_RANK[needed]) throw leadsNowhere();
    return ShareAccess.mint(share, root, actor, MINT);
  }

  /**
   * The entity at `relative` below a read link's entity (`/` for the entity itself). Rejects
   * with `FORBIDDEN` for a drop box (it cannot list or download), `NOT_FOUND` when nothing is
   * there (or `relative` goes below a data object), `INVALID_PATH` for a path too long.
   */
  async entry(access: ShareAccess, relative: Path): Promise<Entity> {
    const path = this.#readable(access, relative);
    return this.#conceal(access, () => this.#o.backend.statAs(inner(access).actor, path));
  }

  /** The members of the collection at `relative` below a read link's entity, sorted by name. Rejects as `entry`, and with `NOT_A_COLLECTION`. */
  async list(access: ShareAccess, relative: Path): Promise<{ collection: Collection; children: Entity[] }> {
    const path = this.#readable(access, relative);
    return this.#conceal(access, () => this.#o.backend.listAs(inner(access).actor, path));
  }

  /**
   * Opens the data object at `relative` below a read link's entity, as `Backend.openObjectAs`
   * does, and takes a use of the link when bytes are to be sent (not for HEAD or 304). Rejects
   * as `entry`, with `IS_A_COLLECTION`, with what `plan` throws, and with `GONE` when the last
   * use went to another request meanwhile.
   */
  async openObject(access: ShareAccess, relative: Path, plan: (object: DataObject) => ReadPlan): Promise<{
    object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null;
  }> {
    const path = this.#readable(access, relative);
    const opened = await this.#conceal(access, () => this.#o.backend.openObjectAs(inner(access).actor, path, plan));
    if (opened.stream === null) return opened;
    let taken: boolean;
    try {
      taken = await this.#o.catalog.consumeShareUse(inner(access).share.id, this.#o.clock.now());
    } catch (err) {
      opened.stream.destroy();
      throw err;
    }
    if (!taken) {
      opened.stream.destroy();
      throw usedUp(inner(access).share);
    }
    this.#o.observer?.shareUsed?.('read');
    await this.#used(access, opened.object.path);
    return opened;
  }

  /** Records a use of the link behind `access` (who used it is not known: only its address). */
  async #used(access: ShareAccess, path: string, detail: Record<string, string | number> = {}): Promise<void> {
    const { share, actor } = inner(access);
    await this.#trail.record({ user: null, via: actor.via }, 'share.use', path, 'ok', { share: share.id, kind: share.kind, creator: share.creator, ...detail });
  }

  /**
   * The members of the collection at `relative` below a read link's entity, for an archive of
   * it (see `Backend.walkAs`). Takes no use: call `takeUse` before sending the archive's bytes.
   * Rejects as `entry`, and with `NOT_A_COLLECTION`.
   */
  async walk(access: ShareAccess, relative: Path): Promise<CollectionWalk> {
    const path = this.#readable(access, relative);
    return this.#conceal(access, () => this.#o.backend.walkAs(inner(access).actor, path));
  }

  /**
   * Takes one use of a read link for an answer that sends bytes other than through
   * `openObject` (an archive of a collection: one use, however many members it holds).
   * `GONE` when the last use went to another request meanwhile.
   */
  async takeUse(access: ShareAccess): Promise<void> {
    if (!(await this.#o.catalog.consumeShareUse(inner(access).share.id, this.#o.clock.now()))) throw usedUp(inner(access).share);
    this.#o.observer?.shareUsed?.('read');
    await this.#used(access, access.root.path, { archive: 1 });
  }

  /**
   * Stores `source` as a new data object named `name` directly inside a drop box's collection,
   * owned by the link's creator and under the creator's rules (PIDs included); never over an
   * existing one. Takes a use before reading the body and gives it back when the upload
   * fails. The bytes count against the link's byte bound as they are reserved in the catalog:
   * `length` (a declared body length) at once, before any byte is read, otherwise step by step
   * as the body streams; a failed deposit gives back all it reserved, a stored one what it did
   * not use. Rejects with `FORBIDDEN` for a read link, `INVALID_PATH` for a name the name rule
   * refuses, `CONFLICT` when the name is taken, `GONE` when the link was used up meanwhile,
   * `PAYLOAD_TOO_LARGE` when the deposit would pass the link's byte bound (nothing is stored),
   * and as `Backend.uploadAs` does (`PAYLOAD_TOO_LARGE`, `DIGEST_MISMATCH`, `INCOMPLETE_BODY`,
   * `STORAGE_FULL`, …); no message names the owner's paths. Logs an audit line per stored file.
   */
  async upload(access: ShareAccess, name: string, source: Readable, options: { expected?: { sha256?: Buffer; md5?: Buffer }; length?: number } = {}): Promise<DataObject> {
    const share = inner(access).share;
    if (access.kind !== 'upload') throw new LadingError('FORBIDDEN', 'This link is read-only: it lists and downloads, and takes no uploads.');
    const path = childOf(access.root.path, parseName(name));
    if (await this.#o.catalog.getEntity(path)) throw new LadingError('CONFLICT', `'${name}' already exists here; choose another name (a drop box never overwrites).`);
    if (!(await this.#o.catalog.consumeShareUse(share.id, this.#o.clock.now()))) throw usedUp(share);
    const bound = new DepositBound(this.#o.catalog, share, this.#o.limits.dropMaxBytes);
    let stored = false;
    try {
      if (options.length !== undefined) await bound.take(options.length);
      const counted = bound.counting(source);
      const { object } = await this.#conceal(access, () => this.#o.backend.uploadAs(inner(access).actor, path, counted.stream, {
        overwrite: false, expected: options.expected, ...(options.length === undefined ? {} : { declaredSize: options.length }),
      }))
        .finally(counted.detach);
      stored = true;
      this.#o.observer?.shareUsed?.('upload');
      this.#o.log.info({ share: share.id, creator: share.creator, path: object.path, size: object.size }, 'share link deposit');
      await this.#used(access, object.path, { size: object.size });
      return object;
    } catch (err) {
      await this.#o.catalog.releaseShareUse(share.id);
      if (isLadingError(err, 'CONFLICT')) throw new LadingError('CONFLICT', `'${name}' already exists here; choose another name (a drop box never overwrites).`, { cause: err });
      throw err;
    } finally {
      await bound.settle(stored);
    }
  }

  /** The path `relative` names below a read link's entity. */
  #readable(access: ShareAccess, relative: Path): Path {
    if (access.kind !== 'read') throw new LadingError('FORBIDDEN', 'This link is a drop box: it takes uploads (PUT /api/shared/<token>/<name>, or a form POST) and cannot list or download.');
    if (relative === ROOT) return access.root.path;
    if (access.root.kind !== 'collection') throw new LadingError('NOT_FOUND', 'This link shares one data object; it has no members.');
    // NOTE: both parts are clean paths; parsing the joined one again checks its total length.
    const path = parsePath(`${access.root.path === ROOT ? '' : access.root.path}${relative}`);
    if (!isWithin(path, access.root.path)) throw leadsNowhere();
    return path;
  }

  /**
   * Runs `fn`, rewriting the messages of the backend's refusals so they name paths relative
   * to the shared entity: whoever holds a link does not learn where the owner keeps it.
   */
  async #conceal<T>(access: ShareAccess, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!isLadingError(err) || !err.message.includes(access.root.path) || access.root.path === ROOT) throw err;
      const root = access.root.path;
      const message = err.message.replaceAll(`${root}/`, '/').replaceAll(`'${root}'`, `'/'`).replaceAll(root, '/');
      throw new LadingError(err.code, message, { cause: err, details: err.details });
    }
  }

  async #checkPassword(share: ShareRecord, hash: string, client: { password: string | null; address: string }, now: Date): Promise<void> {
    const { catalog, limits } = this.#o;
    const window = limits.passwordWindowSeconds;
    // NOTE: a link's id holds no '/', so the first one ends it: no two pairs share a key.
    const keys = [`share-password-fail:${share.id}/${client.address}`, `share-password-fail:${share.id}`];
    const bounds = [limits.maxFailedPasswords, limits.maxFailedPasswords * LINK_PASSWORD_FACTOR];
    const counts = await Promise.all(keys.map((key) => catalog.oidcCount(key, now, window, false)));
    const limited = counts.filter((c, i) => c.count >= bounds[i]!);
    if (limited.length > 0) {
      const retryAfter = secondsUntil(new Date(Math.max(...limited.map((c) => c.resetsAt.getTime()))), now);
      this.#o.log.warn({ share: share.id, address: client.address, retryAfter }, 'share link refused: too many wrong passwords');
      this.#o.observer?.limited?.('share_passwords');
      throw tooMany('Too many wrong passwords for this link.', retryAfter);
    }
    if (client.password === null) {
      throw new LadingError('UNAUTHENTICATED', 'This link needs its password: send it with HTTP Basic authentication, any user name (curl -u :PASSWORD).', { details: { passwordRequired: true } });
    }
    if (await this.#passwordMatches(share, hash, client.password, now)) return;
    await Promise.all(keys.map((key) => catalog.oidcCount(key, now, window, true)));
    this.#o.log.warn({ share: share.id, address: client.address }, 'share link: wrong password');
    throw new LadingError('UNAUTHENTICATED', 'Wrong password for this link.', { details: { passwordRequired: true } });
  }

  async #passwordMatches(share: ShareRecord, hash: string, password: string, now: Date): Promise<boolean> {
    if (password.length > MAX_SHARE_PASSWORD_LENGTH) return false;
    const key = createHash('sha256').update(share.id).update('\0').update(hash).update('\0').update(password).digest('base64');
    const until = this.#verified.get(key);
    if (until !== undefined && until > now.getTime()) return true;
    this.#verified.delete(key);
    if (!(await this.#o.passwords.verify(password, hash))) return false;
    if (this.#verified.size >= VERIFIED_MAX) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(key, now.getTime() + VERIFIED_TTL_MS);
    return true;
  }

  /** Seconds until the first of `creator`'s active links expires; an hour when none will. */
  async #whenOneEnds(creator: string, now: Date): Promise<number> {
    const ends = (await this.#o.catalog.listSharesOfCreator(creator))
      .map((s) => s.expiresAt?.getTime())
      .filter((t): t is number => t !== undefined && t > now.getTime());
    return ends.length > 0 ? secondsUntil(new Date(Math.min(...ends)), now) : 3600;
  }

  // NOTE: counters of past windows count for nothing; removing them only keeps the catalog
  // small, so once per ten minutes per process, riding on requests, is enough.
  #purgeCounters(now: Date): void {
    if (now.getTime() - this.#lastPurge < PURGE_EVERY_MS) return;
    this.#lastPurge = now.getTime();
    this.#o.catalog.oidcDeleteExpired(now).catch((err: unknown) => this.#o.log.warn({ err }, 'shares: removing expired counters failed'));
  }
}

/**
 * One deposit's share of its drop box's byte bound: what it reserved in the catalog and what
 * it used. Reservations are atomic in the catalog, so deposits racing on any node never pass
 * the bound together; `settle` gives back what the deposit does not keep.
 */
class DepositBound {
  readonly #catalog: Pick<ShareStore, 'reserveShareBytes' | 'releaseShareBytes'>;
  readonly #share: ShareRecord;
  readonly #fallback: number;
  #reserved = 0;
  #used = 0;

  constructor(catalog: Pick<ShareStore, 'reserveShareBytes' | 'releaseShareBytes'>, share: ShareRecord, fallback: number) {
    this.#catalog = catalog;
    this.#share = share;
    this.#fallback = fallback;
  }

  /**
   * Reserves exactly `bytes` more (a declared length). `PAYLOAD_TOO_LARGE` when the bound has
   * no room for them.
   */
  async take(bytes: number): Promise<void> {
    if (bytes > 0 && !(await this.#catalog.reserveShareBytes(this.#share.id, bytes, this.#fallback))) throw this.#full();
    this.#reserved += bytes;
  }

  /**
   * Counts `bytes` that arrived, reserving more when they pass what is reserved: a step ahead
   * when there is room for it, else just what is needed. `PAYLOAD_TOO_LARGE` when even that
   * does not fit.
   */
  async use(bytes: number): Promise<void> {
    this.#used += bytes;
    const needed = this.#used - this.#reserved;
    if (needed <= 0) return;
    const ahead = Math.max(needed, RESERVE_STEP);
    if (await this.#catalog.reserveShareBytes(this.#share.id, ahead, this.#fallback)) {
      this.#reserved += ahead;
      return;
    }
    await this.take(needed);
  }

  /**
   * `source` as a stream that counts its bytes with `use` and fails with `PAYLOAD_TOO_LARGE`
   * (before passing a byte past the bound on) when the bound is full. Errors of `source` pass
   * on; `source` itself is never destroyed here (the HTTP layer answers and then drains or
   * closes it).
   */
  counting(source: Readable): { stream: Readable; detach: () => void } {
    const stream = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        this.use(chunk.length).then(() => done(null, chunk), done);
      },
    });
    const fail = (err: unknown): void => {
      if (!stream.destroyed) stream.destroy(err instanceof Error ? err : new Error(String(err)));
    };
    const onClose = (): void => {
      if (!source.readableEnded) fail(new Error('The request body ended before it was complete.'));
    };
    if (source.destroyed && !source.readableEnded) {
      fail(source.errored ?? new Error('The request body ended before it was complete.'));
      return { stream, detach: () => {} };
    }
    source.on('error', fail);
    source.on('close', onClose);
    source.pipe(stream);
    return {
      stream,
      detach: () => {
        source.off('error', fail);
        source.off('close', onClose);
        source.unpipe(stream);
      },
    };
  }

  /** Gives back what the deposit reserved and does not keep: all of it unless `stored`. Never throws. */
  async settle(stored: boolean): Promise<void> {
    const back = stored ? this.#reserved - this.#used : this.#reserved;
    this.#reserved -= back;
    if (back > 0) await this.#catalog.releaseShareBytes(this.#share.id, back).catch(() => {});
  }

  #full(): LadingError {
    const bound = this.#share.maxBytes ?? this.#fallback;
    return new LadingError('PAYLOAD_TOO_LARGE', `This drop box takes at most ${bound} bytes in all, and this file does not fit in what is left; nothing was stored.`);
  }
}

/** The end of life `input` asks for, or null. `BAD_REQUEST` as `ShareService.create` says. */
function expiryOf(input: Pick<NewShare, 'expiresAt' | 'expiresIn'>, now: Date): Date | null {
  const { expiresAt = null, expiresIn = null } = input;
  if (expiresAt !== null && expiresIn !== null) throw new LadingError('BAD_REQUEST', 'Give expires_at or expires_in, not both.');
  if (expiresIn !== null && !(Number.isFinite(expiresIn) && expiresIn > 0)) throw new LadingError('BAD_REQUEST', 'expires_in must be a positive number of seconds.');
  const at = expiresIn !== null ? new Date(now.getTime() + expiresIn * 1000) : expiresAt;
  if (at === null) return null;
  if (Number.isNaN(at.getTime())) throw new LadingError('BAD_REQUEST', 'The expiry is not a date: use ISO 8601, e.g. 2026-06-30T12:00:00Z.');
  if (at.getTime() <= now.getTime()) throw new LadingError('BAD_REQUEST', 'The expiry must be in the future.');
  return at;
}

function usedUp(share: ShareRecord): LadingError {
  return new LadingError('GONE', `This link was used up (${share.maxUses} use${share.maxUses === 1 ? '' : 's'}); ask its owner for a new one.`);
}

function viewOf(share: ShareRecord, entity: Entity | null, now: Date, dropMaxBytes: number): ShareView {
  let state: ShareState = 'active';
  if (entity === null) state = 'gone';
  else if (share.expiresAt !== null && share.expiresAt.getTime() <= now.getTime()) state = 'expired';
  else if (share.maxUses !== null && share.uses >= share.maxUses) state = 'used up';
  return { share, path: entity?.path ?? null, state, maxBytes: share.kind === 'upload' ? share.maxBytes ?? dropMaxBytes : null };
}
