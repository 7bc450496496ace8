/**
 * Driver selection from the configuration: validation of `catalog.*` and `resource.*`, secrets
 * read from files, the fs resource's directory, and the start-up recovery cut-off per catalog.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/wiring/config.ts';
import { openCatalog, openResource, staleBefore } from '../../src/wiring/drivers.ts';

const dir = await mkdtemp(join(tmpdir(), 'lading-from-config-'));
after(() => rm(dir, { recursive: true, force: true }));

describe('drivers from the configuration', () => {
  it('defaults to SQLite and a file system resource under the data directory', async () => {
    const config = loadConfig({ env: {} });
    assert.equal(config.catalog.driver, 'sqlite');
    assert.equal(config.resource.driver, 'fs');
    const catalog = await openCatalog(config, dir);
    const resource = await openResource(config, dir);
    try {
      assert.equal(catalog.driver, 'sqlite');
      assert.equal(resource.driver, 'fs');
      assert.ok((await stat(join(dir, 'resource', 'blobs'))).isDirectory());
    } finally {
      await resource.close();
      await catalog.close();
    }
  });

  it('puts the fs resource at resource.path, e.g. a shared mount', async () => {
    const shared = join(dir, 'shared-mount');
    const resource = await openResource(loadConfig({ env: { LADING_RESOURCE_PATH: shared } }), dir);
    await resource.close();
    assert.ok((await stat(join(shared, 'blobs'))).isDirectory());
  });

  it('refuses unknown drivers and drivers missing what they need, naming the keys', () => {
    assert.throws(() => loadConfig({ env: { LADING_CATALOG_DRIVER: 'mysql' } }), (e: Error) => e instanceof ConfigError && /catalog\.driver/.test(e.message));
    assert.throws(() => loadConfig({ env: { LADING_RESOURCE_DRIVER: 'tape' } }), (e: Error) => e instanceof ConfigError && /resource\.driver/.test(e.message));
    assert.throws(() => loadConfig({ env: { LADING_CATALOG_DRIVER: 'postgres' } }), /catalog\.url_file or LADING_CATALOG_URL/);
    assert.throws(() => loadConfig({ env: { LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: 'http://s3' } }),
      (e: Error) => /resource\.s3\.bucket/.test(e.message) && !/resource\.s3\.endpoint/.test(e.message));
  });

  it('reads the S3 secret from its file, and names an unreadable file without its content', async () => {
    const secretFile = join(dir, 's3.secret');
    await writeFile(secretFile, 'from-the-file\n', { mode: 0o600 });
    const env = {
      LADING_RESOURCE_DRIVER: 's3', LADING_RESOURCE_S3_ENDPOINT: 'http://127.0.0.1:1', LADING_RESOURCE_S3_BUCKET: 'b',
      LADING_RESOURCE_S3_ACCESS_KEY_ID: 'id', LADING_RESOURCE_S3_SECRET_ACCESS_KEY_FILE: secretFile,
    };
    const resource = await openResource(loadConfig({ env }), dir);
    assert.equal(resource.driver, 's3');
    await resource.close();
    await assert.rejects(openResource(loadConfig({ env: { ...env, LADING_RESOURCE_S3_SECRET_ACCESS_KEY_FILE: join(dir, 'missing') } }), dir),
      (e: Error) => e instanceof ConfigError && /resource\.s3\.secret_access_key_file/.test(e.message));
  });

  it('recovers everything at start with SQLite, and only what is older than recovery.grace with PostgreSQL', () => {
    const now = new Date('2026-06-01T12:00:00Z');
    assert.equal(staleBefore(loadConfig({ env: {} }), now).getTime(), now.getTime());
    const shared = loadConfig({ env: { LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: 'postgresql://x/y', LADING_RECOVERY_GRACE: '600' } });
    assert.equal(staleBefore(shared, now).getTime(), now.getTime() - 600_000);
    const byDefault = loadConfig({ env: { LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: 'postgresql://x/y' } });
    assert.equal(staleBefore(byDefault, now).getTime(), now.getTime() - 86_400_000);
  });
});
