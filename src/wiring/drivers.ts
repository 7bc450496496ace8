/**
 * Turns the configuration's `catalog.*` and `resource.*` keys into the options of the catalog
 * and resource drivers and opens them, reading their secrets through `secret-file.ts`. The one
 * place that maps those keys to driver options; `loadConfig` has already checked that the
 * chosen driver has what it needs. It never logs, prints or puts a secret in an error message.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Config, ConfigError } from './config.ts';
import { OperatorError } from './operator-error.ts';
import { secretSetting } from './secret-file.ts';
import type { RecoveryCutoff } from '../core/backend.ts';
import type { Catalog, Resource } from '../core/ports.ts';
import { type CatalogOption, CatalogOptionError } from '../drivers/catalog/options.ts';
import { CatalogDamagedError, createSqliteCatalog } from '../drivers/catalog/sqlite.ts';
import { createFsResource } from '../drivers/resource/fs.ts';

/** The configuration key behind each catalog driver option. */
const CATALOG_KEYS: Record<CatalogOption, string> = {
  file: 'data', connectionString: 'catalog.url_file (or LADING_CATALOG_URL)', schema: 'catalog.schema', maxConnections: 'catalog',
};

/**
 * Opens the configured catalog (`<dataDir>/catalog.sqlite`, or PostgreSQL). Rejects with
 * `ConfigError` naming the key when `catalog.url_file` cannot be read or the driver refuses an
 * option, with `UNAVAILABLE` when PostgreSQL cannot be reached, and with `OperatorError`
 * naming the file when SQLite cannot open it, finds it damaged (a bounded `PRAGMA
 * quick_check`), or it is missing or empty in a data directory an earlier start used.
 */
export async function openCatalog(config: Config, dataDir: string): Promise<Catalog> {
  try {
    return await openConfiguredCatalog(config, dataDir);
  } catch (err) {
    if (err instanceof CatalogOptionError) throw new ConfigError(`${CATALOG_KEYS[err.option]}: ${err.problem}.`, { cause: err });
    throw err;
  }
}

async function openConfiguredCatalog(config: Config, dataDir: string): Promise<Catalog> {
  const c = config.catalog;
  if (c.driver === 'postgres') {
    const connectionString = await secretSetting({ fileKey: 'catalog.url_file', file: c.url_file, value: c.url });
    // NOTE: loaded only when configured: pg is not needed by the embedded default.
    const { createPostgresCatalog } = await import('../drivers/catalog/postgres.ts');
    return createPostgresCatalog({ connectionString: connectionString ?? '', schema: c.schema });
  }
  const file = join(dataDir, 'catalog.sqlite');
  await requireCatalogOf(dataDir, file);
  try {
    return createSqliteCatalog({ file, checkIntegrity: true });
  } catch (err) {
    if (err instanceof CatalogOptionError) throw err;
    if (err instanceof CatalogDamagedError) {
      throw new OperatorError(`catalog: '${file}' is damaged (${err.problems}); lading does not start on it: restore the catalog from a backup.`, { cause: err });
    }
    // NOTE: SQLite's own message ("unable to open database file") names no file.
    throw new OperatorError(`catalog: cannot open '${file}' (${(err as Error).message}).`, { cause: err });
  }
}

/** What a start creates in the data directory besides the catalog (see `createDeps`). */
const MADE_BY_A_START = ['resource', 'ca', 'keys'];

/**
 * Rejects with `OperatorError` when the SQLite catalog `file` is missing or empty while the data
 * directory `dataDir` holds what an earlier start made (`MADE_BY_A_START`): the catalog was
 * lost, and opening it would silently begin a new, empty deployment next to the old one's
 * bytes, CA and keys. A new or empty directory passes.
 */
async function requireCatalogOf(dataDir: string, file: string): Promise<void> {
  const size = await stat(file).then((s) => s.size, (err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new OperatorError(`catalog: cannot use '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}).`, { cause: err });
  });
  if (size !== null && size > 0) return;
  const present = (await readdir(dataDir).catch(() => [] as string[])).filter((name) => MADE_BY_A_START.includes(name)).sort();
  if (present.length === 0) return;
  throw new OperatorError(`catalog: '${file}' is ${size === null ? 'missing' : 'empty'}, but the data directory '${dataDir}' holds ${present.map((p) => `${p}/`).join(', ')} of an earlier start; restore the catalog from a backup, or give a new deployment another --data.`);
}

/**
 * Opens the configured resource (`resource.path`, by default `<dataDir>/resource`, or S3).
 * Rejects with `ConfigError` when `resource.s3.secret_access_key_file` cannot be read.
 */
export async function openResource(config: Config, dataDir: string): Promise<Resource> {
  const r = config.resource;
  if (r.driver === 's3') {
    const secretAccessKey = await secretSetting({
      fileKey: 'resource.s3.secret_access_key_file', file: r.s3.secret_access_key_file, value: r.s3.secret_access_key,
    });
    // NOTE: loaded only when configured: the AWS SDK costs memory at every start otherwise.
    const { createS3Resource } = await import('../drivers/resource/s3.ts');
    return createS3Resource({
      endpoint: r.s3.endpoint ?? '', bucket: r.s3.bucket ?? '', region: r.s3.region, prefix: r.s3.prefix,
      accessKeyId: r.s3.access_key_id ?? '', secretAccessKey: secretAccessKey ?? '', payloadSigning: r.s3.payload_signing,
    });
  }
  return createFsResource({ root: r.path ?? join(dataDir, 'resource'), fsync: r.fsync });
}

/** A node silent for this many heartbeats counts as dead. */
export const HEARTBEATS_TO_DEATH = 6;

/**
 * What recovery may remove at `now`: a node's unfinished uploads only once it has been silent
 * for `HEARTBEATS_TO_DEATH` heartbeats — a live node's, this one's included, never, however old
 * — and leftovers no node owns once older than `recovery.grace`. At the start of a node on the
 * embedded catalog every leftover goes: the process holds the data directory's lock, so
 * whatever an earlier one left is abandoned.
 */
export function recoveryCutoff(config: Config, now: Date, atStart: boolean): RecoveryCutoff {
  if (atStart && config.catalog.driver !== 'postgres') return { staleBefore: now };
  return {
    staleBefore: new Date(now.getTime() - config.recovery.grace * 1000),
    deadBefore: new Date(now.getTime() - HEARTBEATS_TO_DEATH * config.recovery.heartbeat * 1000),
  };
}

/**
 * The cut-off for start-up recovery: leftovers of uploads started before it are removed. With
 * the embedded catalog this process owns everything, so all of them; with a shared catalog
 * other nodes may be writing right now, so only those older than `recovery.grace`.
 */
export function staleBefore(config: Config, now: Date): Date {
  return config.catalog.driver === 'postgres' ? new Date(now.getTime() - config.recovery.grace * 1000) : now;
}
