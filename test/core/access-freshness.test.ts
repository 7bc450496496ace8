/**
 * Access is decided on what the catalog holds now, though the SQLite catalog remembers its
 * reads: a grant, a revocation, a new member of a group, by this process or another, is seen
 * at the next request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AdminService } from '../../src/core/admin.ts';
import { Backend } from '../../src/core/backend.ts';
import { parsePath } from '../../src/core/path.ts';
import { type BackendCredential, type Catalog, type Resource, systemClock } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { trustedAuthority, trustedCredentials } from '../helpers/trusted.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';

describe('access on remembered reads', () => {
  let dir: string;
  let file: string;
  let catalog: Catalog;
  let resource: Resource;
  let admin: AdminService;
  const as = (user: string): BackendCredential => ({ kind: 'trusted', user });
  const home = parsePath('/z/home/ann');
  const backendOn = (c: Catalog) => new Backend({ catalog: c, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-access-'));
    file = join(dir, 'c.sqlite');
    catalog = createSqliteCatalog({ file });
    resource = await createFsResource({ root: join(dir, 'r') });
    const backend = backendOn(catalog);
    await backend.init(new Date());
    admin = new AdminService({ backend, catalog, credentials: trustedCredentials, clock: systemClock, hashPassword: async (p) => `hashed:${p}` });
    await admin.addUser('ann', { admin: false, password: 'pw' });
    await admin.addUser('bob', { admin: false, password: 'pw' });
    await admin.addGroup('team');
  });
  after(async () => {
    await resource.close();
    await catalog.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sees a grant, a revocation and a new member of a group at the next request', async () => {
    const backend = backendOn(catalog);
    await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
    await backend.setAccess(as('ann'), home, 'bob', 'read');
    assert.equal((await backend.stat(as('bob'), home)).path, home);
    await backend.setAccess(as('ann'), home, 'bob', null);
    await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
    await backend.setAccess(as('ann'), home, 'team', 'read');
    await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
    await admin.addToGroup('team', 'bob');
    assert.equal((await backend.stat(as('bob'), home)).path, home, 'a new member of a group that may read');
    await backend.setAccess(as('ann'), home, 'team', null);
    await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
  });

  it('decides each upload into a collection on its access now, however many uploads came between', async () => {
    const backend = backendOn(catalog);
    const put = (user: string, name: string, overwrite = false) => backend.upload(as(user), parsePath(`${home}/${name}`), Readable.from([Buffer.from(name)]), { overwrite });
    await rejectsWith(put('bob', 'b0'), 'FORBIDDEN');
    await backend.setAccess(as('ann'), home, 'bob', 'write');
    await put('bob', 'b1');
    await put('ann', 'a1');
    await put('ann', 'a2');
    await put('bob', 'a1', true);
    await backend.setAccess(as('ann'), home, 'bob', 'read');
    await rejectsWith(put('bob', 'b2'), 'FORBIDDEN');
    await rejectsWith(put('bob', 'a2', true), 'FORBIDDEN');
    await put('ann', 'a3');
    await backend.setAccess(as('ann'), home, 'team', 'write');
    await admin.addToGroup('team', 'bob');
    await put('bob', 'b3');
    await put('ann', 'a4');
    await backend.setAccess(as('ann'), home, 'team', null);
    await rejectsWith(put('bob', 'b4'), 'FORBIDDEN');
    await backend.setAccess(as('ann'), home, 'bob', null);
  });

  it('sees another process\'s grant from the next turn of the event loop on', async () => {
    const backend = backendOn(catalog);
    await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
    const other = createSqliteCatalog({ file });
    try {
      await other.setAccess(home, 'bob', 'read');
      await nextTurn();
      assert.equal((await backend.stat(as('bob'), home)).path, home);
      await other.setAccess(home, 'bob', null);
      await nextTurn();
      await rejectsWith(backend.stat(as('bob'), home), 'FORBIDDEN');
    } finally {
      await other.close();
    }
  });
});
