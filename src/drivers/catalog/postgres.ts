/**
 * Catalog driver for PostgreSQL through `pg`: the shared catalog that lets several lading
 * nodes serve one namespace. Opens the schema and composes the roles in `postgres/` (one
 * module each) into a `Catalog`. Each method runs in one transaction (READ COMMITTED); races
 * between nodes are settled by row locks and unique constraints, never by state kept in a
 * process. The reads every request makes are remembered in the node, and forgotten on every
 * node as soon as what they read changes (`postgres/memory.ts`). It adapts PostgreSQL only;
 * the rules it enforces are those of the `Catalog` port, with the same semantics as the SQLite
 * driver.
 */
import type { Catalog } from '../../core/ports.ts';
import { composeCatalog } from './compose.ts';
import { CatalogOptionError } from './options.ts';
import { createPostgresAudit } from './postgres/audit.ts';
import { createPostgresAccounts } from './postgres/accounts.ts';
import { createPostgresBlobs } from './postgres/blobs.ts';
import { type PgPoolLike, openPostgres } from './postgres/connection.ts';
import { createPostgresFixity } from './postgres/fixity.ts';
import { createPostgresHandles } from './postgres/handles.ts';
import { rememberReads } from './postgres/memory.ts';
import { createPostgresLocks } from './postgres/locks.ts';
import { createPostgresJobs } from './postgres/jobs.ts';
import { createPostgresNamespace } from './postgres/namespace.ts';
import { createPostgresOidc } from './postgres/oidc.ts';
import { createPostgresPublications } from './postgres/publications.ts';
import { createPostgresQuotas } from './postgres/quotas.ts';
import { createPostgresSessions } from './postgres/sessions.ts';
import { createPostgresShares } from './postgres/shares.ts';
import { createPostgresSearch } from './postgres/search.ts';
import { createPostgresS3Keys } from './postgres/s3-keys.ts';
import { createPostgresCas } from './postgres/cas.ts';
import { createPostgresUploads } from './postgres/uploads.ts';

export type { PgClientLike, PgPoolLike, PgResultLike } from './postgres/connection.ts';

export type PostgresCatalogOptions = {
  /** Schema holding the catalog's tables; created when missing (default `public`). */
  schema?: string;
  /** Largest number of connections of a pool the driver creates itself (default 10). */
  maxConnections?: number;
} & (
  /** A libpq connection string, e.g. `postgresql://lading@db.example.org/lading`; the driver owns the pool. */
  | { connectionString: string; pool?: undefined }
  /** A pool owned by the caller: `close()` leaves it open. */
  | { pool: PgPoolLike; connectionString?: undefined }
);

/**
 * Opens a PostgreSQL catalog and brings its schema up to date (migrating once even when
 * several nodes start at the same moment). Rejects with `CatalogOptionError` (a `TypeError`)
 * naming the option, before connecting, when neither a non-empty `connectionString` nor a
 * `pool` is given, when `schema` is not a plain SQL identifier, or when `maxConnections` is
 * not a positive integer; rejects with `UNAVAILABLE` when PostgreSQL cannot be reached or
 * refuses the connection.
 */
export async function createPostgresCatalog(options: PostgresCatalogOptions): Promise<Catalog> {
  if (!options.pool && (typeof options.connectionString !== 'string' || options.connectionString === '')) {
    throw new CatalogOptionError('postgres', 'connectionString', 'is required');
  }
  const schema = options.schema ?? 'public';
  if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new CatalogOptionError('postgres', 'schema', 'must be a plain SQL identifier');
  }
  const maxConnections = options.maxConnections ?? 10;
  if (!Number.isInteger(maxConnections) || maxConnections < 1) {
    throw new CatalogOptionError('postgres', 'maxConnections', 'must be a positive integer');
  }
  const db = await openPostgres(options.pool
    ? { schema, maxConnections, pool: options.pool }
    : { schema, maxConnections, connectionString: options.connectionString });
  const namespace = createPostgresNamespace(db);
  const accounts = createPostgresAccounts(db);
  const sessions = createPostgresSessions(db);
  // NOTE: a caller's pool has no LISTEN connection, so nothing is remembered with it.
  const memory = options.pool ? null : await rememberReads(db, { ...namespace, ...accounts, ...sessions });
  const reads = memory?.reads ?? { ...namespace, ...accounts, ...sessions };
  const close = async (): Promise<void> => {
    await memory?.stop();
    await db.close();
  };
  return composeCatalog('postgres', close, {
    namespace: { ...namespace, getEntity: reads.getEntity, accessLevel: reads.accessLevel, lookup: reads.lookup },
    accounts: { ...accounts, getUser: reads.getUser, groupsOf: reads.groupsOf, userForSubject: reads.userForSubject },
    sessions: { ...sessions, getSession: reads.getSession },
    jobs: createPostgresJobs(db),
    handles: createPostgresHandles(db),
    blobs: createPostgresBlobs(db),
    oidc: createPostgresOidc(db),
    publications: createPostgresPublications(db),
    shares: createPostgresShares(db),
    uploads: createPostgresUploads(db),
    locks: createPostgresLocks(db),
    s3Keys: createPostgresS3Keys(db),
    fixity: createPostgresFixity(db),
    cas: createPostgresCas(db),
    quotas: createPostgresQuotas(db),
    audit: createPostgresAudit(db),
    search: createPostgresSearch(db),
  }, {
    ping: async () => {
      await db.pool.query('SELECT 1');
    },
    ...(db.figures ? { poolFigures: db.figures } : {}),
  });
}
