/**
 * Catalog driver for SQLite through `node:sqlite` (built into Node, no native build): the
 * embedded default, one file in the data directory. Opens the database and composes the roles
 * in `sqlite/` (one module each) into a `Catalog`; each method runs in one transaction. It
 * adapts SQLite only; the rules it enforces are those of the `Catalog` port.
 */
import type { Catalog } from '../../core/ports.ts';
import { composeCatalog } from './compose.ts';
import { CatalogOptionError } from './options.ts';
import { createSqliteAccounts } from './sqlite/accounts.ts';
import { createSqliteBlobs } from './sqlite/blobs.ts';
import { openSqlite } from './sqlite/connection.ts';
import { createSqliteHandles } from './sqlite/handles.ts';
import { createSqliteJobs } from './sqlite/jobs.ts';
import { createSqliteNamespace } from './sqlite/namespace.ts';
import { createSqliteOidc } from './sqlite/oidc.ts';
import { createSqlitePublications } from './sqlite/publications.ts';
import { createSqliteSessions } from './sqlite/sessions.ts';
import { createSqliteShares } from './sqlite/shares.ts';
import { createSqliteUploads } from './sqlite/uploads.ts';

export interface SqliteCatalogOptions {
  /** File name of the database, or `:memory:`. */
  file: string;
}

/**
 * Creates a SQLite catalog and brings its schema up to date. Throws `CatalogOptionError` (a
 * `TypeError`) naming `file` when it is not a non-empty string.
 */
export function createSqliteCatalog(options: SqliteCatalogOptions): Catalog {
  if (typeof options.file !== 'string' || options.file === '') throw new CatalogOptionError('sqlite', 'file', 'is required');
  const db = openSqlite(options.file);
  return composeCatalog('sqlite', async () => db.close(), {
    namespace: createSqliteNamespace(db),
    accounts: createSqliteAccounts(db),
    sessions: createSqliteSessions(db),
    jobs: createSqliteJobs(db),
    handles: createSqliteHandles(db),
    blobs: createSqliteBlobs(db),
    oidc: createSqliteOidc(db),
    publications: createSqlitePublications(db),
    shares: createSqliteShares(db),
    uploads: createSqliteUploads(db),
  });
}
