/**
 * The admin service checks what the operator gives it as the backend does: valid names,
 * paths, levels and states, principals that exist, groups that are groups; and stores nothing
 * when it refuses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService } from '../../src/core/admin.ts';
import { Backend } from '../../src/core/backend.ts';
import { parsePath } from '../../src/core/path.ts';
import { type Catalog, type Resource, systemClock } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { trustedAuthority, trustedCredentials } from '../helpers/trusted.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';

describe('admin service', () => {
  let dir: string;
  let catalog: Catalog;
  let resource: Resource;
  let admin: AdminService;
  const home = parsePath('/z/home/ann');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-admin-'));
    catalog = createSqliteCatalog({ file: join(dir, 'c.sqlite') });
    resource = await createFsResource({ root: join(dir, 'r') });
    const backend = new Backend({ catalog, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });
    await backend.init(new Date());
    admin = new AdminService({
      backend, catalog, credentials: trustedCredentials, clock: systemClock, hashPassword: async (p) => `hashed:${p}`,
    });
    assert.equal(await admin.addUser('ann', { admin: false, password: 'pw' }), home);
    await admin.addUser('root', { admin: true, password: null });
    await admin.addGroup('team');
  });
  after(async () => {
    await resource.close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates users with a hashed password, administrators and groups, and lists them without hashes', async () => {
    assert.equal((await catalog.getUser('ann'))?.passwordHash, 'hashed:pw');
    assert.equal((await catalog.getUser('root'))?.passwordHash, null);
    assert.deepEqual(await admin.listUsers(), [
      { name: 'ann', kind: 'user', disabled: false }, { name: 'root', kind: 'admin', disabled: false }, { name: 'team', kind: 'group', disabled: false },
    ]);
    assert.equal((await catalog.getEntity(home))?.owner, 'ann');
  });

  it('refuses invalid and taken names and empty passwords, as the backend does', async () => {
    await rejectsWith(admin.addUser('public', { admin: false, password: 'pw' }), 'BAD_REQUEST');
    await rejectsWith(admin.addUser('-x', { admin: false, password: 'pw' }), 'BAD_REQUEST');
    await rejectsWith(admin.addUser('eve', { admin: false, password: '' }), 'BAD_REQUEST');
    await rejectsWith(admin.addGroup('ann'), 'CONFLICT');
    assert.equal(await catalog.getUser('eve'), null);
  });

  it('sets passwords of users only', async () => {
    await admin.setPassword('ann', 'new');
    assert.equal((await catalog.getUser('ann'))?.passwordHash, 'hashed:new');
    await rejectsWith(admin.setPassword('nobody', 'x'), 'NOT_FOUND');
    await rejectsWith(admin.setPassword('team', 'x'), 'BAD_REQUEST');
    await rejectsWith(admin.setPassword('ann', ''), 'BAD_REQUEST');
    assert.equal((await catalog.getUser('team'))?.passwordHash, null);
  });

  it('adds users to groups, never a group to a user or a group to a group', async () => {
    await admin.addToGroup('team', 'ann');
    await admin.addToGroup('team', 'ann');
    assert.deepEqual(await catalog.groupsOf('ann'), ['team']);
    await rejectsWith(admin.addToGroup('nogroup', 'ann'), 'NOT_FOUND');
    await rejectsWith(admin.addToGroup('team', 'nobody'), 'NOT_FOUND');
    await rejectsWith(admin.addToGroup('root', 'ann'), 'BAD_REQUEST');
    await rejectsWith(admin.addToGroup('team', 'team'), 'BAD_REQUEST');
    assert.deepEqual(await catalog.groupsOf('team'), []);
  });

  it('grants and revokes access to users, groups and public on existing paths only', async () => {
    await admin.setAccess(home, 'team', 'read');
    await admin.setAccess(`${home}/`, 'public', 'write');
    assert.deepEqual(await admin.listAccess(home), [{ principal: 'ann', level: 'own' }, { principal: 'public', level: 'write' }, { principal: 'team', level: 'read' }]);
    await admin.setAccess(home, 'public', 'none');
    assert.deepEqual((await admin.listAccess(home)).map((e) => e.principal), ['ann', 'team']);
  });

  it('refuses access for an unknown principal, an unknown level, a missing or malformed path', async () => {
    await rejectsWith(admin.setAccess(home, 'nobody', 'read'), 'NOT_FOUND');
    await rejectsWith(admin.setAccess(home, 'team', 'reed'), 'BAD_REQUEST');
    await rejectsWith(admin.setAccess('/z/home/ann/missing', 'team', 'read'), 'NOT_FOUND');
    await rejectsWith(admin.setAccess('z/home/ann', 'team', 'read'), 'INVALID_PATH');
    await rejectsWith(admin.setAccess('/z/home/../home/ann', 'team', 'read'), 'INVALID_PATH');
    await rejectsWith(admin.listAccess('/z/home/ann/missing'), 'NOT_FOUND');
    assert.deepEqual((await admin.listAccess(home)).map((e) => e.principal), ['ann', 'team']);
  });

  it('shows the proxy of a live session only', async () => {
    await rejectsWith(admin.proxyOf('ann'), 'NOT_FOUND');
    const now = new Date();
    await catalog.putSession({
      tokenHash: 'h', user: 'ann', createdAt: now, expiresAt: new Date(now.getTime() + 60_000), credential: await trustedCredentials.issue('ann', now),
    });
    assert.equal((await admin.proxyOf('ann')).subject, 'trusted:ann');
    await rejectsWith(admin.proxyOf('ann', new Date(now.getTime() + 120_000)), 'NOT_FOUND');
  });

  it('lists jobs of a known state with a positive limit', async () => {
    assert.deepEqual(await admin.listJobs({ state: null, limit: 10 }), []);
    assert.deepEqual(await admin.listJobs({ state: 'failed', limit: 10 }), []);
    await rejectsWith(admin.listJobs({ state: 'lost', limit: 10 }), 'BAD_REQUEST');
    await rejectsWith(admin.listJobs({ state: null, limit: 0 }), 'BAD_REQUEST');
    await rejectsWith(admin.listJobs({ state: null, limit: 1.5 }), 'BAD_REQUEST');
  });
});
