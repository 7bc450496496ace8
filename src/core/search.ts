/**
 * Search across collections: entities below a collection found by name (a case-insensitive
 * substring, or a glob) and by metadata (an attribute, and optionally its value), paged by
 * path; and the caller's recent uploads. Only what the caller may read is ever found: the core
 * works out which subtrees the caller reads (its home, what it, its groups or `public` hold an
 * entry on, or everything for an admin) and the catalog searches only inside them, so nothing
 * of another user's private data reaches the caller, not even a count. The catalog role that
 * answers the queries is `SearchStore`. Takes ports; knows nothing of HTTP.
 */
import type { Actor, Backend } from './backend.ts';
import { LadingError } from './errors.ts';
import { MAX_AVU_BYTES } from './metadata.ts';
import { type Path, ROOT, isWithin, lineage, parsePath } from './path.ts';
import type { NamespaceStore } from './catalog.ts';
import type { DataObject, Entity } from './types.ts';

/** How a name is matched, ignoring the case of ASCII letters. */
export type NamePattern =
  /** The name holds `text` somewhere. */
  | { contains: string }
  /** The whole name matches `glob`: `*` any run of characters, `?` one character, everything else itself. */
  | { glob: string };

/** What `SearchStore.searchEntities` finds. */
export interface EntitySearch {
  /** Only entities strictly below this collection. */
  under: Path;
  /**
   * Only entities at one of these paths or below it: sorted in byte order, none below
   * another. Null: no bound but `under`. An empty list finds nothing.
   */
  within: readonly Path[] | null;
  name: NamePattern | null;
  /** Only entities carrying an AVU with this attribute (exactly), and with `value` (exactly) when that is given. */
  attribute: string | null;
  value: string | null;
  kind: Entity['kind'] | null;
  /** Only entities whose path sorts after this one in byte order (paging). */
  after: string | null;
  limit: number;
}

/** Where a page of `SearchStore.recentObjects` starts: after this object in its order. */
export interface RecentCursor {
  at: Date;
  id: string;
}

/**
 * The searches of the catalog, a role of its own. Live entities only: nothing trashed is
 * found. Contract: `test/contracts/catalog-search-contract.ts`.
 */
export interface SearchStore {
  /** Up to `limit` entities matching every criterion of `query`, in byte order of their paths. */
  searchEntities(query: EntitySearch): Promise<Entity[]>;
  /**
   * Up to `limit` data objects `owner` owns, the most recently modified first (ties by id,
   * descending); with `before`, only those after that one in this order.
   */
  recentObjects(input: { owner: string; before: RecentCursor | null; limit: number }): Promise<DataObject[]>;
}

/**
 * The pattern of SQL's `LIKE … ESCAPE '\'` that `name` makes: a substring anywhere, or the
 * glob over the whole name. Both catalogs match it ignoring the case of ASCII letters.
 */
export function likePattern(name: NamePattern): string {
  const escape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
  if ('contains' in name) return `%${escape(name.contains)}%`;
  return escape(name.glob).replace(/[*?]/g, (c) => (c === '*' ? '%' : '_'));
}

/** The longest run of `name` that a match must hold literally (for an index of trigrams); '' when none. */
export function literalRun(name: NamePattern): string {
  if ('contains' in name) return name.contains;
  return name.glob.split(/[*?]/).reduce((a, b) => (b.length > a.length ? b : a), '');
}

/** The byte-order range `[from, to)` of what lies strictly below `path` ('0' follows '/'). */
export function belowRange(path: Path): { from: string; to: string } {
  const prefix = path === ROOT ? '/' : `${path}/`;
  return { from: prefix, to: `${prefix.slice(0, -1)}0` };
}

/** Entities in one page of a search by default, and at most. */
export const SEARCH_PAGE = 100;
export const SEARCH_MAX_PAGE = 1000;
/** The longest name pattern accepted, in characters (a name holds at most 255 bytes). */
export const MAX_NAME_PATTERN = 255;
/** How many readable subtrees one catalog query is bounded to. */
const SCOPES_PER_QUERY = 50;
/** How many held entities are read from the catalog at a time while finding readable subtrees. */
const HELD_PAGE = 250;

/** What a caller asks `Search.find` for. */
export interface SearchRequest {
  /** Search below this collection; the root (everything the caller can read) when absent. */
  under?: Path | null;
  /** A substring of the name, or a glob when it holds `*` or `?`; case-insensitive. */
  name?: string | null;
  attribute?: string | null;
  value?: string | null;
  kind?: Entity['kind'] | null;
  limit?: number;
  /** The `next` of the page before. */
  after?: string | null;
}

/** A page of results and where the next one starts (null after the last). */
export interface SearchPage<T> {
  entities: T[];
  next: string | null;
}

export interface SearchOptions {
  backend: Pick<Backend, 'levelOf' | 'homeOf'>;
  catalog: SearchStore & Pick<NamespaceStore, 'getEntity' | 'listEntitiesHeldBy'>;
}

export class Search {
  readonly #o: SearchOptions;

  constructor(options: SearchOptions) {
    this.#o = options;
  }

  /**
   * Entities below `under` that match every criterion given and that `actor` may read (read,
   * write or own on them or a collection above, through the user, a group or `public`; an
   * admin reads everything), in byte order of their paths, a page at a time. With no
   * criterion, everything readable below `under`. Rejects with `BAD_REQUEST` for a `value`
   * without an `attribute`, an over-long pattern or attribute, a bad limit or cursor; with
   * `NOT_FOUND` or `NOT_A_COLLECTION` when the caller may read `under` and it is missing or a
   * data object. A collection the caller may not read is searched for what below it they may:
   * whether it exists is not told.
   */
  async find(actor: Actor, request: SearchRequest): Promise<SearchPage<Entity>> {
    const under = request.under ?? ROOT;
    const limit = pageLimit(request.limit);
    const query: Omit<EntitySearch, 'within' | 'after' | 'limit'> = {
      under, name: namePattern(request.name), kind: request.kind ?? null, ...metadataCriteria(request.attribute, request.value),
    };
    const after = request.after ? decodePathCursor(request.after) : null;
    const readsAll = actor.admin || (await this.#o.backend.levelOf(actor, under)) !== null;
    if (readsAll && under !== ROOT) {
      const collection = await this.#o.catalog.getEntity(under);
      if (!collection) throw new LadingError('NOT_FOUND', `'${under}' does not exist.`);
      if (collection.kind !== 'collection') throw new LadingError('NOT_A_COLLECTION', `'${under}' is a data object, not a collection.`);
    }
    // NOTE: one more than asked for tells whether a next page exists without another query.
    const page = { ...query, after, limit: limit + 1 };
    let found: Entity[];
    if (readsAll) {
      found = await this.#o.catalog.searchEntities({ ...page, within: null });
    } else {
      const scopes: Path[] = [];
      for await (const scope of this.#readableBelow(actor, under)) {
        // NOTE: a subtree wholly before the cursor holds nothing of this page.
        if (after === null || after < belowRange(scope).to) scopes.push(scope);
      }
      // NOTE: subtrees interleave in byte order ('/a/b-x' sorts between '/a/b' and '/a/b/c'),
      // so every group of them is asked for the same page, and the answers are merged.
      found = [];
      for (let i = 0; i < scopes.length; i += SCOPES_PER_QUERY) {
        found.push(...await this.#o.catalog.searchEntities({ ...page, within: scopes.slice(i, i + SCOPES_PER_QUERY) }));
      }
      if (scopes.length > SCOPES_PER_QUERY) found.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    }
    const entities = found.slice(0, limit);
    return { entities, next: found.length > limit ? encodePathCursor(entities.at(-1)!.path) : null };
  }

  /**
   * The data objects `actor` owns (uploaded) and may still read, the most recently changed
   * first, a page at a time. A page may hold fewer than `limit` when some were made unreadable
   * to their owner; `next` is null only after the last. `BAD_REQUEST` for a bad limit or cursor.
   */
  async recent(actor: Actor, request: { limit?: number; after?: string | null }): Promise<SearchPage<DataObject>> {
    const limit = pageLimit(request.limit);
    const before = request.after ? decodeRecentCursor(request.after) : null;
    const page = await this.#o.catalog.recentObjects({ owner: actor.user, before, limit: limit + 1 });
    const shown = page.slice(0, limit);
    const levels = await Promise.all(shown.map((o) => this.#o.backend.levelOf(actor, o.path)));
    const last = shown.at(-1);
    return {
      entities: shown.filter((_, i) => levels[i] !== null),
      next: page.length > limit && last ? encodeRecentCursor({ at: last.modifiedAt, id: last.id }) : null,
    };
  }

  /**
   * The top-most subtrees below `under` (or at it) that `actor` reads in full, sorted in byte
   * order: its home, and the entities on which the user, a group or `public` holds an entry.
   * Read from the catalog a page at a time; what lies below a subtree already yielded is skipped
   * in the catalog, not read.
   */
  async *#readableBelow(actor: Actor, under: Path): AsyncGenerator<Path> {
    const home = this.#o.backend.homeOf(actor.user);
    const { from: lo, to: hi } = belowRange(under);
    const taken = new Set<string>();
    let homePending = isWithin(home, under) && home !== under;
    const take = (path: Path): boolean => {
      if (lineage(path).slice(0, -1).some((p) => taken.has(p))) return false;
      taken.add(path);
      return true;
    };
    let from: { path: string; inclusive: boolean } = { path: lo, inclusive: true };
    for (;;) {
      const page = await this.#o.catalog.listEntitiesHeldBy({ principals: actor.principals, except: home, from, limit: HELD_PAGE });
      let below: string | undefined;
      for (const entity of page) {
        if (entity.path >= hi) {
          if (homePending && take(home)) yield home;
          return;
        }
        if (homePending && home < entity.path) {
          homePending = false;
          if (take(home)) yield home;
        }
        below = lineage(entity.path).slice(0, -1).find((p) => taken.has(p));
        if (below === undefined && take(entity.path)) yield entity.path;
      }
      if (page.length < HELD_PAGE) break;
      // NOTE: when the page ended below a subtree T, everything up to `T0` lies below T too.
      from = below === undefined ? { path: page.at(-1)!.path, inclusive: false } : { path: `${below}0`, inclusive: true };
    }
    if (homePending && take(home)) yield home;
  }
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return SEARCH_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_MAX_PAGE) throw new LadingError('BAD_REQUEST', `limit must be an integer from 1 to ${SEARCH_MAX_PAGE}.`);
  return limit;
}

/** A substring, or a glob when it holds `*` or `?`; null for none or an empty one. `BAD_REQUEST` when too long. */
function namePattern(name: string | null | undefined): NamePattern | null {
  if (!name) return null;
  if ([...name].length > MAX_NAME_PATTERN) throw new LadingError('BAD_REQUEST', `name must be at most ${MAX_NAME_PATTERN} characters.`);
  return /[*?]/.test(name) ? { glob: name } : { contains: name };
}

function metadataCriteria(attribute: string | null | undefined, value: string | null | undefined): { attribute: string | null; value: string | null } {
  if (!attribute) {
    if (value) throw new LadingError('BAD_REQUEST', 'value needs an attribute: search for an attribute, or an attribute and its value.');
    return { attribute: null, value: null };
  }
  for (const part of [attribute, value ?? '']) {
    if (Buffer.byteLength(part) > MAX_AVU_BYTES) throw new LadingError('BAD_REQUEST', `An attribute or value is at most ${MAX_AVU_BYTES} bytes.`);
  }
  return { attribute, value: value ?? null };
}

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const fromBase64url = (token: string) => (/^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '');
const badCursor = (token: string) => new LadingError('BAD_REQUEST', `'${token.slice(0, 100)}' is not a continuation_token of this search.`);

function encodePathCursor(path: string): string {
  return base64url(`p${path}`);
}

function decodePathCursor(token: string): string {
  const text = fromBase64url(token);
  if (!text.startsWith('p/')) throw badCursor(token);
  try {
    return parsePath(text.slice(1));
  } catch {
    throw badCursor(token);
  }
}

function encodeRecentCursor(c: RecentCursor): string {
  return base64url(`r${c.at.getTime()}_${c.id}`);
}

function decodeRecentCursor(token: string): RecentCursor {
  const m = /^r(\d{1,15})_([0-9a-f-]{1,64})$/.exec(fromBase64url(token));
  if (!m) throw badCursor(token);
  return { at: new Date(Number(m[1])), id: m[2]! };
}
