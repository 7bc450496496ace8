/**
 * Composes the roles of a SQL catalog driver into one `Catalog`. Shared by the drivers; it
 * holds no SQL and knows no driver.
 */
import type { Catalog, CatalogRoles } from '../../core/ports.ts';

/**
 * The catalog made of `roles`, named `driver`, whose `close` is `close`. Role objects must not
 * rely on `this` (their methods are copied onto the catalog).
 */
export function composeCatalog(driver: string, close: () => Promise<void>, roles: CatalogRoles): Catalog {
  return {
    driver,
    close,
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
  };
}
