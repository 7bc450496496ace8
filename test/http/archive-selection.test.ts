/**
 * Several entities in one download (`POST /api/archive`) as scripts and browsers send it: a
 * JSON body or a form, read back by Python's `zipfile` (and `7z t` where installed) with every
 * member's SHA-256 equal to the catalog's; every path's read access checked before a byte is
 * sent (403 and 404 name the path); the refusals for bad selections and the limits; and the
 * browser session's form, whose CSRF token travels in a field since a form sends no header. On
 * the SQLite catalog and, with LADING_TEST_PG_URL, on PostgreSQL.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { onPostgres } from '../helpers/postgres-schema.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { Jar, loginToCallback } from '../oidc/flow.ts';
import { expected, pythonRead, sevenZipTest } from './archive-readers.ts';

/** POSTs `body` to /api/archive and saves a 200's bytes in `file`; resolves with the status, headers and (otherwise) the envelope text. */
function postArchive(url: string, file: string, body: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/archive`, { method: 'POST', headers }, (res) => {
      const answer = { status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), text: '' };
      if (answer.status !== 200) {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { answer.text += chunk; });
        res.on('end', () => resolve(answer));
        return;
      }
      pipeline(res, createWriteStream(file)).then(() => resolve(answer), reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function selectionSuite(catalog: string, flags: Record<string, unknown>, cleanup: () => Promise<void>): void {
  describe(`several entities in one download (${catalog})`, () => {
    let s: TestServer;
    let alice: string;
    let dir: string;
    const home = '/tz/home/alice';
    const put = (rest: string, body: string | Buffer, auth = alice) =>
      fetch(s.home('alice', rest), { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body });
    const mkdir = (rest: string) => fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `${home}/${rest}` }),
    });
    const archive = (body: unknown, file = join(dir, 'out.zip'), auth = alice) =>
      postArchive(s.url, file, JSON.stringify(body), { authorization: auth, 'content-type': 'application/json' });
    const refusal = (text: string) => Object.entries((JSON.parse(text) as { Response: { errors: Record<string, string>[] } }).Response.errors[0]!)[0]!;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-selection-'));
      s = await startTestServer({ ...flags, 'archives.max_entries': 9 });
      alice = await s.bearer('alice');
      for (const c of ['proj', 'proj/raw', 'proj/raw/empty', 'other', 'other/sub']) assert.equal((await mkdir(c)).status, 200);
      assert.equal((await put('proj/a.txt', 'alpha\n')).status, 200);
      assert.equal((await put('proj/raw/big.bin', Buffer.alloc(200_000, 3))).status, 200);
      assert.equal((await put(`${encodeURIComponent('Grüße.txt')}`, 'unicode name')).status, 200);
      assert.equal((await put('notes.txt', 'notes')).status, 200);
      assert.equal((await put('other/a.txt', 'another alpha')).status, 200);
    });
    after(async () => {
      await s?.stop();
      await cleanup();
      await rm(dir, { recursive: true, force: true });
    });

    it('a JSON body: data objects and collections from several places, each under its name in the named top folder', async () => {
      const file = join(dir, 'pick.zip');
      const res = await archive({ paths: [`${home}/proj`, `${home}/Grüße.txt`, `${home}/other/sub`, `${home}/notes.txt`], name: 'for-bob' }, file);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('content-type'), 'application/zip');
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="for-bob.zip"; filename*=UTF-8\'\'for-bob.zip');
      const read = await pythonRead(file, dir);
      const want = await expected(s, `${home}/proj`, 'for-bob/proj/');
      const stat = async (path: string) => (await s.deps.catalog.getEntity(path as never))!;
      const sha = (checksum: string) => Buffer.from(checksum.slice('sha2:'.length), 'base64').toString('hex');
      for (const [name, value] of [['for-bob/', null], ['for-bob/proj/', null], ['for-bob/sub/', null]] as const) want.set(name, value);
      for (const f of ['Grüße.txt', 'notes.txt']) {
        const e = await stat(`${home}/${f}`);
        assert.equal(e.kind, 'dataobject');
        want.set(`for-bob/${f}`, sha(e.kind === 'dataobject' ? e.checksum : ''));
      }
      assert.deepEqual(read, want);
      assert.ok(read.has('for-bob/proj/raw/empty/'), 'an empty collection is a directory entry');
      sevenZipTest(file);
    });

    it('without a name the archive is selection.zip', async () => {
      const file = join(dir, 'default.zip');
      const res = await archive({ paths: [`${home}/notes.txt`] }, file);
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-disposition')!, /filename="selection\.zip"/);
      assert.deepEqual([...(await pythonRead(file, dir)).keys()], ['selection/', 'selection/notes.txt']);
    });

    it('read access to every path is checked before a byte is sent: 403 and 404 name the path', async () => {
      const mallory = await s.bearer('mallory');
      assert.equal((await fetch(s.home('mallory', 'mine.txt'), { method: 'PUT', headers: { authorization: mallory, 'content-type': 'application/octet-stream' }, body: 'm' })).status, 200);
      const forbidden = await archive({ paths: [`${home}/notes.txt`, '/tz/home/mallory/mine.txt'] });
      assert.equal(forbidden.status, 403);
      assert.match(refusal(forbidden.text)[1], /\/tz\/home\/mallory\/mine\.txt/);
      const stranger = await archive({ paths: [`${home}/notes.txt`] }, join(dir, 'x.zip'), mallory);
      assert.equal(stranger.status, 403, 'a stranger may not read alice\'s data object');
      const missing = await archive({ paths: [`${home}/notes.txt`, `${home}/nothing.txt`] });
      assert.equal(missing.status, 404);
      assert.match(refusal(missing.text)[1], /nothing\.txt/);
      // Once alice grants read, mallory gets the archive.
      const granted = await fetch(`${s.url}/api/acl${home}/notes.txt`, {
        method: 'PUT', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'mallory', level: 'read' }),
      });
      assert.equal(granted.status, 200, await granted.clone().text());
      const file = join(dir, 'granted.zip');
      assert.equal((await archive({ paths: [`${home}/notes.txt`] }, file, mallory)).status, 200);
      assert.ok((await pythonRead(file, dir)).has('selection/notes.txt'));
    });

    it('refuses bad selections with the envelope: none, a bad path, one name twice, one inside another, a bad name, unknown fields, no credential', async () => {
      const cases: [unknown, number, RegExp][] = [
        [{ paths: [] }, 400, /paths/],
        [{ paths: ['relative/path'] }, 400, /relative|absolute|path/i],
        [{ paths: [`${home}/proj/a.txt`, `${home}/other/a.txt`] }, 400, /same name/],
        [{ paths: [`${home}/notes.txt`, `${home}/notes.txt`] }, 400, /named twice/],
        [{ paths: [`${home}/proj`, `${home}/proj/raw`] }, 400, /inside/],
        [{ paths: ['/'] }, 400, /root/],
        [{ paths: [`${home}/notes.txt`], name: 'a/b' }, 400, /./],
        [{ paths: [`${home}/notes.txt`], extra: 1 }, 400, /./],
      ];
      for (const [body, status, message] of cases) {
        const res = await archive(body);
        assert.equal(res.status, status, JSON.stringify(body));
        const [, text] = refusal(res.text);
        assert.match(text, message, JSON.stringify(body));
      }
      const anonymous = await postArchive(s.url, join(dir, 'a.zip'), JSON.stringify({ paths: [`${home}/notes.txt`] }), { 'content-type': 'application/json' });
      assert.equal(anonymous.status, 401);
    });

    it('limits: more than 1000 paths is 400; more members than archives.max_entries is 413, before anything is sent', async () => {
      const many = Array.from({ length: 1001 }, (_, i) => `${home}/f${i}`);
      const tooMany = await archive({ paths: many });
      assert.equal(tooMany.status, 400);
      assert.match(refusal(tooMany.text)[1], /at most 1000 paths/);
      // proj and what is in it are 5 members, the two data objects 2, other and what is in it 3: 10 > 9.
      const big = await archive({ paths: [`${home}/proj`, `${home}/notes.txt`, `${home}/Grüße.txt`, `${home}/other`] });
      assert.equal(big.status, 413);
      assert.match(refusal(big.text)[1], /archives\.max_entries/);
    });

    it('a browser session\'s form: paths one a line, the CSRF token in a field; refused without it or from another origin', async () => {
      await s.addUser('bea', 'pw-bea');
      const { jar, callback } = await loginToCallback(s.url, 'bea', 'pw-bea', new Jar(), `${s.url}/auth/signin?next=/`);
      await jar.fetch(callback);
      const session = (await json(await jar.fetch(`${s.url}/auth/session`))).Response.data as { csrf_token: string };
      const bput = (name: string, body: string) => jar.fetch(s.home('bea', name), { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'x-csrf-token': session.csrf_token }, body });
      assert.equal((await bput('one.txt', 'one')).status, 200);
      assert.equal((await bput('two.txt', 'two')).status, 200);
      const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => jar.fetch(`${s.url}/api/archive`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString(),
      });
      const paths = `/tz/home/bea/one.txt\r\n/tz/home/bea/two.txt\r\n`;
      const ok = await form({ paths, name: 'both', csrf_token: session.csrf_token }, { origin: s.url, 'sec-fetch-site': 'same-origin' });
      assert.equal(ok.status, 200);
      const file = join(dir, 'form.zip');
      await pipeline(ok.body!, createWriteStream(file));
      assert.deepEqual([...(await pythonRead(file, dir)).keys()].sort(), ['both/', 'both/one.txt', 'both/two.txt']);
      assert.equal((await form({ paths, name: 'both' })).status, 403, 'no token');
      assert.equal((await form({ paths, csrf_token: 'wrong' })).status, 403, 'a wrong token');
      assert.equal((await form({ paths, csrf_token: session.csrf_token }, { origin: 'http://evil.example' })).status, 403, 'another origin');
      const json403 = await jar.fetch(`${s.url}/api/archive`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paths: ['/tz/home/bea/one.txt'], csrf_token: session.csrf_token }) });
      assert.equal(json403.status, 403, 'a JSON body must send the header: its field does not count');
    });
  });
}

selectionSuite('SQLite', {}, async () => {});

onPostgres('several entities in one download', 'selection', (flags, cleanup) => selectionSuite('PostgreSQL', flags, cleanup));
