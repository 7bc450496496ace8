/**
 * Chooses and opens the catalog and resource drivers a configuration names (`catalog.driver`,
 * `resource.driver`), reading their secrets from the files or environment-provided keys the
 * configuration points to. The one place that maps configuration keys to driver options; it
 * never logs, prints or puts a secret in an error message.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Config, ConfigError } from './config.ts';
import type { Catalog, Resource } from '../core/ports.ts';
import { createSqliteCatalog } from '../drivers/catalog/sqlite.ts';
import { createFsResource } from '../drivers/resource/fs.ts';

/** The first line of a secret file, trimmed. `ConfigError` naming the key when unreadable or empty. */
async function secretFile(key: string, file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${key}: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  const line = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (!line) throw new ConfigError(`${key}: '${file}' is empty.`);
  return line;
}

/**
 * Opens the configured catalog. Rejects with `ConfigError` for an unusable configuration and
 * with `UNAVAILABLE` when PostgreSQL cannot be reached.
 */
export async function openCatalog(config: Config, dataDir: string): Promise<Catalog> {
  if (config.catalog.driver === 'postgres') {
    const connectionString = config.catalog.url_file
      ? await secretFile('catalog.url_file', config.catalog.url_file)
      : config.catalog.url;
    if (!connectionString) throw new ConfigError('catalog.driver is postgres: set catalog.url_file or LADING_CATALOG_URL.');
    // NOTE: loaded only when configured: pg is not needed by the embedded default.
    const { createPostgresCatalog } = await import('../drivers/catalog/postgres.ts');
    return createPostgresCatalog({ connectionString, schema: config.catalog.schema });
  }
  return createSqliteCatalog({ file: join(dataDir, 'catalog.sqlite') });
}

/** Opens the configured resource. Rejects with `ConfigError` for an unusable configuration. */
export async function openResource(config: Config, dataDir: string): Promise<Resource> {
  if (config.resource.driver === 's3') {
    const s3 = config.resource.s3;
    const secretAccessKey = s3.secret_access_key_file
      ? await secretFile('resource.s3.secret_access_key_file', s3.secret_access_key_file)
      : s3.secret_access_key;
    if (!s3.endpoint || !s3.bucket || !s3.access_key_id || !secretAccessKey) {
      throw new ConfigError('resource.driver is s3: set resource.s3.endpoint, bucket, access_key_id and the secret access key.');
    }
    // NOTE: loaded only when configured: the AWS SDK costs memory at every start otherwise.
    const { createS3Resource } = await import('../drivers/resource/s3.ts');
    return createS3Resource({
      endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, prefix: s3.prefix,
      accessKeyId: s3.access_key_id, secretAccessKey,
    });
  }
  return createFsResource({ root: config.resource.path ?? join(dataDir, 'resource'), fsync: config.resource.fsync });
}

/**
 * The cut-off for start-up recovery: leftovers of uploads started before it are removed. With
 * the embedded catalog this process owns everything, so all of them; with a shared catalog
 * other nodes may be writing right now, so only those older than `recovery.grace`.
 */
export function staleBefore(config: Config, now: Date): Date {
  return config.catalog.driver === 'postgres' ? new Date(now.getTime() - config.recovery.grace * 1000) : now;
}
