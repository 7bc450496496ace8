/**
 * Quotas: a bound on the bytes and the data objects a collection's tree holds (a user's quota
 * is its home's), with the usage counted by the catalog in the transaction of every change that
 * alters it (see `QuotaStore`). This module holds the types, the one computation of what a
 * change does to the quotas it touches (used by both catalog drivers inside their
 * transactions), the refusal `QUOTA_EXCEEDED` and the service the admin commands and the API
 * use. It must not count anything itself: the catalog's counters are the one truth.
 */
import { LadingError } from './errors.ts';
import { type Path, isWithin, lineage, parsePath } from './path.ts';
import type { Actor, Backend } from './backend.ts';
import type { QuotaStore } from './catalog.ts';

/** A quota and the usage it bounds, as the catalog keeps them. */
export interface QuotaRecord {
  /** The collection whose tree (everything below it, and what of it is in the trash) the quota bounds. */
  path: Path;
  /** The user whose home `path` is, when the quota was set by user name; null otherwise. */
  user: string | null;
  /** Bytes allowed; null for no bound. */
  maxBytes: number | null;
  /** Data objects allowed; null for no bound. */
  maxObjects: number | null;
  /** Bytes held: the sizes of the data objects below `path`, those in the trash included. */
  bytes: number;
  /** Data objects held, those in the trash included (collections are not counted). */
  objects: number;
}

/** Bytes and data objects. */
export interface Usage {
  bytes: number;
  objects: number;
}

/**
 * One change of usage inside a transaction: `amount` leaves the tree at `removed` and enters
 * the one at `added` (either null: a creation or a removal for good). With `moves`, quotas
 * set at `removed` or below it travel with the entities (a rename), so they are not charged.
 */
export interface UsageChange {
  removed: Path | null;
  added: Path | null;
  amount: Usage;
  moves?: boolean;
}

/**
 * What `changes` do to `quotas` (those whose trees the changes touch): the delta of each quota
 * it changes. Throws `QUOTA_EXCEEDED` (with the first quota passed) when a delta that adds
 * bytes or objects would take a quota past its bound; a change that adds nothing is never
 * refused, even over a bound lowered since.
 */
export function quotaDeltas(quotas: readonly QuotaRecord[], changes: readonly UsageChange[]): Map<Path, Usage> {
  const out = new Map<Path, Usage>();
  for (const quota of quotas) {
    let bytes = 0;
    let objects = 0;
    for (const change of changes) {
      if (change.moves && change.removed && isWithin(quota.path, change.removed)) continue;
      const sign = (change.added && isWithin(change.added, quota.path) ? 1 : 0) - (change.removed && isWithin(change.removed, quota.path) ? 1 : 0);
      bytes += sign * change.amount.bytes;
      objects += sign * change.amount.objects;
    }
    if (bytes === 0 && objects === 0) continue;
    if ((bytes > 0 && quota.maxBytes !== null && quota.bytes + bytes > quota.maxBytes)
      || (objects > 0 && quota.maxObjects !== null && quota.objects + objects > quota.maxObjects)) {
      throw quotaExceeded(quota, { bytes, objects });
    }
    out.set(quota.path, { bytes, objects });
  }
  return out;
}

/**
 * The paths whose quotas `changes` may touch: every collection above (and at) each path they
 * name.
 */
export function quotaPathsOf(changes: readonly { removed: Path | null; added: Path | null }[]): Path[] {
  const out = new Set<Path>();
  for (const c of changes) {
    for (const p of [c.removed, c.added]) if (p !== null) for (const at of lineage(p)) out.add(at);
  }
  return [...out];
}

/** The refusal of a write that would take `quota` past its bound by `needs`. */
export function quotaExceeded(quota: QuotaRecord, needs: Usage): LadingError {
  const of = quota.user === null ? `the collection ${quota.path}` : `${quota.user} (${quota.path})`;
  const overBytes = needs.bytes > 0 && quota.maxBytes !== null && quota.bytes + needs.bytes > quota.maxBytes;
  const what = overBytes
    ? `${formatBytes(quota.maxBytes!)} allowed, ${formatBytes(quota.bytes)} used, this write needs ${formatBytes(needs.bytes)}`
    : `${quota.maxObjects} data objects allowed, ${quota.objects} held, this write adds ${needs.objects}`;
  return new LadingError('QUOTA_EXCEEDED', `Over the quota of ${of}: ${what}; nothing was stored. What the trash holds counts: emptying it frees space.`, {
    details: { quota: quota.path, maxBytes: quota.maxBytes, maxObjects: quota.maxObjects, bytes: quota.bytes, objects: quota.objects, needs },
  });
}

/** The refusal of a move whose quotas would land on a quota set at or below `to`. */
export function quotaInTheWay(to: string): LadingError {
  return new LadingError('CONFLICT', `A quota is set at or below '${to}' (it counts what was trashed from there): clear it first, or choose another name.`);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** `n` bytes for people: `512 B`, `1.5 KiB`, `10.0 GiB` (binary units). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${UNITS[u]}`;
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(B|K|KB|KiB|M|MB|MiB|G|GB|GiB|T|TB|TiB|P|PB|PiB)?$/i;
const FACTOR: Record<string, number> = {
  b: 1, k: 1024, kib: 1024, kb: 1000, m: 1024 ** 2, mib: 1024 ** 2, mb: 1000 ** 2, g: 1024 ** 3, gib: 1024 ** 3, gb: 1000 ** 3,
  t: 1024 ** 4, tib: 1024 ** 4, tb: 1000 ** 4, p: 1024 ** 5, pib: 1024 ** 5, pb: 1000 ** 5,
};

/**
 * Parses a size such as `10GiB`, `500 MB` or `1048576` (bytes): binary units with `i` or a
 * single letter, decimal ones with `B`. `BAD_REQUEST` for anything else or a result that is
 * not a whole number of bytes within 2^53.
 */
export function parseSize(text: string): number {
  const m = SIZE.exec(text.trim());
  const bytes = m ? Math.round(Number(m[1]) * FACTOR[(m[2] ?? 'b').toLowerCase()]!) : NaN;
  if (!Number.isSafeInteger(bytes)) throw new LadingError('BAD_REQUEST', `'${text}' is not a size: give bytes, or a number with a unit such as 500MiB, 10GiB or 2TB.`);
  return bytes;
}

/** What `QuotaService` needs: the catalog's quotas and users, and the backend's homes and access checks. */
export interface QuotaServiceOptions {
  catalog: QuotaStore & { getUser(name: string): Promise<{ kind: string } | null> };
  backend: Pick<Backend, 'homeOf' | 'statAs' | 'levelOf'>;
}

/**
 * Sets, shows and clears quotas (the admin commands), and reports the quotas that bound a path
 * (the API, `lading df`, WebDAV's quota properties). Checks nothing about the caller: the
 * admin commands act as the catalog's owner, and the API checks read access first.
 */
export class QuotaService {
  readonly #o: QuotaServiceOptions;

  constructor(options: QuotaServiceOptions) {
    this.#o = options;
  }

  /**
   * The path and user a target names: a path (it starts with `/`) as is, anything else as the
   * name of a user, whose home it is. `NOT_FOUND` for an unknown user or a group,
   * `INVALID_PATH` for a bad path.
   */
  async resolve(target: string): Promise<{ path: Path; user: string | null }> {
    if (target.startsWith('/')) return { path: parsePath(target), user: null };
    const record = await this.#o.catalog.getUser(target);
    if (!record || record.kind === 'group') throw new LadingError('NOT_FOUND', `There is no user '${target}' (name a collection by its path, starting with /).`);
    return { path: this.#o.backend.homeOf(target), user: target };
  }

  /**
   * Sets the quota of `target` (a user or a collection's path): each bound given replaces the
   * one set before; one not given keeps it (none, for a new quota). The usage is counted
   * anew. Resolves with the quota. `BAD_REQUEST` without any bound, `NOT_FOUND`,
   * `NOT_A_COLLECTION`.
   */
  async set(target: string, limits: { maxBytes?: number | null; maxObjects?: number | null }): Promise<QuotaRecord> {
    if (limits.maxBytes === undefined && limits.maxObjects === undefined) throw new LadingError('BAD_REQUEST', 'Give --bytes, --objects or both.');
    for (const v of [limits.maxBytes, limits.maxObjects]) {
      if (v !== undefined && v !== null && (!Number.isSafeInteger(v) || v < 0)) throw new LadingError('BAD_REQUEST', `A bound must be a whole number, 0 or more; got ${v}.`);
    }
    const { path, user } = await this.resolve(target);
    const before = await this.#o.catalog.getQuota(path);
    return this.#o.catalog.setQuota({
      path, user: user ?? before?.user ?? null,
      maxBytes: limits.maxBytes === undefined ? before?.maxBytes ?? null : limits.maxBytes,
      maxObjects: limits.maxObjects === undefined ? before?.maxObjects ?? null : limits.maxObjects,
    });
  }

  /** Removes the quota of `target`; false when it had none. `NOT_FOUND` for an unknown user. */
  async clear(target: string): Promise<boolean> {
    return this.#o.catalog.clearQuota((await this.resolve(target)).path);
  }

  /** The quota of `target`, or null. */
  async get(target: string): Promise<QuotaRecord | null> {
    return this.#o.catalog.getQuota((await this.resolve(target)).path);
  }

  /** Every quota, by path. */
  async list(): Promise<QuotaRecord[]> {
    return this.#o.catalog.listQuotas();
  }

  /** The quotas at `path` and above it, outermost first (they bound a write there). */
  async covering(path: Path): Promise<QuotaRecord[]> {
    return this.#o.catalog.quotasCovering(path);
  }

  /**
   * What `actor` may know of the quotas at `path` (by default their home): those that bound
   * a write there (at it and above it, outermost first: they bound the actor's writes, so
   * their limits and usage are shown whoever may read their collection), then those below it
   * on collections the actor may read, by path. Needs read access to `path`: `FORBIDDEN`,
   * `NOT_FOUND`.
   */
  async view(actor: Actor, path?: Path): Promise<{ path: Path; quotas: QuotaRecord[] }> {
    const at = path ?? this.#o.backend.homeOf(actor.user);
    await this.#o.backend.statAs(actor, at);
    const covering = await this.#o.catalog.quotasCovering(at);
    const below: QuotaRecord[] = [];
    for (const q of await this.#o.catalog.listQuotas()) {
      if (q.path !== at && isWithin(q.path, at) && (await this.#o.backend.levelOf(actor, q.path)) !== null) below.push(q);
    }
    return { path: at, quotas: [...covering, ...below] };
  }
}
