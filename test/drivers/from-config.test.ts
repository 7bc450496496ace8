/**
 * Driver selection from the configuration: validation of `catalog.*`, `resource.*` and `pid.*`,
 * secrets read from files, the fs resource's directory, and the start-up recovery cut-off per
 * catalog.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/wiring/config.ts';
import { openCatalog, openResource, staleBefore } from '../../src/wiring/drivers.ts';
import { openPidProvider } from '../../src/wiring/pids.ts';
import { readSecretFile } from '../../src/wiring/secret-file.ts';
import { systemClock } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';

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

describe('secret files', () => {
  const isConfigError = (pattern: RegExp, secret?: string) => (e: Error) =>
    e instanceof ConfigError && pattern.test(e.message) && (secret === undefined || !e.message.includes(secret));

  it('reads the first line, trimmed', async () => {
    const file = join(dir, 'two-lines.secret');
    await writeFile(file, '  s3cret-one \nsecond line\n');
    assert.equal(await readSecretFile({ key: 'x.file', file }), 's3cret-one');
  });

  it('names the key and the file, never the content, when the file is unreadable or its first line empty', async () => {
    const empty = join(dir, 'empty.secret');
    await writeFile(empty, '   \ns3cret-below\n');
    await assert.rejects(readSecretFile({ key: 'x.file', file: empty }), isConfigError(/^x\.file: '.*empty\.secret' is empty\.$/, 's3cret-below'));
    await assert.rejects(readSecretFile({ key: 'x.file', file: join(dir, 'missing.secret') }), isConfigError(/^x\.file: cannot read '.*missing\.secret' \(ENOENT\)\.$/));
  });

  it('creates a missing file once, with 32 random bytes and mode 0600, when asked', async () => {
    const file = join(dir, 'keys', 'created.secret');
    const values = await Promise.all(Array.from({ length: 5 }, () => readSecretFile({ key: 'x.file', file, create: true })));
    assert.equal(new Set(values).size, 1, 'every concurrent reader gets the one file that won');
    assert.equal(Buffer.from(values[0]!, 'base64url').length, 32);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await readFile(file, 'utf8')).trim(), values[0]);
  });

  it('names catalog.url_file when the PostgreSQL connection string cannot be read', async () => {
    const config = loadConfig({ env: { LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL_FILE: join(dir, 'no-url') } });
    await assert.rejects(openCatalog(config, dir), isConfigError(/catalog\.url_file/));
  });

  it('names catalog.schema when the PostgreSQL driver refuses it, without connecting', async () => {
    const config = loadConfig({ env: { LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: 'postgresql://u:secret-pw@127.0.0.1:1/x', LADING_CATALOG_SCHEMA: 'a-b' } });
    await assert.rejects(openCatalog(config, dir), (err: Error) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, 'catalog.schema: must be a plain SQL identifier.');
      return true;
    });
  });
});

describe('PID provider from the configuration', () => {
  const catalog = createSqliteCatalog({ file: join(dir, 'pid.sqlite') });
  after(() => catalog.close());
  const open = (env: Record<string, string>) => openPidProvider(loadConfig({ env }), catalog, systemClock);
  const handle = { LADING_PID_PROVIDER: 'handle', LADING_PID_HANDLE_URL: 'https://hdl.example.org:8000', LADING_PID_HANDLE_USER: '300:21.T1/ADMIN' };

  it('creates the embedded provider and the Handle REST provider with a password from the environment or a file', async () => {
    assert.equal((await open({ LADING_PID_PREFIX: '21.T1' })).prefix, '21.T1');
    assert.equal((await open({ ...handle, LADING_PID_PREFIX: '21.T1', LADING_PID_HANDLE_PASSWORD: 'pw' })).prefix, '21.T1');
    const file = join(dir, 'handle.secret');
    await writeFile(file, 'pw-from-file\n', { mode: 0o600 });
    assert.equal((await open({ ...handle, LADING_PID_HANDLE_PASSWORD_FILE: file })).prefix, '21.T99999');
  });

  it('turns the options a provider refuses into errors naming the configuration keys, never the password', async () => {
    const refused = (env: Record<string, string>, pattern: RegExp) => assert.rejects(open(env), (e: Error) => {
      assert.ok(e instanceof ConfigError, e.message);
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes('pw-not-to-print'));
      return true;
    });
    await refused({ LADING_PID_PREFIX: '21.T1/x' }, /^pid\.prefix must not contain '\/'/);
    await refused({ ...handle, LADING_PID_PREFIX: 'a/b', LADING_PID_HANDLE_PASSWORD: 'pw-not-to-print' }, /^pid\.prefix/);
    await refused({ ...handle, LADING_PID_HANDLE_URL: '', LADING_PID_HANDLE_PASSWORD: 'pw-not-to-print' }, /^pid\.handle_url is required/);
    await refused({ ...handle, LADING_PID_HANDLE_URL: 'ftp://hdl.example.org', LADING_PID_HANDLE_PASSWORD: 'pw-not-to-print' }, /^pid\.handle_url must be an http\(s\) URL/);
    await refused({ ...handle, LADING_PID_HANDLE_USER: '', LADING_PID_HANDLE_PASSWORD: 'pw-not-to-print' }, /^pid\.handle_user is required/);
    await refused(handle, /^pid\.handle_password_file \(or LADING_PID_HANDLE_PASSWORD\) is required/);
    await refused({ ...handle, LADING_PID_HANDLE_PASSWORD_FILE: join(dir, 'missing') }, /^pid\.handle_password_file: cannot read/);
  });
});
