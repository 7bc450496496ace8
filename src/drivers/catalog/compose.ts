/**
 * Composes the roles of a SQL catalog driver into one `Catalog`. Shared by the drivers; it
 * holds no SQL and knows no driver.
 */
import { parentOf } from '../../core/path.ts';
import type { AccountStore, Catalog, CatalogRoles, NamespaceStore, PoolFigures } from '../../core/ports.ts';

/** What a driver tells of its connection besides the roles: `Catalog.ping` and `Catalog.poolFigures`. */
export interface CatalogHealth {
  ping(): Promise<void>;
  poolFigures?(): PoolFigures;
}

/**
 * The catalog made of `roles`, named `driver`, whose `close` is `close`. Role objects must not
 * rely on `this` (their methods are copied onto the catalog).
 */
export function composeCatalog(driver: string, close: () => Promise<void>, roles: CatalogRoles, health: CatalogHealth): Catalog {
  return {
    driver,
    close,
    ping: health.ping,
    ...(health.poolFigures ? { poolFigures: health.poolFigures } : {}),
    ...roles.namespace,
    ...roles.accounts,
    ...roles.sessions,
    ...roles.jobs,
    ...roles.handles,
    ...roles.blobs,
    ...roles.oidc,
    ...roles.publications,
    ...roles.shares,
    ...roles.uploads,
    ...roles.locks,
    ...roles.s3Keys,
    ...roles.fixity,
    ...roles.cas,
    ...roles.quotas,
    ...roles.audit,
    ...roles.search,
  };
}

/**
 * `NamespaceStore.lookup` made of the roles' own reads, one after the other: for a driver
 * whose reads cost no round trip (SQLite's, in the process, remembered until what they read
 * changes).
 */
export function lookupOf(
  accounts: Pick<AccountStore, 'getUser' | 'groupsOf' | 'userForSubject'>,
  namespace: Pick<NamespaceStore, 'accessLevel' | 'getEntity'>,
): NamespaceStore['lookup'] {
  return async (input) => {
    const name = input.user ?? await accounts.userForSubject(input.subject!);
    const user = name === null ? null : await accounts.getUser(name);
    const groups = user ? await accounts.groupsOf(user.name) : [];
    const level = user ? await namespace.accessLevel(input.path, [user.name, ...input.also, ...groups]) : null;
    const entity = await namespace.getEntity(input.path);
    const parentKind = input.parent ? (await namespace.getEntity(parentOf(input.path)))?.kind ?? null : null;
    return { user, groups, level, entity, parentKind };
  };
}
