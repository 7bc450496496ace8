/**
 * Moving and copying across collections through the HTTP API of a whole node: `PATCH
 * /api/registered/<path>` with `destination` (newname alone stays a rename in place) and
 * `POST /api/registered/<path>` with `copy_to` — access on both sides, nothing overwritten
 * unless asked, whole collections of 1,000 data objects, PID records that follow a move and
 * copies that get PIDs of their own, and the configured copy limits. Run by
 * `move-copy.test.ts` (SQLite, files) and `move-copy-postgres-s3.test.ts`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { parsePath } from '../../src/core/path.ts';
import type { DataObject, Entity } from '../../src/core/types.ts';

const RULES = `
object.created      /tz/home/*/reg/**   pid.register
object.renamed      /tz/home/**         pid.update
collection.renamed  /tz/home/**         pid.update
`;

const MANY = 1000;
const COPY_BYTES = 256 * 1024;

/** Waits until no job is pending or running (fan-out jobs included). */
async function settle(s: TestServer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const open = (await s.deps.catalog.listJobs(null, 100_000)).filter((j) => j.state === 'pending' || j.state === 'running');
    if (open.length === 0) return;
    await s.deps.jobs.waitFor(open.map((j) => j.id), 10_000);
  }
  throw new Error('jobs did not settle');
}

/** The suite on a node started with `flags` (the catalog and resource to use); `cleanup` runs after it stopped. */
export function moveCopySuite(name: string, flags: Record<string, unknown>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`move and copy across collections: ${name}`, () => {
    let dir: string;
    let s: TestServer;
    let alice: string;
    let bob: string;
    const headers = (auth: string) => ({ authorization: auth, 'content-type': 'application/json' });
    const put = (rest: string, body: string, auth = alice, query = '') => fetch(`${s.home('alice', rest)}${query}`, {
      method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body,
    });
    const mkdir = (rest: string) => fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: headers(alice), body: JSON.stringify({ path: `/tz/home/alice/${rest}`, force: true }),
    });
    const move = (rest: string, body: Record<string, unknown>, auth = alice) => fetch(s.home('alice', rest), { method: 'PATCH', headers: headers(auth), body: JSON.stringify(body) });
    const copy = (rest: string, body: Record<string, unknown>, auth = alice, query = '') => fetch(`${s.home('alice', rest)}${query}`, {
      method: 'POST', headers: headers(auth), body: JSON.stringify(body),
    });
    const download = async (rest: string) => {
      const res = await fetch(`${s.home('alice', rest)}?download=true`, { headers: { authorization: alice } });
      return res.status === 200 ? res.text() : res.status;
    };
    const at = (rest: string) => s.deps.catalog.getEntity(parsePath(`/tz/home/alice/${rest}`));
    const grant = (rest: string, principal: string, level: 'read' | 'write') => s.deps.catalog.setAccess(parsePath(`/tz/home/alice/${rest}`), principal, level);
    /** `count` data objects in `rest`, made in process (the HTTP path is not what is tested). */
    const fill = async (rest: string, count: number) => {
      await mkdir(rest);
      const actor = await s.deps.backend.actorFor('alice');
      for (let i = 0; i < count; i += 25) {
        await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, k) => {
          const n = i + k;
          return s.deps.backend.uploadAs(actor, parsePath(`/tz/home/alice/${rest}/f${String(n).padStart(4, '0')}.txt`), Readable.from([Buffer.from(`object ${n}\n`)]), { overwrite: false });
        }));
      }
    };
    const allBelow = async (rest: string): Promise<Entity[]> => {
      const out: Entity[] = [];
      let after;
      for (;;) {
        const page = await s.deps.catalog.listDescendants(parsePath(`/tz/home/alice/${rest}`), 500, after);
        out.push(...page);
        if (page.length < 500) return out;
        after = page.at(-1)!.path;
      }
    };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-move-'));
      await writeFile(join(dir, 'rules.txt'), RULES);
      s = await startTestServer({
        ...flags,
        'pid.rules': join(dir, 'rules.txt'), 'pid.prefix': '21.T11111', 'resource.fsync': false,
        'limits.copy_bytes': COPY_BYTES, 'limits.copy_entries': MANY + 10,
      });
      alice = await s.bearer('alice');
      bob = await s.bearer('bob');
      for (const c of ['reg/a', 'reg/b', 'reg/archive', 'reg/copies', 'inbox', 'private']) await mkdir(c);
    });
    after(async () => {
      await s?.stop();
      await rm(dir, { recursive: true, force: true });
      await cleanup();
    });

    it('moves a data object into another collection; its PID record follows; newname alone still renames in place', async () => {
      const up = (await json(await put('reg/a/x.txt', 'ex', alice, '?pid_await=true'))).Response.data;
      assert.match(up.PID, /^21\.T11111\//);
      const res = await move('reg/a/x.txt', { destination: '/tz/home/alice/reg/b' });
      assert.equal(res.status, 200);
      assert.deepEqual((await json(res)).Response.data, {
        filename: 'x.txt', link: s.home('alice', 'reg/b/x.txt'), location: `${s.deps.config.backend_url}/tz/home/alice/reg/b/x.txt`, path: '/tz/home/alice/reg/b',
      });
      assert.equal(await download('reg/a/x.txt'), 404);
      assert.equal(await download('reg/b/x.txt'), 'ex');
      await settle(s);
      assert.equal((await json(await fetch(`${s.url}/api/pids/${up.PID}`))).Response.data.URL, s.home('alice', 'reg/b/x.txt'));
      // A move may rename as well.
      assert.equal((await move('reg/b/x.txt', { destination: '/tz/home/alice/reg/a', newname: 'y.txt' })).status, 200);
      assert.equal(await download('reg/a/y.txt'), 'ex');
      await settle(s);
      assert.equal((await json(await fetch(`${s.url}/api/pids/${up.PID}`))).Response.data.URL, s.home('alice', 'reg/a/y.txt'));
      // The spec's rename is unchanged.
      assert.equal((await move('reg/a/y.txt', { newname: 'z.txt' })).status, 200);
      assert.equal(await download('reg/a/z.txt'), 'ex');
      assert.equal((await move('reg/a/z.txt', {})).status, 400);
      assert.equal((await move('reg/a/z.txt', { force: true })).status, 400);
    });

    it('never overwrites unless asked: 409, then force replaces a data object (never a collection)', async () => {
      await put('inbox/keep.txt', 'old');
      await put('reg/a/keep.txt', 'new');
      const refused = await move('reg/a/keep.txt', { destination: '/tz/home/alice/inbox' });
      assert.equal(refused.status, 409);
      assert.match(JSON.stringify((await json(refused)).Response.errors), /force=true/);
      assert.equal(await download('inbox/keep.txt'), 'old');
      assert.equal(await download('reg/a/keep.txt'), 'new');
      const forced = await move('reg/a/keep.txt', { destination: '/tz/home/alice/inbox', force: true });
      assert.equal(forced.status, 200);
      assert.equal(await download('inbox/keep.txt'), 'new');
      assert.equal(await download('reg/a/keep.txt'), 404);
      await mkdir('inbox/sub');
      await mkdir('reg/a/sub');
      assert.equal((await move('reg/a/sub', { destination: '/tz/home/alice/inbox', force: true })).status, 409);
      await put('reg/a/sub2', 'object');
      assert.equal((await move('reg/a/sub2', { destination: '/tz/home/alice/inbox', newname: 'sub', force: true })).status, 409);
      assert.equal((await at('inbox/sub'))?.kind, 'collection');
    });

    it('refuses to move a collection into itself or below itself with 400', async () => {
      await mkdir('loop/inner');
      assert.equal((await move('loop', { destination: '/tz/home/alice/loop' })).status, 400);
      assert.equal((await move('loop', { destination: '/tz/home/alice/loop/inner' })).status, 400);
      assert.equal((await at('loop/inner'))?.kind, 'collection');
      assert.equal((await move('loop', { destination: '/tz/home/alice/nowhere' })).status, 404);
      await put('loop/file', 'f');
      assert.equal((await move('loop/inner', { destination: '/tz/home/alice/loop/file' })).status, 400, 'not a collection');
    });

    it('needs write on the collection left, on the destination and on the entity; a refused move moves nothing', async () => {
      await mkdir('shared');
      await put('shared/doc.txt', 'doc');
      await grant('shared', 'bob', 'write');
      // Bob may write where the object is, but not into alice's private collection.
      const refused = await move('shared/doc.txt', { destination: '/tz/home/alice/private' }, bob);
      assert.equal(refused.status, 403);
      assert.equal(await download('shared/doc.txt'), 'doc');
      assert.equal(await at('private/doc.txt'), null);
      // Nor out of a collection where he may only read.
      await mkdir('readonly');
      await put('readonly/r.txt', 'r');
      await grant('readonly', 'bob', 'read');
      assert.equal((await move('readonly/r.txt', { destination: '/tz/home/alice/shared' }, bob)).status, 403);
      assert.equal(await download('readonly/r.txt'), 'r');
      // Into his own home is allowed once he may write on both sides.
      const res = await fetch(s.home('alice', 'shared/doc.txt'), { method: 'PATCH', headers: headers(bob), body: JSON.stringify({ destination: '/tz/home/bob' }) });
      assert.equal(res.status, 200);
      assert.equal(await at('shared/doc.txt'), null);
      assert.equal((await s.deps.catalog.getEntity(parsePath('/tz/home/bob/doc.txt')))?.kind, 'dataobject');
    });

    it('copies a data object: same checksum, user metadata but no PID attributes, a PID of its own', async () => {
      const up = (await json(await put('reg/a/orig.csv', 'a,b\n1,2\n', alice, '?pid_await=true'))).Response.data;
      await fetch(`${s.url}/api/metadata/tz/home/alice/reg/a/orig.csv`, { method: 'POST', headers: headers(alice), body: JSON.stringify({ attribute: 'depth', value: '1200', unit: 'm' }) });
      await s.deps.catalog.addMeta(parsePath('/tz/home/alice/reg/a/orig.csv'), { attribute: 'EUDAT/FIXED', value: 'x', unit: '' });
      const res = await copy('reg/a/orig.csv', { copy_to: '/tz/home/alice/reg/copies' }, alice, '?pid_await=true');
      assert.equal(res.status, 200);
      assert.deepEqual((await json(res)).Response.data, {
        filename: 'orig.csv', link: s.home('alice', 'reg/copies/orig.csv'), location: `${s.deps.config.backend_url}/tz/home/alice/reg/copies/orig.csv`, path: '/tz/home/alice/reg/copies',
      });
      const source = (await at('reg/a/orig.csv')) as DataObject;
      const copied = (await at('reg/copies/orig.csv')) as DataObject;
      assert.equal(copied.checksum, up.checksum);
      assert.equal(copied.size, source.size);
      assert.notEqual(copied.blob, source.blob);
      assert.equal(await download('reg/copies/orig.csv'), 'a,b\n1,2\n');
      const meta = await s.deps.catalog.listMeta(copied.path);
      assert.deepEqual(meta.filter((m) => m.attribute !== 'PID'), [{ attribute: 'depth', value: '1200', unit: 'm' }]);
      assert.match(copied.pid ?? '', /^21\.T11111\//, 'the copy has a PID of its own');
      assert.notEqual(copied.pid, up.PID);
      assert.equal((await json(await fetch(`${s.url}/api/pids/${copied.pid}`))).Response.data.URL, s.home('alice', 'reg/copies/orig.csv'));
      assert.equal((await json(await fetch(`${s.url}/api/pids/${up.PID}`))).Response.data.URL, s.home('alice', 'reg/a/orig.csv'));
      // Under another name, not over an existing one unless asked, never onto itself.
      assert.equal((await copy('reg/a/orig.csv', { copy_to: '/tz/home/alice/reg/a', newname: 'twin.csv' })).status, 200);
      assert.equal(await download('reg/a/twin.csv'), 'a,b\n1,2\n');
      await put('inbox/orig.csv', 'other');
      assert.equal((await copy('reg/a/orig.csv', { copy_to: '/tz/home/alice/inbox' })).status, 409);
      assert.equal(await download('inbox/orig.csv'), 'other');
      assert.equal((await copy('reg/a/orig.csv', { copy_to: '/tz/home/alice/inbox', force: true })).status, 200);
      assert.equal(await download('inbox/orig.csv'), 'a,b\n1,2\n');
      assert.equal((await copy('reg/a/orig.csv', { copy_to: '/tz/home/alice/reg/a' })).status, 400);
    });

    it('copies need read on the source and write on the destination', async () => {
      await put('private/secret.txt', 's');
      assert.equal((await fetch(s.home('alice', 'private/secret.txt'), { method: 'POST', headers: headers(bob), body: JSON.stringify({ copy_to: '/tz/home/bob' }) })).status, 403);
      assert.equal(await s.deps.catalog.getEntity(parsePath('/tz/home/bob/secret.txt')), null);
      await grant('readonly', 'bob', 'read');
      assert.equal((await copy('readonly/r.txt', { copy_to: '/tz/home/alice/private' }, bob)).status, 403);
      assert.equal(await at('private/r.txt'), null);
      assert.equal((await copy('readonly/r.txt', { copy_to: '/tz/home/bob' }, bob)).status, 200);
      const theirs = await s.deps.catalog.getEntity(parsePath('/tz/home/bob/r.txt'));
      assert.equal(theirs?.owner, 'bob', 'a copy belongs to whoever made it');
    });

    it('leaves no bytes and nothing tracked behind when the commit of a copy fails', async () => {
      const body = 'y'.repeat(100 * 1024);
      await put('reg/a/large.bin', body);
      const catalog = s.deps.catalog;
      const { commitObject, trackBlob } = catalog;
      let blob: string | null = null;
      // NOTE: the copy's bytes are stored, then its commit fails (as when the catalog is lost).
      catalog.trackBlob = (key, now, owner) => {
        blob = key;
        return trackBlob(key, now, owner);
      };
      catalog.commitObject = async () => { throw new Error('the catalog went away'); };
      let res: Response;
      try {
        res = await copy('reg/a/large.bin', { copy_to: '/tz/home/alice/inbox' });
      } finally {
        catalog.commitObject = commitObject;
        catalog.trackBlob = trackBlob;
      }
      assert.equal(res.status, 500);
      assert.equal(await at('inbox/large.bin'), null);
      assert.ok(blob, 'the copy stored bytes of its own, tracked first');
      assert.equal(await s.deps.resource.size(blob), null, 'they are gone');
      assert.ok(!(await catalog.trackedBlobs(new Date(Date.now() + 60_000))).some((t) => t.blob === blob), 'and no longer tracked');
      assert.equal(await download('reg/a/large.bin'), body);
    });

    it('refuses a copy over limits.copy_bytes or limits.copy_entries with 413 before copying anything', async () => {
      await mkdir('large');
      await put('large/blob.bin', 'x'.repeat(COPY_BYTES + 1));
      assert.equal((await copy('large/blob.bin', { copy_to: '/tz/home/alice/inbox' })).status, 413);
      assert.equal(await at('inbox/blob.bin'), null);
      assert.equal((await copy('large', { copy_to: '/tz/home/alice/inbox' })).status, 413);
      assert.equal(await at('inbox/large'), null);
    });

    it('moves and copies a collection of 1,000 data objects across collections, with PIDs right afterwards', async () => {
      await fill('reg/big', MANY);
      await mkdir('reg/big/nested');
      await put('reg/big/nested/deep.txt', 'deep');
      await settle(s);
      const before = (await allBelow('reg/big')).filter((e): e is DataObject => e.kind === 'dataobject');
      assert.equal(before.length, MANY + 1);
      assert.ok(before.every((e) => e.pid), 'every object has its PID before');
      // Bob may not move it into his home: he cannot write on the collection it leaves.
      assert.equal((await move('reg/big', { destination: '/tz/home/bob' }, bob)).status, 403);

      const moved = await move('reg/big', { destination: '/tz/home/alice/reg/archive' });
      assert.equal(moved.status, 200);
      assert.equal(await at('reg/big'), null);
      await settle(s);
      const after = (await allBelow('reg/archive/big')).filter((e): e is DataObject => e.kind === 'dataobject');
      assert.equal(after.length, MANY + 1);
      for (const e of after) {
        const was = before.find((b) => b.id === e.id)!;
        assert.equal(e.pid, was.pid, 'the PID stays with the object');
        const record = await s.deps.catalog.getHandle(e.pid!);
        assert.equal(record?.values.URL, `${s.url}/api/registered${e.path}`, `the record of ${e.path} follows the move`);
      }

      const copied = await copy('reg/archive/big', { copy_to: '/tz/home/alice/reg/copies' });
      assert.equal(copied.status, 200);
      await settle(s);
      const copies = (await allBelow('reg/copies/big')).filter((e): e is DataObject => e.kind === 'dataobject');
      assert.equal(copies.length, MANY + 1);
      const pids = new Set(after.map((e) => e.pid));
      for (const c of copies) {
        const original = after.find((e) => e.path === c.path.replace('/reg/copies/big', '/reg/archive/big'))!;
        assert.equal(c.checksum, original.checksum);
        assert.equal(c.owner, 'alice');
        assert.ok(c.pid && !pids.has(c.pid), `${c.path} has a PID of its own`);
        assert.equal((await s.deps.catalog.getHandle(c.pid))?.values.URL, `${s.url}/api/registered${c.path}`);
      }
      assert.equal(await download('reg/copies/big/nested/deep.txt'), 'deep');
      assert.equal(await download('reg/copies/big/f0999.txt'), 'object 999\n');
      // A copy over the entity limit (now two collections' worth) is refused whole.
      assert.equal((await copy('reg', { copy_to: '/tz/home/alice/inbox' })).status, 413);
      assert.equal(await at('inbox/reg'), null);
      // Moving a collection onto an existing one is refused, force or not; nothing moves.
      assert.equal((await move('reg/copies/big', { destination: '/tz/home/alice/reg/archive', force: true })).status, 409);
      assert.equal((await allBelow('reg/copies/big')).length, MANY + 2);
    });
  });
}
