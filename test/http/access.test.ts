/**
 * Access lists, metadata and publishing over HTTP, as the owner, another user, a member of a
 * group, every user (through `public`), an administrator and a caller without a token see
 * them: `/api/acl`, `/api/metadata`, `/api/publish`, and the reads of published data at
 * `/api/public` (Range, conditional requests, HEAD, and 404 for whatever is not published).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { hashPassword } from '../../src/identity/secrets/password.ts';
import { parsePath } from '../../src/core/path.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

describe('access lists, metadata and publishing over the API', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let carol: string;
  let dave: string;
  let admin: string;
  const lines: Record<string, unknown>[] = [];
  const api = (method: string, url: string, auth: string | null, body?: unknown, headers: Record<string, string> = {}) => fetch(url, {
    method,
    headers: { ...(auth ? { authorization: auth } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const at = (area: string, rest: string) => `${s.url}/api/${area}/tz/home/alice/${rest}`;
  const put = (rest: string, body: string, auth = alice) => fetch(s.home('alice', rest), {
    method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body,
  });
  const mkdir = (rest: string, auth = alice) => api('POST', `${s.url}/api/registered`, auth, { path: `/tz/home/alice/${rest}`, force: true });
  const data = async (res: Response) => (await json(res)).Response.data;

  before(async () => {
    const audit = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    s = await startTestServer({ 'resource.fsync': false }, { overrides: { logger: pino({ level: 'info' }, audit) } });
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
    carol = await s.bearer('carol');
    dave = await s.bearer('dave');
    await s.deps.admin.addGroup('team');
    await s.deps.admin.addToGroup('team', 'carol');
    await s.deps.backend.addUser('root', { kind: 'admin', passwordHash: await hashPassword('pw-root') });
    admin = `Bearer ${await s.login('root')}`;
    assert.equal((await mkdir('proj/sub')).status, 200);
    assert.equal((await put('proj/sub/data.csv', '0123456789abcdef')).status, 200);
    assert.equal((await put('proj/readme.txt', 'hello')).status, 200);
    assert.equal((await mkdir('private')).status, 200);
    assert.equal((await put('private/secret.txt', 'top secret')).status, 200);
  });
  after(() => s.stop());

  describe('/api/acl', () => {
    it('shows the owner its list: owner, own entries, inherited ones marked with where they are set', async () => {
      const res = await api('GET', at('acl', 'proj'), alice);
      assert.equal(res.status, 200);
      const body = await json(res);
      assert.equal(body.Meta.data_type, "<class 'dict'>");
      assert.deepEqual(body.Response.data, {
        path: '/tz/home/alice/proj', owner: 'alice',
        entries: [{ principal: 'alice', level: 'own' }],
        inherited: [{ principal: 'alice', level: 'own', from: '/tz/home/alice' }],
      });
    });

    it('refuses the list to others (403, also for a missing path), to callers without a token (401), and says 404 to the owner', async () => {
      assert.equal((await api('GET', at('acl', 'proj'), bob)).status, 403);
      assert.equal((await api('GET', at('acl', 'no-such-thing'), bob)).status, 403);
      assert.equal((await api('GET', at('acl', 'proj'), null)).status, 401);
      assert.equal((await api('GET', at('acl', 'no-such-thing'), alice)).status, 404);
      assert.equal((await api('GET', at('acl', 'proj'), admin)).status, 200, 'an administrator holds every level');
    });

    it('grants read to a user: they read, cannot write, cannot see the list', async () => {
      assert.equal((await api('GET', s.home('alice', 'proj/readme.txt'), bob)).status, 403);
      const res = await api('PUT', at('acl', 'proj'), alice, { principal: 'bob', level: 'read' });
      assert.equal(res.status, 200);
      assert.deepEqual((await data(res)).entries, [{ principal: 'alice', level: 'own' }, { principal: 'bob', level: 'read' }]);
      assert.equal((await api('GET', s.home('alice', 'proj/sub/data.csv'), bob)).status, 200, 'access on a collection covers what is below it');
      assert.equal((await put('proj/bob.txt', 'x', bob)).status, 403);
      assert.equal((await api('GET', at('acl', 'proj'), bob)).status, 403);
      assert.equal((await api('PUT', at('acl', 'proj'), bob, { principal: 'bob', level: 'own' })).status, 403, 'read does not let anyone raise their own level');
      const sub = await data(await api('GET', at('acl', 'proj/sub'), alice));
      assert.deepEqual(sub.inherited.filter((e: { principal: string }) => e.principal === 'bob'), [{ principal: 'bob', level: 'read', from: '/tz/home/alice/proj' }]);
    });

    it('grants write to a group: its members write, other users do not', async () => {
      assert.equal((await api('PUT', at('acl', 'proj'), alice, { principal: 'team', level: 'write' })).status, 200);
      assert.equal((await put('proj/carol.txt', 'from carol', carol)).status, 200);
      assert.equal((await put('proj/dave.txt', 'from dave', dave)).status, 403);
      assert.equal((await api('GET', s.home('alice', 'proj/readme.txt'), dave)).status, 403);
    });

    it('grants read to public: every signed-in user reads, a caller without a token still does not', async () => {
      assert.equal((await api('PUT', at('acl', 'proj/readme.txt'), alice, { principal: 'public', level: 'read' })).status, 200);
      assert.equal((await api('GET', s.home('alice', 'proj/readme.txt'), dave)).status, 200);
      assert.equal((await api('GET', s.home('alice', 'proj/sub/data.csv'), dave)).status, 403, 'only the entity it is set on, and below');
      assert.equal((await fetch(`${s.url}/api/public/tz/home/alice/proj/readme.txt`)).status, 404, 'public is not anonymous');
    });

    it('refuses unknown principals (404), anonymous (400), unknown levels and malformed bodies (400)', async () => {
      const unknown = await api('PUT', at('acl', 'proj'), alice, { principal: 'nobody', level: 'read' });
      assert.equal(unknown.status, 404);
      assert.match(JSON.stringify((await json(unknown)).Response.errors), /no user or group 'nobody'/);
      const anon = await api('PUT', at('acl', 'proj'), alice, { principal: 'anonymous', level: 'read' });
      assert.equal(anon.status, 400);
      assert.match(JSON.stringify((await json(anon)).Response.errors), /publishing/);
      assert.equal((await api('PUT', at('acl', 'proj'), alice, { principal: 'bob', level: 'admin' })).status, 400);
      assert.equal((await api('PUT', at('acl', 'proj'), alice, { principal: 'bob' })).status, 400);
      assert.equal((await api('DELETE', `${at('acl', 'proj')}?principal=anonymous`, alice)).status, 400);
      assert.equal((await api('DELETE', at('acl', 'proj'), alice)).status, 400, 'principal is required');
      assert.equal((await fetch(at('acl', 'proj'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'text/plain' }, body: 'bob' })).status, 415);
    });

    it('gives own away: the new owner manages the list; revoking removes access at once', async () => {
      await put('shared.txt', 'shared');
      assert.equal((await api('PUT', at('acl', 'shared.txt'), alice, { principal: 'dave', level: 'own' })).status, 200);
      assert.equal((await api('PUT', at('acl', 'shared.txt'), dave, { principal: 'bob', level: 'read' })).status, 200);
      assert.equal((await api('GET', s.home('alice', 'shared.txt'), bob)).status, 200);
      const revoked = await api('DELETE', `${at('acl', 'shared.txt')}?principal=bob`, dave);
      assert.equal(revoked.status, 200);
      assert.deepEqual((await data(revoked)).entries.map((e: { principal: string }) => e.principal), ['alice', 'dave']);
      assert.equal((await api('GET', s.home('alice', 'shared.txt'), bob)).status, 403);
      const missing = await api('DELETE', `${at('acl', 'shared.txt')}?principal=bob`, dave);
      assert.equal(missing.status, 404, 'no entry to remove');
    });

    it('never leaves an entity without an owner (409), but lets an owner drop an entry covered from above', async () => {
      const home = `${s.url}/api/acl/tz/home/alice`;
      const last = await api('DELETE', `${home}?principal=alice`, alice);
      assert.equal(last.status, 409);
      assert.match(JSON.stringify((await json(last)).Response.errors), /last own/);
      assert.equal((await api('PUT', home, alice, { principal: 'alice', level: 'read' })).status, 409);
      const dropped = await api('DELETE', `${at('acl', 'proj/sub')}?principal=alice`, alice);
      assert.equal(dropped.status, 200, 'alice still owns it through /tz/home/alice');
      assert.equal((await api('GET', at('acl', 'proj/sub'), alice)).status, 200);
      const inherited = await api('DELETE', `${at('acl', 'proj/sub')}?principal=alice`, alice);
      assert.equal(inherited.status, 404);
      assert.match(JSON.stringify((await json(inherited)).Response.errors), /set on the collection '\/tz\/home\/alice\/proj'/);
    });

    it('never gives own to public (400): every signed-in user could otherwise take the entity over', async () => {
      await put('public-own.txt', 'mine');
      const refused = await api('PUT', at('acl', 'public-own.txt'), alice, { principal: 'public', level: 'own' });
      assert.equal(refused.status, 400);
      assert.match(JSON.stringify((await json(refused)).Response.errors), /'public'.*cannot be given own/);
      const list = await data(await api('GET', at('acl', 'public-own.txt'), alice));
      assert.deepEqual(list.entries.map((e: { principal: string }) => e.principal), ['alice'], 'nothing was granted');
      const takeover = await api('PUT', at('acl', 'public-own.txt'), dave, { principal: 'dave', level: 'own' });
      assert.equal(takeover.status, 403, 'another user still cannot change the list');
      await assert.rejects(s.deps.admin.setAccess('/tz/home/alice/public-own.txt', 'public', 'own'), { code: 'BAD_REQUEST' });
    });

    it('lets nobody lower or remove the home user\'s own entry on their home (403); the owner keeps their home', async () => {
      const home = `${s.url}/api/acl/tz/home/bob`;
      assert.equal((await api('PUT', home, bob, { principal: 'dave', level: 'own' })).status, 200);
      const removed = await api('DELETE', `${home}?principal=bob`, dave);
      assert.equal(removed.status, 403);
      assert.match(JSON.stringify((await json(removed)).Response.errors), /always keeps own/);
      assert.equal((await api('PUT', home, dave, { principal: 'bob', level: 'read' })).status, 403, 'nor lowered');
      assert.equal((await api('DELETE', `${home}?principal=bob`, bob)).status, 403, 'not even by the owner');
      const list = await data(await api('GET', home, bob));
      assert.deepEqual(list.entries.find((e: { principal: string }) => e.principal === 'bob'), { principal: 'bob', level: 'own' });
      assert.equal((await api('DELETE', `${home}?principal=dave`, bob)).status, 200, 'the owner takes the co-owner\'s own back');
      // Even an entry an administrator removes outside the API leaves the user the owner of their home.
      await s.deps.admin.setAccess('/tz/home/bob', 'bob', 'none');
      assert.equal((await api('GET', home, bob)).status, 200);
      assert.equal((await api('GET', `${s.url}/api/registered/tz/home/bob`, bob)).status, 200);
      assert.equal((await api('PUT', home, bob, { principal: 'bob', level: 'own' })).status, 200, 'and can restore the entry');
    });
  });

  describe('/api/metadata', () => {
    const avu = (attribute: string, value: string, unit?: string) => ({ attribute, value, ...(unit === undefined ? {} : { unit }) });

    it('lets a writer add AVUs and a reader list them; adding the same triple changes nothing', async () => {
      const added = await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('depth', '1200', 'm'));
      assert.equal(added.status, 200);
      assert.deepEqual(await data(added), [{ attribute: 'depth', value: '1200', unit: 'm' }]);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), carol, avu('instrument', 'CTD'))).status, 200, 'write through a group');
      const again = await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('depth', '1200', 'm'));
      assert.deepEqual(await data(again), [{ attribute: 'depth', value: '1200', unit: 'm' }, { attribute: 'instrument', value: 'CTD', unit: '' }]);
      const listed = await api('GET', at('metadata', 'proj/readme.txt'), bob);
      assert.equal(listed.status, 200);
      assert.equal((await json(listed)).Meta.elements, 2);
    });

    it('refuses writing to readers (403), everything to strangers (403) and callers without a token (401)', async () => {
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), bob, avu('x', 'y'))).status, 403);
      assert.equal((await api('DELETE', `${at('metadata', 'proj/readme.txt')}?attribute=depth`, bob)).status, 403);
      assert.equal((await api('GET', at('metadata', 'private/secret.txt'), bob)).status, 403);
      assert.equal((await api('GET', at('metadata', 'private/none'), bob)).status, 403);
      assert.equal((await api('GET', at('metadata', 'private/none'), alice)).status, 404);
      assert.equal((await api('GET', at('metadata', 'proj/readme.txt'), null)).status, 401);
    });

    it('keeps the PID rules\' attributes read-only: PID and EUDAT/… in any case (403)', async () => {
      for (const attribute of ['PID', 'pid', 'EUDAT/CHECKSUM', 'eudat/ror']) {
        const res = await api('POST', at('metadata', 'proj/readme.txt'), alice, avu(attribute, '21.T1/forged'));
        assert.equal(res.status, 403, attribute);
        assert.match(JSON.stringify((await json(res)).Response.errors), /PID rules/);
      }
      assert.equal((await api('DELETE', `${at('metadata', 'proj/readme.txt')}?attribute=PID`, alice)).status, 403);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), admin, avu('PID', 'x'))).status, 403, 'administrators too');
    });

    it('keeps names that read as PID or EUDAT/… read-only too: invisible characters, surrounding space, fullwidth forms (403)', async () => {
      for (const attribute of ['PID\u200b', ' PID', 'ＰＩＤ', 'EUDAT／x', '\u00adpid\u3000', 'EUDAT\u2060/ror']) {
        const res = await api('POST', at('metadata', 'proj/readme.txt'), alice, avu(attribute, '21.T1/forged'));
        assert.equal(res.status, 403, JSON.stringify(attribute));
        assert.match(JSON.stringify((await json(res)).Response.errors), /PID rules/);
        assert.equal((await api('DELETE', `${at('metadata', 'proj/readme.txt')}?attribute=${encodeURIComponent(attribute)}`, alice)).status, 403, JSON.stringify(attribute));
      }
      const list = await data(await api('GET', at('metadata', 'proj/readme.txt'), alice));
      assert.ok(!list.some((m: { value: string }) => m.value === '21.T1/forged'), 'nothing was stored');
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('PIDs', 'x'))).status, 200, 'other names are free');
      assert.equal((await api('DELETE', `${at('metadata', 'proj/readme.txt')}?attribute=PIDs`, alice)).status, 200);
    });

    it('refuses parts over 2,700 bytes, control characters in attributes, empty values (400)', async () => {
      const long = 'é'.repeat(1351); // 2,702 bytes in 1,351 characters
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu(long, 'v'))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a', long))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a', 'v', long))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a'.repeat(2700), 'v'))).status, 200, '2,700 bytes is allowed');
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a\nb', 'v'))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a', 'v\u0000'))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('a', ''))).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, { attribute: 'a' })).status, 400);
      assert.equal((await api('POST', at('metadata', 'proj/readme.txt'), alice, avu('note', 'two\nlines'))).status, 200, 'a value may span lines');
    });

    it('refuses an AVU beyond 1,000 on one entity (400)', async () => {
      await put('many.txt', 'x');
      const path = parsePath('/tz/home/alice/many.txt');
      for (let i = 0; i < 1000; i++) await s.deps.catalog.addMeta(path, { attribute: 'n', value: String(i), unit: '' });
      const res = await api('POST', at('metadata', 'many.txt'), alice, avu('one', 'more'));
      assert.equal(res.status, 400);
      assert.match(JSON.stringify((await json(res)).Response.errors), /1000 AVUs/);
      assert.equal((await api('POST', at('metadata', 'many.txt'), alice, avu('n', '7'))).status, 200, 'a triple it has is no addition');
    });

    it('removes by attribute, or by attribute and value; 404 when nothing matches', async () => {
      await api('POST', at('metadata', 'proj/sub/data.csv'), alice, avu('tag', 'a'));
      await api('POST', at('metadata', 'proj/sub/data.csv'), alice, avu('tag', 'b'));
      await api('POST', at('metadata', 'proj/sub/data.csv'), alice, avu('keep', 'me'));
      const one = await api('DELETE', `${at('metadata', 'proj/sub/data.csv')}?attribute=tag&value=a`, carol);
      assert.equal(one.status, 200);
      assert.deepEqual((await data(one)).map((m: { value: string }) => m.value), ['me', 'b']);
      const all = await api('DELETE', `${at('metadata', 'proj/sub/data.csv')}?attribute=tag`, alice);
      assert.deepEqual(await data(all), [{ attribute: 'keep', value: 'me', unit: '' }]);
      assert.equal((await api('DELETE', `${at('metadata', 'proj/sub/data.csv')}?attribute=tag`, alice)).status, 404);
    });
  });

  describe('/api/publish and /api/public', () => {
    const pub = (rest: string, headers: Record<string, string> = {}, method = 'GET') => fetch(`${s.url}/api/public/tz/home/alice/${rest}`, { method, headers });

    it('publishing needs own: readers, strangers and callers without a token are refused', async () => {
      assert.equal((await api('PUT', at('publish', 'proj'), bob)).status, 403);
      assert.equal((await api('PUT', at('publish', 'proj'), carol)).status, 403, 'write is not enough');
      assert.equal((await api('PUT', at('publish', 'private'), dave)).status, 403);
      assert.equal((await api('PUT', at('publish', 'proj'), null)).status, 401);
      assert.equal((await api('PUT', at('publish', 'nothing-here'), alice)).status, 404);
      assert.equal((await api('GET', at('publish', 'proj'), dave)).status, 403, 'reading the state needs read access');
      const state = await data(await api('GET', at('publish', 'proj'), bob));
      assert.deepEqual(state, { path: '/tz/home/alice/proj', published: false, via: null, published_at: null, published_by: null, public_url: null });
    });

    it('nothing unpublished is readable without a token: 404 whether or not it exists', async () => {
      const hidden = await pub('private/secret.txt');
      const missing = await pub('private/none.txt');
      assert.equal(hidden.status, 404);
      assert.equal(missing.status, 404);
      assert.match(hidden.headers.get('content-type') ?? '', /json/);
      assert.deepEqual(Object.keys((await json(hidden)).Response.errors![0]!), ['Not found']);
      assert.equal((await pub('private/secret.txt?download=true')).status, 404);
      assert.equal((await pub('private/')).status, 404);
    });

    it('publishing a collection makes a nested object readable by anyone, with Range, HEAD and validators', async () => {
      const res = await api('PUT', at('publish', 'proj'), alice);
      assert.equal(res.status, 200);
      const state = await data(res);
      assert.equal(state.published, true);
      assert.equal(state.via, '/tz/home/alice/proj');
      assert.equal(state.published_by, 'alice');
      assert.ok(Math.abs(Date.parse(state.published_at) - Date.now()) < 60_000);
      assert.equal(state.public_url, `${s.url}/api/public/tz/home/alice/proj`);
      const nested = await data(await api('GET', at('publish', 'proj/sub/data.csv'), alice));
      assert.equal(nested.published, true);
      assert.equal(nested.via, '/tz/home/alice/proj', 'published through its collection');

      const range = await pub('proj/sub/data.csv?download=true', { range: 'bytes=4-9' });
      assert.equal(range.status, 206);
      assert.equal(range.headers.get('content-range'), 'bytes 4-9/16');
      assert.equal(await range.text(), '456789');
      assert.equal(range.headers.get('access-control-allow-origin'), '*');
      const whole = await pub('proj/sub/data.csv?download=true');
      assert.equal(await whole.text(), '0123456789abcdef');
      assert.match(whole.headers.get('content-disposition') ?? '', /data\.csv/);
      const etag = whole.headers.get('etag')!;
      assert.equal((await pub('proj/sub/data.csv?download=true', { 'if-none-match': etag })).status, 304);
      const head = await pub('proj/sub/data.csv?download=true', {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), '16');

      const meta = await pub('proj/sub/data.csv');
      assert.equal(meta.status, 200);
      const record = (await data(meta))[0]['data.csv'];
      assert.equal(record.link, `${s.url}/api/public/tz/home/alice/proj/sub/data.csv`);
      assert.equal(record.metadata.object_type, 'dataobject');
      const listing = await data(await pub('proj/'));
      assert.deepEqual(listing.map((r: Record<string, unknown>) => Object.keys(r)[0]), ['carol.txt', 'readme.txt', 'sub']);
      assert.equal((await pub('proj/sub?download=true')).status, 400, 'a collection is not downloaded');
      assert.equal((await pub('private/secret.txt')).status, 404, 'a sibling stays hidden');
    });

    it('ignores a token on /api/public: the answer is what anyone gets', async () => {
      assert.equal((await pub('proj/readme.txt', { authorization: 'Bearer not-a-valid-token' })).status, 200);
      assert.equal((await pub('private/secret.txt', { authorization: alice })).status, 404, 'even the owner\'s token does not open unpublished data here');
    });

    it('unpublishing stops anonymous reads at once; an entry covered only from above cannot be unpublished (409)', async () => {
      assert.equal((await api('PUT', at('publish', 'proj/readme.txt'), alice)).status, 200, 'published itself too');
      const conflict = await api('DELETE', at('publish', 'proj/sub/data.csv'), alice);
      assert.equal(conflict.status, 409);
      assert.match(JSON.stringify((await json(conflict)).Response.errors), /through the collection '\/tz\/home\/alice\/proj'/);
      assert.equal((await api('DELETE', at('publish', 'proj'), bob)).status, 403);
      const off = await api('DELETE', at('publish', 'proj'), alice);
      assert.equal(off.status, 200);
      assert.equal((await data(off)).published, false);
      assert.equal((await pub('proj/sub/data.csv?download=true')).status, 404);
      assert.equal((await pub('proj/sub/data.csv')).status, 404);
      assert.equal((await pub('proj/readme.txt')).status, 200, 'an object published itself stays published');
      const again = await api('DELETE', at('publish', 'proj'), alice);
      assert.equal(again.status, 200, 'idempotent');
      assert.equal((await api('DELETE', at('publish', 'proj/readme.txt'), alice)).status, 200);
      assert.equal((await pub('proj/readme.txt')).status, 404);
    });

    it('records and audits who published and unpublished what, and when', async () => {
      const proj = (await s.deps.catalog.getEntity(parsePath('/tz/home/alice/proj')))!;
      const events = await s.deps.catalog.publicationEvents(proj.id, 10);
      assert.deepEqual(events.map((e) => [e.action, e.actor, e.path]), [
        ['unpublished', 'alice', '/tz/home/alice/proj'], ['published', 'alice', '/tz/home/alice/proj'],
      ]);
      const audited = lines.filter((l) => l.audit === 'publish' || l.audit === 'unpublish');
      assert.deepEqual(audited.filter((l) => l.path === '/tz/home/alice/proj').map((l) => [l.audit, l.user, l.entity, l.kind]), [
        ['publish', 'alice', proj.id, 'collection'], ['unpublish', 'alice', proj.id, 'collection'],
      ]);
      assert.ok(audited.every((l) => typeof l.at === 'string' && typeof l.msg === 'string'));
    });

    it('an administrator publishes anything; the record names them', async () => {
      const res = await api('PUT', at('publish', 'private'), admin);
      assert.equal(res.status, 200);
      assert.equal((await data(res)).published_by, 'root');
      assert.equal(await (await pub('private/secret.txt?download=true')).text(), 'top secret');
      assert.equal((await api('DELETE', at('publish', 'private'), admin)).status, 200);
    });
  });
});
