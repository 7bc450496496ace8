/**
 * What a node remembers of the PostgreSQL catalog's reads that every request makes: sessions
 * by token hash, accounts, their groups and subject mappings, access levels and entities by
 * path. Strictly fresh, across nodes: every write to the tables these read notifies the
 * schema's cache channel when its transaction commits (triggers of migration 20, so no write
 * path can forget), and before answering from memory a read waits for a *barrier* on the
 * LISTEN connection (`Listening.barrier`): a trivial statement sent after the request being
 * served arrived (`request-scope.ts`; outside a request, after the read was called), whose
 * answer PostgreSQL sends only after every notification of a transaction committed before it.
 * So a change committed before a request arrived (a token revoked, a grant revoked, an account
 * disabled, an entity moved) has been forgotten by the time any read of that request is
 * answered, on every node, with no window of staleness. Barriers are shared: one serves every
 * read of the requests that arrived before it was sent, for one statement that costs
 * PostgreSQL next to nothing.
 *
 * When the LISTEN connection is down (lost, not yet made, or a caller's pool), reads go to the
 * catalog as if nothing were remembered, and everything is forgotten when it comes back. A
 * value read while a notification of its kind arrived is not kept (generations), so a read
 * that raced a change never outlives it. Each kind is bounded (`MEMORY_ENTRIES`).
 */
import { type Path, isWithin, parentOf } from '../../../core/path.ts';
import type { AccountStore, NamespaceStore, SessionStore } from '../../../core/ports.ts';
import type { PathLookup } from '../../../core/catalog.ts';
import { BoundedCache } from '../../../core/bounded-cache.ts';
import { requestMark } from '../../../core/request-scope.ts';
import type { AccessLevel, Entity, SessionRecord, UserRecord } from '../../../core/types.ts';
import type { Listening, PostgresConnection } from './connection.ts';
import { sessionLiveAt } from '../rows.ts';

/** Entries kept of each kind (sessions, accounts, groups, subjects, levels, entities). */
export const MEMORY_ENTRIES = 10_000;

/** The cache channel of `schema`, as migration 20's trigger names it. */
export function cacheChannelOf(schema: string): string {
  return `lading_cache_${schema.toLowerCase()}`.slice(0, 63);
}

/** The reads that are remembered, taken from the roles that make them. */
type Remembered = Pick<SessionStore, 'getSession'> & Pick<AccountStore, 'getUser' | 'groupsOf' | 'userForSubject'>
  & Pick<NamespaceStore, 'getEntity' | 'accessLevel' | 'lookup'>;

/** The reads of `inner`, remembered, and how to stop listening. */
export interface CatalogMemory {
  reads: Remembered;
  stop(): Promise<void>;
}

/** The path of a remembered level's key (the path, then the principals, each after a NUL). */
function pathOfLevelKey(key: string): Path {
  return key.slice(0, key.indexOf('\0')) as Path;
}

/** A notification's kinds: s(essions), a(ccounts), l(evels), e(ntities), * (all). */
type Kind = 's' | 'a' | 'l' | 'e';

/**
 * Remembers the reads of `inner` on `db`, listening on the schema's cache channel. Resolves
 * once the first attempt to listen has succeeded or failed (reads go to the catalog until it
 * succeeds).
 */
export async function rememberReads(db: PostgresConnection, inner: Remembered): Promise<CatalogMemory> {
  const sessions = new BoundedCache<string, SessionRecord>(MEMORY_ENTRIES);
  const users = new BoundedCache<string, UserRecord | null>(MEMORY_ENTRIES);
  const groups = new BoundedCache<string, readonly string[]>(MEMORY_ENTRIES);
  const subjects = new BoundedCache<string, string | null>(MEMORY_ENTRIES);
  const levels = new BoundedCache<string, AccessLevel | null>(MEMORY_ENTRIES);
  const entities = new BoundedCache<string, Entity | null>(MEMORY_ENTRIES);
  /** The kind of the entity at a path, from a lookup that read only that (a parent's). */
  const kinds = new BoundedCache<string, Entity['kind'] | null>(MEMORY_ENTRIES);
  // NOTE: moved by every notification of the kind; a read keeps its value only when the
  // generation it began under is still current, so a change that raced it is not undone.
  const gen: Record<Kind, number> = { s: 0, a: 0, l: 0, e: 0 };

  const forget = (kind: Kind, keys?: readonly string[]): void => {
    gen[kind]++;
    switch (kind) {
      case 's':
        if (keys) for (const k of keys) sessions.delete(k);
        else sessions.clear();
        break;
      case 'a':
        users.clear();
        groups.clear();
        subjects.clear();
        break;
      case 'l':
        // NOTE: a level is read over the path's lineage, so a list that changed at a path
        // changes the levels at that path and at every path below it.
        if (keys) levels.deleteWhere((key) => keys.some((changed) => isWithin(pathOfLevelKey(key), changed as Path)));
        else levels.clear();
        break;
      case 'e':
        if (keys) {
          for (const k of keys) {
            entities.delete(k);
            kinds.delete(k);
          }
        } else {
          // NOTE: an entity moved or deleted: what paths resolve to, and the levels read
          // through them, may all have changed.
          entities.clear();
          kinds.clear();
          forget('l');
        }
        break;
    }
  };
  const forgetAll = (): void => {
    for (const kind of ['s', 'a', 'l', 'e'] as const) forget(kind);
  };
  const onPayload = (payload: string): void => {
    let note: { k?: unknown; p?: unknown };
    try {
      note = JSON.parse(payload) as typeof note;
    } catch {
      forgetAll();
      return;
    }
    const keys = Array.isArray(note.p) ? note.p.map(String) : undefined;
    if (note.k === 's' || note.k === 'a' || note.k === 'l' || note.k === 'e') forget(note.k, keys);
    else forgetAll();
  };
  const listening: Listening = await db.listen(cacheChannelOf(db.schema), onPayload, {
    interrupted: forgetAll,
    resumed: forgetAll,
  });
  // NOTE: in a request, a barrier sent after it arrived proves memory current for all its reads.
  const fresh = (): Promise<boolean> => listening.barrier(requestMark());

  /** Keeps `value` under `key` in `cache` when no notification of `kinds` came since `since`. */
  const keep = <K, V>(since: Record<Kind, number>, deps: readonly Kind[], cache: BoundedCache<K, V>, key: K, value: V): void => {
    if (deps.every((k) => gen[k] === since[k])) cache.set(key, freeze(value));
  };
  const levelKey = (path: Path, principals: readonly string[]): string => path + '\0' + [...new Set(principals)].sort().join('\0');

  /**
   * What `peek` finds in memory, once a barrier has made sure it is current; else what `read`
   * finds in the catalog, given to `keep`. A value memory lacks is read at once, with no
   * barrier: a read of the catalog is current by itself.
   */
  const remembered = async <T>(peek: () => T | undefined, read: () => Promise<T>, store: (since: Record<Kind, number>, value: T) => void): Promise<T> => {
    if (peek() !== undefined && (await fresh())) {
      // NOTE: looked at again: the barrier may have brought news that dropped it.
      const hit = peek();
      if (hit !== undefined) return hit;
    }
    const since = { ...gen };
    const found = await read();
    store(since, found);
    return found;
  };

  const reads: Remembered = {
    async getSession(tokenHash, now) {
      const found = await remembered(() => sessions.get(tokenHash), async () => inner.getSession(tokenHash, now), (since, value) => {
        if (value) keep(since, ['s'], sessions, tokenHash, value);
      });
      return found && sessionLiveAt(found, now) ? found : null;
    },

    async getUser(name) {
      return remembered(() => users.get(name), () => inner.getUser(name), (since, value) => keep(since, ['a'], users, name, value));
    },

    async groupsOf(name) {
      const found = await remembered(() => groups.get(name), () => inner.groupsOf(name), (since, value) => keep(since, ['a'], groups, name, [...value]));
      return [...found];
    },

    async userForSubject(dn) {
      return remembered(() => subjects.get(dn), () => inner.userForSubject(dn), (since, value) => keep(since, ['a'], subjects, dn, value));
    },

    async getEntity(path) {
      return remembered(() => entities.get(path), () => inner.getEntity(path), (since, value) => keep(since, ['e'], entities, path, value));
    },

    async accessLevel(path, principals) {
      const key = levelKey(path, principals);
      return remembered(() => levels.get(key), () => inner.accessLevel(path, principals), (since, value) => keep(since, ['l', 'e'], levels, key, value));
    },

    async lookup(input) {
      const { path, also } = input;
      const parent = input.parent === true;
      // NOTE: answered from memory only when every part is there; otherwise the one
      // statement reads them all, and what it read is kept.
      const peek = (): PathLookup | undefined => {
        const name = input.user ?? subjects.get(input.subject!);
        const entity = entities.get(path);
        const parentKind = parent ? kindAt(parentOf(path)) : null;
        if (name === undefined || entity === undefined || parentKind === undefined) return undefined;
        const user = name === null ? null : users.get(name);
        if (user === null) return { user: null, groups: [], level: null, entity, parentKind };
        const grp = groups.get(name!);
        if (user === undefined || grp === undefined) return undefined;
        const level = levels.get(levelKey(path, [user.name, ...grp, ...also]));
        return level === undefined ? undefined : { user, groups: [...grp], level, entity, parentKind };
      };
      return remembered(peek, () => inner.lookup(input), (since, found) => {
        if (input.subject !== undefined) keep(since, ['a'], subjects, input.subject, found.user?.name ?? null);
        if (found.user) {
          const { name } = found.user;
          keep(since, ['a'], users, name, found.user);
          keep(since, ['a'], groups, name, [...found.groups]);
          keep(since, ['l', 'e'], levels, levelKey(path, [name, ...found.groups, ...also]), found.level);
        } else if (input.user !== undefined) {
          keep(since, ['a'], users, input.user, null);
        }
        keep(since, ['e'], entities, path, found.entity);
        if (parent) keep(since, ['e'], kinds, parentOf(path), found.parentKind);
      });
    },
  };

  /** The kind of the entity at `path` as remembered (null: none there), or undefined when unknown. */
  function kindAt(path: Path): Entity['kind'] | null | undefined {
    const entity = entities.get(path);
    if (entity !== undefined) return entity?.kind ?? null;
    return kinds.get(path);
  }

  return {
    reads,
    async stop() {
      await listening();
      forgetAll();
    },
  };
}

/** A value shared by the requests that read it: frozen, so none can change it for the others. */
function freeze<V>(value: V): V {
  if (value !== null && typeof value === 'object') Object.freeze(value);
  return value;
}
