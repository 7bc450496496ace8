/**
 * Creates the process's dependencies from a configuration: the catalog and resource drivers,
 * the backend, sessions and the logger. Shared by `lading serve` and the admin commands so
 * both see the same data directory the same way.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { Backend } from './core/backend.ts';
import { type Authority, type Catalog, type Clock, type Resource, systemClock } from './core/ports.ts';
import { createSqliteCatalog } from './drivers/catalog/sqlite.ts';
import { createFsResource } from './drivers/resource/fs.ts';
import { type CredentialManager, trustedAuthority, trustedCredentials } from './auth/credentials.ts';
import { SessionService } from './auth/sessions.ts';

export interface Deps {
  config: Config;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  catalog: Catalog;
  resource: Resource;
  backend: Backend;
  sessions: SessionService;
  close(): Promise<void>;
}

export interface DepsOverrides {
  clock?: Clock;
  logger?: Logger;
  credentials?: CredentialManager;
  authority?: Authority;
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const dataDir = resolve(config.data);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const logger = overrides.logger ?? pino({
    level: config.log.level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'password', 'token'], censor: '[redacted]' },
  });
  const clock = overrides.clock ?? systemClock;
  const catalog = createSqliteCatalog({ file: join(dataDir, 'catalog.sqlite') });
  const resource = await createFsResource({ root: join(dataDir, 'resource'), fsync: config.resource.fsync });
  const backend = new Backend({
    catalog, resource, clock, zone: config.zone, maxUploadBytes: config.limits.upload_bytes,
    authority: overrides.authority ?? trustedAuthority,
  });
  const sessions = new SessionService({
    catalog, clock, credentials: overrides.credentials ?? trustedCredentials, tokenTtlSeconds: config.auth.token_ttl,
  });
  return {
    config, dataDir, logger, clock, catalog, resource, backend, sessions,
    async close() {
      await resource.close();
      await catalog.close();
    },
  };
}
