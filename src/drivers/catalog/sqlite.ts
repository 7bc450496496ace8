/**
 * Catalog driver for SQLite through `node:sqlite` (built into Node, no native build): the
 * embedded default, one file in the data directory. Opens the database and composes the roles
 * in `sqlite/` (one module each) into a `Catalog`; each method runs in one transaction, and a
 * method that wrote resolves only once its transaction is on disk. It adapts SQLite only; the
 * rules it enforces are those of the `Catalog` port.
 */
import type { Catalog, CatalogRoles } from '../../core/ports.ts';
import { composeCatalog, lookupOf } from './compose.ts';
import { CatalogOptionError } from './options.ts';
import { createSqliteAccounts } from './sqlite/accounts.ts';
import { createSqliteAudit } from './sqlite/audit.ts';
import { createSqliteBlobs } from './sqlite/blobs.ts';
import { type SqliteConnection, openSqlite } from './sqlite/connection.ts';
import { createSqliteFixity } from './sqlite/fixity.ts';
import { createSqliteHandles } from './sqlite/handles.ts';
import { type KeptBytes, createSqliteInline } from './sqlite/inline.ts';
import { createSqliteLocks } from './sqlite/locks.ts';
import { createSqliteJobs } from './sqlite/jobs.ts';
import { createSqliteNamespace } from './sqlite/namespace.ts';
import { createSqliteOidc } from './sqlite/oidc.ts';
import { createSqlitePublications } from './sqlite/publications.ts';
import { createSqliteQuotas } from './sqlite/quotas.ts';
import { createSqliteSessions } from './sqlite/sessions.ts';
import { createSqliteShares } from './sqlite/shares.ts';
import { createSqliteSearch } from './sqlite/search.ts';
import { createSqliteS3Keys } from './sqlite/s3-keys.ts';
import { createSqliteCas } from './sqlite/cas.ts';
import { createSqliteUploads } from './sqlite/uploads.ts';

export { CatalogDamagedError } from './sqlite/connection.ts';

export interface SqliteCatalogOptions {
  /** File name of the database, or `:memory:`. */
  file: string;
  /**
   * Check the file's structure first (bounded: see `checkIntegrity` in `sqlite/connection.ts`)
   * and refuse a damaged one with `CatalogDamagedError`. For a start; off by default.
   */
  checkIntegrity?: boolean;
}

/**
 * Creates a SQLite catalog and brings its schema up to date. Throws `CatalogOptionError` (a
 * `TypeError`) naming `file` when it is not a non-empty string, and `CatalogDamagedError` when
 * `checkIntegrity` finds the file damaged.
 */
export function createSqliteCatalog(options: SqliteCatalogOptions): Catalog {
  if (typeof options.file !== 'string' || options.file === '') throw new CatalogOptionError('sqlite', 'file', 'is required');
  const db = openSqlite(options.file, { checkIntegrity: options.checkIntegrity === true });
  const kept: KeptBytes = new Map();
  const namespace = createSqliteNamespace(db, kept);
  const accounts = createSqliteAccounts(db);
  const roles: CatalogRoles = {
    namespace: { ...namespace, lookup: lookupOf(accounts, namespace) },
    accounts,
    sessions: createSqliteSessions(db),
    jobs: createSqliteJobs(db),
    handles: createSqliteHandles(db),
    blobs: createSqliteBlobs(db),
    oidc: createSqliteOidc(db),
    publications: createSqlitePublications(db),
    shares: createSqliteShares(db),
    uploads: createSqliteUploads(db),
    locks: createSqliteLocks(db),
    s3Keys: createSqliteS3Keys(db),
    fixity: createSqliteFixity(db),
    cas: createSqliteCas(db),
    quotas: createSqliteQuotas(db),
    audit: createSqliteAudit(db),
    search: createSqliteSearch(db),
  };
  for (const role of Object.values(roles) as Record<string, unknown>[]) durableWrites(db, role);
  const ping = async (): Promise<void> => {
    db.q('SELECT 1').get();
  };
  return { ...composeCatalog('sqlite', () => db.close(), roles, { ping }), inline: createSqliteInline(db, kept) };
}

/**
 * What losing in a power cut costs nothing: a node's heartbeat is renewed within seconds, and a
 * blob whose untracking is lost is deleted again by the sweeper (deleting a missing blob is a
 * no-op). These do not wait for the flush.
 */
const BOOKKEEPING = new Set(['heartbeat', 'forgetNode', 'untrackBlob']);

/**
 * Makes each method of `role` that changed the database resolve only once its transaction is
 * on disk, through the connection's group commit.
 */
function durableWrites(db: SqliteConnection, role: Record<string, unknown>): void {
  for (const [name, method] of Object.entries(role)) {
    if (typeof method !== 'function' || BOOKKEEPING.has(name)) continue;
    role[name] = (...args: unknown[]): unknown => {
      // NOTE: the roles do their SQL synchronously, before their promise settles, so the
      // change count read around the call is this call's alone.
      const before = db.changes();
      const out: unknown = method(...args);
      if (db.changes() === before) return out;
      return Promise.resolve(out).then(async (value) => {
        await db.durable();
        return value;
      });
    };
  }
}
