/**
 * What the backend remembers of the reads on every request's path (the acting user, and what a
 * stat found) lasts only while the catalog's read version stays the same: a grant, a
 * revocation, a new member of a group, by this process or another, is seen at the next request; and
 * with a catalog that tells no version, every request reads again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AdminService } from '../../src/core/admin.ts';
import { Backend } from '../../src/core/backend.ts';
import { parsePath } from '../../src/core/path.ts';
import { type BackendCredential, type Catalog, type Resource, systemClock } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { trustedAuthority, trustedCredentials } from '../helpers/trusted.ts';
import { rejectsWith } from '../contracts/catalog-contract.ts';

const READS = ['getUser', 'groupsOf', 'accessLevel', 'getEntity'] as const;

/** `catalog` with its reads on the request path counted; without `readVersion` when `hide`. */
function counted(catalog: Catalog, hide = false): { catalog: Catalog; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(catalog, {
    get(target, name, receiver) {
      if (hide && name === 'readVersion') return undefined;
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if ((READS as readonly (string | symbol)[]).includes(name)) {
        return (...args: unknown[]) => {
          reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { catalog: proxy, reads: () => reads };
}

describe('reads the backend remembers', () => {
  let dir: string;
  let file: string;
  let catalog: Catalog;
  let resource: Resource;
  let admin: AdminService;
  const as = (user: string): BackendCredential => ({ kind: 'trusted', user });
  const home = parsePath('/z/home/ann');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-remembered-'));
    file = join(dir, 'c.sqlite');
    catalog = createSqliteCatalog({ file });
    resource = await createFsResource({ root: join(dir, 'r') });
    const backend = new Backend({ catalog, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });
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

  const backendOn = (c: Catalog) => new Backend({ catalog: c, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });

  it('reads nothing again for a second stat while nothing is written, and reads again after any write', async () => {
    const { catalog: c, reads } = counted(catalog);
    const backend = backendOn(c);
    assert.equal((await backend.stat(as('ann'), home)).path, home);
    const first = reads();
    assert.ok(first >= 4, `the first stat reads the user, the groups, the level and the entity (${first})`);
    assert.equal((await backend.stat(as('ann'), home)).path, home);
    assert.equal(reads(), first, 'the second reads nothing');
    await admin.addToGroup('team', 'ann');
    assert.equal((await backend.stat(as('ann'), home)).path, home);
    assert.ok(reads() >= first + 4, 'after a write it reads again');
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

  it('reads again at every request with a catalog that tells no read version', async () => {
    const { catalog: c, reads } = counted(catalog, true);
    const backend = backendOn(c);
    await backend.stat(as('ann'), home);
    const first = reads();
    await backend.stat(as('ann'), home);
    assert.equal(reads(), 2 * first);
  });
});
