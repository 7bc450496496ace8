/**
 * The `/api/registered`, `/auth` and `/api/status` contract as a client sees it over HTTP:
 * exact envelope shapes (spec §2), the statuses DESIGN.md fixes where the spec is silent,
 * permissions, ranges and conditional requests, digests and limits.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestServer, json, rawRequest, type TestServer } from '../helpers/server.ts';

const sha2 = (data: string | Buffer) => 'sha2:' + createHash('sha256').update(data).digest('base64');

describe('data-staging API', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  const put = (url: string, body: string | Buffer, headers: Record<string, string> = {}, auth = alice) =>
    fetch(url, { method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream', ...headers }, body });
  const get = (url: string, headers: Record<string, string> = {}, auth = alice) => fetch(url, { headers: { authorization: auth, ...headers } });
  const form = (file: Buffer | string, filename: string, field = 'file') => {
    const fd = new FormData();
    fd.append(field, new Blob([file]), filename);
    return fd;
  };

  before(async () => {
    s = await startTestServer({ 'limits.upload_bytes': 4096 });
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
  });
  after(() => s.stop());

  it('GET /api/status answers without a token, with CORS and the string envelope', async () => {
    const res = await fetch(`${s.url}/api/status`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await res.json(), {
      Meta: { data_type: "<class 'str'>", elements: 1, errors: 0, status: 200 },
      Response: { data: 'Server is alive', errors: null },
    });
  });

  it('refuses /api/registered without a token (401, WWW-Authenticate) and with a wrong one', async () => {
    const res = await fetch(s.home('alice', ''));
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    const body = await json(res);
    assert.deepEqual(body.Meta, { data_type: "<class 'NoneType'>", elements: 0, errors: 1, status: 401 });
    assert.equal(body.Response.data, null);
    assert.equal(Object.keys(body.Response.errors![0]!).length, 1);
    const wrong = await get(s.home('alice', ''), {}, 'Bearer not-a-token');
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  it('logs in with JSON or a form, on /auth/login and /auth/b2safeproxy, answering spec 2.6', async () => {
    await s.addUser('carol', 'c-pass');
    for (const route of ['/auth/login', '/auth/b2safeproxy']) {
      const res = await fetch(`${s.url}${route}`, { method: 'POST', body: new URLSearchParams({ username: 'carol', password: 'c-pass' }) });
      assert.equal(res.status, 200);
      const body = await json(res);
      assert.deepEqual(body.Meta, { data_type: "<class 'dict'>", elements: 3, errors: 0, status: 200 });
      assert.deepEqual(Object.keys(body.Response.data).sort(), ['storage_home', 'storage_user', 'token']);
      assert.equal(body.Response.data.storage_home, `/${s.zone}/home/carol`);
      assert.equal(body.Response.data.storage_user, 'carol');
      const list = await get(`${s.home('carol')}/`, {}, `Bearer ${body.Response.data.token}`);
      assert.equal(list.status, 200);
    }
    const bad = await fetch(`${s.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'carol', password: 'nope' }) });
    assert.equal(bad.status, 401);
    const unknown = await fetch(`${s.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'nobody', password: 'nope' }) });
    assert.equal(unknown.status, 401);
    assert.deepEqual((await json(bad)).Response.errors, (await json(unknown)).Response.errors, 'one message for unknown users and wrong passwords');
    const missing = await fetch(`${s.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"carol"}' });
    assert.equal(missing.status, 400);
  });

  it('streams an upload (spec 2.3) and reads back metadata (spec 2.2) and content', async () => {
    const res = await put(s.home('alice', 'hello.txt'), 'hello world');
    assert.equal(res.status, 200);
    const body = await json(res);
    assert.deepEqual(body.Meta, { data_type: "<class 'dict'>", elements: 6, errors: 0, status: 200 });
    assert.deepEqual(body.Response.data, {
      PID: null,
      checksum: sha2('hello world'),
      filename: 'hello.txt',
      link: s.home('alice', 'hello.txt'),
      location: `${s.deps.config.backend_url}/${s.zone}/home/alice/hello.txt`,
      path: `/${s.zone}/home/alice`,
    });
    const meta = await json(await get(s.home('alice', 'hello.txt')));
    assert.equal(meta.Meta.data_type, "<class 'list'>");
    assert.equal(meta.Meta.elements, 1);
    const modified = meta.Response.data[0]['hello.txt'].metadata.modified;
    assert.ok(!Number.isNaN(Date.parse(modified)), `modified is a date: ${modified}`);
    assert.deepEqual(meta.Response.data, [{
      'hello.txt': {
        dataobject: 'hello.txt',
        link: s.home('alice', 'hello.txt'),
        location: `${s.deps.config.backend_url}/${s.zone}/home/alice/hello.txt`,
        metadata: { PID: null, checksum: sha2('hello world'), name: 'hello.txt', object_type: 'dataobject', size: 11, modified, owner: 'alice' },
        path: `/${s.zone}/home/alice`,
      },
    }]);
    const dl = await get(`${s.home('alice', 'hello.txt')}?download=true`);
    assert.equal(dl.status, 200);
    assert.equal(await dl.text(), 'hello world');
    assert.equal(dl.headers.get('content-type'), 'application/octet-stream');
    assert.equal(dl.headers.get('content-length'), '11');
    assert.equal(dl.headers.get('repr-digest'), `sha-256=:${createHash('sha256').update('hello world').digest('base64')}:`);
    assert.match(dl.headers.get('content-disposition') ?? '', /^attachment; filename="hello.txt"/);
    assert.ok(dl.headers.get('etag'));
    assert.ok(dl.headers.get('last-modified'));
  });

  it('uploads a multipart form (field file), into a collection under the form\'s file name', async () => {
    const res = await fetch(s.home('alice', 'form.bin'), { method: 'PUT', headers: { authorization: alice }, body: form('form data', 'local-name.bin') });
    assert.equal(res.status, 200);
    assert.equal((await json(res)).Response.data.filename, 'form.bin');
    await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/alice/inbox` }) });
    for (const url of [s.home('alice', 'inbox'), s.home('alice', 'inbox/')]) {
      const name = url.endsWith('/') ? 'b.csv' : 'a.csv';
      const r = await fetch(url, { method: 'PUT', headers: { authorization: alice }, body: form(`csv ${name}`, name) });
      assert.equal(r.status, 200);
      const data = (await json(r)).Response.data;
      assert.equal(data.filename, name);
      assert.equal(data.path, `/${s.zone}/home/alice/inbox`);
    }
    const wrongField = await fetch(s.home('alice', 'x.bin'), { method: 'PUT', headers: { authorization: alice }, body: form('x', 'x.bin', 'upload') });
    assert.equal(wrongField.status, 400);
    const fd = new FormData();
    fd.append('note', 'no file here');
    const noFile = await fetch(s.home('alice', 'y.bin'), { method: 'PUT', headers: { authorization: alice }, body: fd });
    assert.equal(noFile.status, 400);
    assert.equal((await get(s.home('alice', 'x.bin'))).status, 404);
    assert.equal((await get(s.home('alice', 'y.bin'))).status, 404);
  });

  it('refuses to overwrite without force (409) and replaces with force=true', async () => {
    await put(s.home('alice', 'v.txt'), 'one');
    const again = await put(s.home('alice', 'v.txt'), 'two');
    assert.equal(again.status, 409);
    assert.equal(await (await get(`${s.home('alice', 'v.txt')}?download=true`)).text(), 'one');
    const forced = await put(`${s.home('alice', 'v.txt')}?force=true`, 'two');
    assert.equal(forced.status, 200);
    assert.equal((await json(forced)).Response.data.checksum, sha2('two'));
    assert.equal(await (await get(`${s.home('alice', 'v.txt')}?download=true`)).text(), 'two');
    const forcedPy = await put(`${s.home('alice', 'v.txt')}?force=True`, 'three');
    assert.equal(forcedPy.status, 200, 'force=True as Python clients send it');
    const badFlag = await put(`${s.home('alice', 'v.txt')}?force=maybe`, 'four');
    assert.equal(badFlag.status, 400);
  });

  it('answers 404 for a missing parent and for a missing entity', async () => {
    assert.equal((await put(s.home('alice', 'no/such/dir/f'), 'x')).status, 404);
    assert.equal((await get(s.home('alice', 'nothing-here'))).status, 404);
    assert.equal((await get(`${s.home('alice', 'nothing-here')}?download=true`)).status, 404);
  });

  it('lists a collection (trailing slash), with sub-collections as records of object_type collection', async () => {
    const dir = `/${s.zone}/home/alice/listing`;
    await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `${dir}/sub` , force: true }) });
    await put(`${s.url}/api/registered${dir}/b.txt`, 'b');
    await put(`${s.url}/api/registered${dir}/a.txt`, 'a');
    const res = await get(`${s.url}/api/registered${dir}/`);
    const body = await json(res);
    assert.equal(body.Meta.data_type, "<class 'list'>");
    assert.equal(body.Meta.elements, 3);
    assert.deepEqual(body.Response.data.map((r: object) => Object.keys(r)[0]), ['a.txt', 'b.txt', 'sub']);
    const { modified, ...subMeta } = body.Response.data[2].sub.metadata;
    assert.deepEqual(subMeta, { PID: null, checksum: null, name: 'sub', object_type: 'collection', size: null, owner: 'alice' });
    assert.ok(!Number.isNaN(Date.parse(modified)), `modified is a date: ${modified}`);
    assert.equal(body.Response.data[0]['a.txt'].metadata.size, 1);
    assert.equal(body.Response.data[2].sub.path, dir);
    const noSlash = await json(await get(`${s.url}/api/registered${dir}`));
    assert.equal(noSlash.Meta.elements, 3, 'a collection path without the slash lists too');
    const home = await json(await get(`${s.url}/api/registered`));
    assert.ok(home.Response.data.some((r: object) => Object.keys(r)[0] === 'listing'), 'the bare prefix lists the caller\'s home');
    assert.equal((await get(`${s.url}/api/registered${dir}/a.txt/`)).status, 400, 'a data object is not a collection');
    assert.equal((await get(`${s.url}/api/registered${dir}?download=true`)).status, 400, 'collections cannot be downloaded');
  });

  it('serves ranges, HEAD and conditional requests', async () => {
    const data = Buffer.from('0123456789abcdefghij');
    await put(s.home('alice', 'range.bin'), data);
    const url = `${s.home('alice', 'range.bin')}?download=true`;
    const part = await get(url, { range: 'bytes=5-9' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 5-9/20');
    assert.equal(await part.text(), '56789');
    const suffix = await get(url, { range: 'bytes=-3' });
    assert.equal(await suffix.text(), 'hij');
    const open = await get(url, { range: 'bytes=18-' });
    assert.equal(await open.text(), 'ij');
    const bad = await get(url, { range: 'bytes=20-30' });
    assert.equal(bad.status, 416);
    assert.equal(bad.headers.get('content-range'), 'bytes */20');
    assert.equal((await json(bad)).Meta.status, 416);
    const head = await fetch(url, { method: 'HEAD', headers: { authorization: alice } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '20');
    assert.equal((await head.arrayBuffer()).byteLength, 0);
    const etag = head.headers.get('etag')!;
    assert.equal((await get(url, { 'if-none-match': etag })).status, 304);
    assert.equal((await get(url, { 'if-match': '"other"' })).status, 412);
    assert.equal((await get(url, { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status, 304);
    const stale = await get(url, { range: 'bytes=0-1', 'if-range': '"old-etag"' });
    assert.equal(stale.status, 200, 'If-Range that no longer holds sends the whole object');
    assert.equal((await stale.arrayBuffer()).byteLength, 20);
  });

  it('advises force=true on a 409 only where force would have avoided it', async () => {
    const message = async (res: Response) => Object.values((await json(res)).Response.errors![0]!)[0];
    await put(s.home('alice', 'advised.txt'), 'one');
    const again = await put(s.home('alice', 'advised.txt'), 'two');
    assert.equal(again.status, 409);
    assert.equal(await message(again), `'/${s.zone}/home/alice/advised.txt' already exists. Use force=true to overwrite it.`);
    const collection = `/${s.zone}/home/alice/advised-dir`;
    const mkdir = (body: object) => fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    assert.equal((await mkdir({ path: collection })).status, 200);
    const onCollection = await put(`${s.url}/api/registered${collection}`, 'bytes');
    assert.equal(onCollection.status, 409);
    assert.doesNotMatch(String(await message(onCollection)), /force/, 'force cannot overwrite a collection');
    const existing = await mkdir({ path: collection });
    assert.equal(existing.status, 409);
    assert.match(String(await message(existing)), /already exists\. Use force=true to accept an existing collection\.$/);
    const overObject = await mkdir({ path: `/${s.zone}/home/alice/advised.txt` });
    assert.equal(overObject.status, 409);
    assert.doesNotMatch(String(await message(overObject)), /force/, 'force cannot turn a data object into a collection');
  });

  it('creates collections (spec 2.4): 409 when existing, 404 without parent, parents with force', async () => {
    const post = (body: unknown, type = 'application/json') => fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: alice, 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const path = `/${s.zone}/home/alice/newdir`;
    const res = await post({ path });
    assert.equal(res.status, 200);
    const body = await json(res);
    assert.deepEqual(body.Meta, { data_type: "<class 'dict'>", elements: 3, errors: 0, status: 200 });
    assert.deepEqual(body.Response.data, { link: `${s.url}/api/registered${path}`, location: `${s.deps.config.backend_url}${path}`, path });
    assert.equal((await post({ path })).status, 409);
    assert.equal((await post({ path: `${path}/a/b/c` })).status, 404);
    assert.equal((await post({ path: `${path}/a/b/c`, force: true })).status, 200);
    assert.equal((await post({ path: `${path}/a/b/c`, force: true })).status, 200, 'force makes it idempotent');
    assert.equal((await post({ path: 'relative/dir' })).status, 400);
    assert.equal((await post({})).status, 400);
    assert.equal((await post('{"path": ')).status, 400);
    assert.equal((await post({ path: `/${s.zone}/home/bob/intrusion` })).status, 403);
  });

  it('renames data objects and collections (spec 2.5); the contents follow', async () => {
    const patch = (url: string, body: unknown, auth = alice) => fetch(url, { method: 'PATCH', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await put(s.home('alice', 'old-name.txt'), 'content');
    const res = await patch(s.home('alice', 'old-name.txt'), { newname: 'new-name.txt' });
    assert.equal(res.status, 200);
    const body = await json(res);
    assert.equal(body.Meta.elements, 4);
    assert.deepEqual(body.Response.data, {
      filename: 'new-name.txt',
      link: s.home('alice', 'new-name.txt'),
      location: `${s.deps.config.backend_url}/${s.zone}/home/alice/new-name.txt`,
      path: `/${s.zone}/home/alice`,
    });
    assert.equal((await get(s.home('alice', 'old-name.txt'))).status, 404);
    assert.equal(await (await get(`${s.home('alice', 'new-name.txt')}?download=true`)).text(), 'content');
    await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/alice/proj/raw`, force: true }) });
    await put(s.home('alice', 'proj/raw/d.dat'), 'deep');
    const dir = await patch(s.home('alice', 'proj'), { newname: 'project' });
    assert.equal(dir.status, 200);
    assert.equal((await json(dir)).Response.data.filename, 'project');
    assert.equal(await (await get(`${s.home('alice', 'project/raw/d.dat')}?download=true`)).text(), 'deep');
    assert.equal((await patch(s.home('alice', 'project'), { newname: 'a/b' })).status, 400);
    assert.equal((await patch(s.home('alice', 'project'), { newname: '..' })).status, 400);
    assert.equal((await patch(s.home('alice', 'project'), {})).status, 400);
    assert.equal((await patch(s.home('alice', 'project'), { newname: 'new-name.txt' })).status, 409);
    assert.equal((await patch(s.home('alice', 'ghost'), { newname: 'x' })).status, 404);
    assert.equal((await patch(s.home('alice', 'project'), { newname: 'stolen' }, bob)).status, 403);
  });

  it('refuses DELETE with 405 and an Allow header', async () => {
    await put(s.home('alice', 'keep.txt'), 'k');
    const res = await fetch(s.home('alice', 'keep.txt'), { method: 'DELETE', headers: { authorization: alice } });
    assert.equal(res.status, 405);
    assert.match(res.headers.get('allow') ?? '', /GET/);
    assert.equal((await json(res)).Meta.status, 405);
    assert.equal((await get(s.home('alice', 'keep.txt'))).status, 200);
  });

  it('keeps users out of each other\'s homes unless an ACL grants access', async () => {
    await put(s.home('alice', 'private.txt'), 'secret');
    assert.equal((await get(s.home('alice', 'private.txt'), {}, bob)).status, 403);
    assert.equal((await get(`${s.home('alice', 'private.txt')}?download=true`, {}, bob)).status, 403);
    assert.equal((await get(`${s.home('alice')}/`, {}, bob)).status, 403);
    assert.equal((await get(s.home('alice', 'does-not-exist'), {}, bob)).status, 403, 'existence does not leak');
    assert.equal((await put(s.home('alice', 'planted.txt'), 'x', {}, bob)).status, 403);
    await s.deps.catalog.setAccess(await import('../../src/core/path.ts').then((m) => m.parsePath(`/${s.zone}/home/alice/private.txt`)), 'bob', 'read');
    assert.equal(await (await get(`${s.home('alice', 'private.txt')}?download=true`, {}, bob)).text(), 'secret');
    assert.equal((await put(`${s.home('alice', 'private.txt')}?force=true`, 'overwritten', {}, bob)).status, 403);
    assert.equal(await (await get(`${s.home('alice', 'private.txt')}?download=true`)).text(), 'secret');
  });

  it('verifies Content-Digest, Repr-Digest and Content-MD5, storing nothing on mismatch', async () => {
    const body = 'checked content';
    const good = createHash('sha256').update(body).digest('base64');
    const ok = await put(s.home('alice', 'digest-ok.txt'), body, { 'content-digest': `sha-256=:${good}:` });
    assert.equal(ok.status, 200);
    const ok2 = await put(s.home('alice', 'digest-ok2.txt'), body, { 'repr-digest': `sha-512=:AAAA:, sha-256=:${good}:`, 'content-md5': createHash('md5').update(body).digest('base64') });
    assert.equal(ok2.status, 200);
    const wrong = createHash('sha256').update('other').digest('base64');
    const bad = await put(s.home('alice', 'digest-bad.txt'), body, { 'content-digest': `sha-256=:${wrong}:` });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify((await json(bad)).Response.errors), /Digest mismatch/);
    assert.equal((await get(s.home('alice', 'digest-bad.txt'))).status, 404);
    const badMd5 = await put(s.home('alice', 'md5-bad.txt'), body, { 'content-md5': createHash('md5').update('other').digest('base64') });
    assert.equal(badMd5.status, 400);
    assert.equal((await get(s.home('alice', 'md5-bad.txt'))).status, 404);
    const malformed = await put(s.home('alice', 'digest-malformed.txt'), body, { 'content-digest': 'sha-256=nope' });
    assert.equal(malformed.status, 400);
    assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), [], 'no blob left behind');
  });

  it('refuses bodies over the configured limit with 413, storing nothing', async () => {
    const big = Buffer.alloc(5000, 1);
    const declared = await put(s.home('alice', 'big1.bin'), big);
    assert.equal(declared.status, 413);
    const streamed = await fetch(s.home('alice', 'big2.bin'), {
      method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, duplex: 'half',
      body: new ReadableStream({ start(c) { c.enqueue(big.subarray(0, 2500)); c.enqueue(big.subarray(2500)); c.close(); } }),
    } as RequestInit);
    assert.equal(streamed.status, 413);
    const formBig = await fetch(s.home('alice', 'big3.bin'), { method: 'PUT', headers: { authorization: alice }, body: form(Buffer.alloc(4097, 2), 'big3.bin') });
    assert.equal(formBig.status, 413);
    const exact = await put(s.home('alice', 'exact.bin'), Buffer.alloc(4096, 3));
    assert.equal(exact.status, 200, 'exactly the limit is accepted');
    for (const name of ['big1.bin', 'big2.bin', 'big3.bin']) assert.equal((await get(s.home('alice', name))).status, 404);
  });

  it('refuses unsupported content types with 415', async () => {
    const res = await put(s.home('alice', 'typed.txt'), 'x', { 'content-type': 'text/plain' });
    assert.equal(res.status, 415);
    assert.equal((await json(res)).Meta.status, 415);
  });

  it('refuses path traversal in every spelling with 400', async () => {
    const home = `/api/registered/${s.zone}/home/alice`;
    for (const evil of ['..', '%2e%2e', '%2E%2E', '.%2e', '.', 'a%2Fb', 'a%2fb', 'a%00b', '%ff%fe', 'x'.repeat(256), 'a%0Ab', '%c0%ae%c0%ae', '%']) {
      const res = await rawRequest(s.url, 'GET', `${home}/${evil}/x`, { authorization: alice });
      assert.equal(res.status, 400, `GET …/${evil.slice(0, 20)}/x: ${res.body}`);
      const up = await rawRequest(s.url, 'PUT', `${home}/${evil}`, { authorization: alice, 'content-type': 'application/octet-stream' }, 'x');
      assert.equal(up.status, 400, `PUT …/${evil.slice(0, 20)}`);
      assert.equal(JSON.parse(up.body).Meta.status, 400);
    }
    const bobHome = await rawRequest(s.url, 'GET', `${home}/../bob/`, { authorization: alice });
    assert.equal(bobHome.status, 400);
    const dotdot = await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${s.zone}/home/alice/../bob/x` }) });
    assert.equal(dotdot.status, 400);
  });

  it('answers unknown routes with the 404 envelope', async () => {
    const res = await fetch(`${s.url}/api/nothing`);
    assert.equal(res.status, 404);
    assert.equal((await json(res)).Meta.status, 404);
  });

  it('serves an OpenAPI 3 document generated from the route schemas, and a viewer', async () => {
    const res = await fetch(`${s.url}/api/specs`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown; parameters?: { name: string }[] }>> };
    assert.match(doc.openapi, /^3\./);
    const item = doc.paths['/api/registered/*'] ?? doc.paths['/api/registered/{*}'];
    assert.ok(item, `paths: ${Object.keys(doc.paths).join(', ')}`);
    assert.ok(item.get && item.put && item.patch && item.delete);
    assert.ok(item.put.parameters?.some((p) => p.name === 'force'), 'PUT documents force');
    assert.ok(doc.paths['/api/registered']?.post?.requestBody, 'POST documents its body');
    assert.ok(doc.paths['/api/status']?.get);
    const viewer = await fetch(`${s.url}/api/docs/`);
    assert.equal(viewer.status, 200);
    assert.match(await viewer.text(), /swagger/i);
  });
});
