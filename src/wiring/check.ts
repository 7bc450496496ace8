/**
 * `lading serve --check`: validates a configuration and the reachability of what it names,
 * without serving. Reports the address it would listen on and the data directory, opens the
 * catalog (which also brings its schema up to date) and reads the root, then stores, sizes,
 * reads back and deletes a small probe object on the resource, and says where links in PID
 * records will point. Creates no data directory. Reports what it checked; secrets never
 * appear in the report or in its errors.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { type Config, ConfigError, parseListen } from './config.ts';
import { LadingError } from '../core/errors.ts';
import { parsePath } from '../core/path.ts';
import { PublicBase } from '../core/public-base.ts';
import type { Catalog, Resource } from '../core/ports.ts';
import { openCatalog, openResource } from './drivers.ts';
import { openDataDir } from './data-dir.ts';

function failure(what: string, err: unknown): LadingError {
  const message = err instanceof Error ? err.message : String(err);
  return new LadingError('UNAVAILABLE', `check failed: ${what}: ${message}`, { cause: err });
}

/**
 * Where PID records' links point: the configured public URL, else the address lading listens
 * on (never a request's Host header), which clients elsewhere may not reach.
 */
function pidLinks(config: Config): string {
  if (config.pid.rules === null) return 'ok  PID records: no rules (pid.rules), so no PID is registered';
  if (config.public_url !== null) return `ok  PID records: links start with public_url ${config.public_url}`;
  const base = new PublicBase(null);
  const { host, port } = parseListen(config.listen);
  base.listening({ address: host, family: host.includes(':') ? 'IPv6' : 'IPv4', port });
  return `warn PID records: public_url is not set, so links in PID records name the listen address ${base.outside()}, which clients elsewhere may not reach; set public_url`;
}

/**
 * Runs the checks and resolves with a short report, one line per check. Rejects with
 * `UNAVAILABLE` naming the part that failed (PostgreSQL catalog, S3 store, …); configuration
 * errors, among them a data directory that is a file or cannot be written, reject as
 * `ConfigError`. A data directory that does not exist yet is reported, not created, and what
 * would live in it (the SQLite catalog, the default file system resource) is not checked.
 */
export async function checkDeployment(config: Config): Promise<string> {
  const dataDir = resolve(config.data);
  const exists = await stat(dataDir).then(() => true, () => false);
  if (exists) await openDataDir(dataDir, { create: false });
  const lines = [
    `ok  configuration: listen ${config.listen}, zone /${config.zone}${config.public_url ? `, public URL ${config.public_url}` : ''}${config.metrics.listen ? `, metrics on ${config.metrics.listen}` : ''}`,
    `ok  data directory ${dataDir}${exists ? '' : ': does not exist yet; lading serve creates it'}`,
  ];
  const catalogName = config.catalog.driver === 'postgres' ? 'PostgreSQL catalog' : 'SQLite catalog';
  const resourceName = config.resource.driver === 's3' ? 'S3 resource' : 'file system resource';
  const catalogLater = !exists && config.catalog.driver === 'sqlite';
  const resourceLater = !exists && config.resource.driver === 'fs' && config.resource.path === null;
  let catalog: Catalog | undefined;
  let resource: Resource | undefined;
  try {
    if (catalogLater) {
      lines.push(`--  ${catalogName}: not created yet (${join(dataDir, 'catalog.sqlite')})`);
    } else {
      try {
        catalog = await openCatalog(config, dataDir);
        if ((await catalog.getEntity(parsePath('/')))?.kind !== 'collection') throw new Error('the catalog has no root collection');
      } catch (err) {
        throw err instanceof ConfigError ? err : failure(catalogName, err);
      }
      lines.push(`ok  ${catalogName}: reachable, schema up to date`);
    }
    if (resourceLater) {
      lines.push(`--  ${resourceName}: not created yet (${join(dataDir, 'resource')})`);
    } else {
      try {
        resource = await openResource(config, dataDir);
        const key = `probe-${randomBytes(8).toString('hex')}`;
        const body = `lading probe ${new Date().toISOString()}`;
        await resource.write(key, Readable.from([Buffer.from(body)]));
        try {
          if ((await resource.size(key)) !== Buffer.byteLength(body)) throw new Error('the probe object has the wrong size');
          if ((await text(await resource.read(key))) !== body) throw new Error('the probe object reads back wrong');
        } finally {
          await resource.delete(key);
        }
      } catch (err) {
        throw err instanceof ConfigError ? err : failure(resourceName, err);
      }
      lines.push(`ok  ${resourceName}: stored, read back and deleted a probe object`);
    }
    lines.push(pidLinks(config));
    return lines.map((l) => l + '\n').join('') + 'configuration ok\n';
  } finally {
    await resource?.close().catch(() => {});
    await catalog?.close().catch(() => {});
  }
}
