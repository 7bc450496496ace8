/**
 * Composes the roles of a SQL catalog driver into one `Catalog`. Shared by the drivers; it
 * holds no SQL and knows no driver.
 */
import type { Catalog, CatalogRoles, PoolFigures } from '../../core/ports.ts';

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
  };
}
