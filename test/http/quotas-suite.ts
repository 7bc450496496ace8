/**
 * Quotas over every write path, for any catalog (`quotasSuite`): a PUT (raw, with and without
 * a Content-Length, and a form), a resumable upload (refused at creation from its length, and
 * at an append for a deferred one), a drop-box deposit, a copy, a move, a WebDAV PUT and an S3 PutObject that would pass a quota are refused with 507 and
 * `Quota exceeded` (S3: `QuotaExceeded`), a message naming the limit and the usage, and leave
 * nothing behind; the trash counts until it is emptied; `GET /api/quota` and WebDAV's quota
 * properties show the usage. (A restore from the trash is charged in the catalog, see the
 * contract; over HTTP it goes back beside where it was trashed from, where it was counted.)
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { makeKey } from '../s3/s3-clients-suite.ts';

/** Runs the suite on a node started with `flags` (its catalog and resource); `cleanup` runs after. */
export function quotasSuite(name: string, flags: Record<string, unknown> = {}, cleanup: () => Promise<void> = async () => {}): void {
  describe(`quotas over every write path (${name})`, () => {
    let s: TestServer;
    let alice: string;
    let s3: S3Client;
    let n = 0;
    const home = '/tz/home/alice';
    const api = async (method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: alice };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${s.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: await json(res) };
    };
    const put = (rest: string, body: NonNullable<RequestInit['body']>, headers: Record<string, string> = {}) =>
      fetch(s.home('alice', rest), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream', ...headers }, body, duplex: 'half' } as RequestInit);
    const exists = async (rest: string) => (await fetch(s.home('alice', rest), { method: 'HEAD', headers: { authorization: alice } })).status === 200;
    /** A fresh collection with a quota of `maxBytes` (and `maxObjects`), holding nothing. */
    const box = async (maxBytes: number | null, maxObjects: number | null = null) => {
      const rest = `q${++n}`;
      assert.equal((await api('POST', '/api/registered', { path: `${home}/${rest}` })).status, 200);
      await s.deps.quotas.set(`${home}/${rest}`, { maxBytes, maxObjects });
      return rest;
    };
    const usage = async (rest: string) => {
      const q = await s.deps.quotas.get(`${home}/${rest}`);
      return { bytes: q!.bytes, objects: q!.objects };
    };
    /** A 507 with lading's envelope: `Quota exceeded`, and a message naming the quota, its limit and its usage. */
    const refused = async (res: Response, quota: string, limit: RegExp) => {
      const body = await json(res);
      assert.equal(res.status, 507, JSON.stringify(body));
      const [error] = body.Response.errors as Record<string, string>[];
      assert.deepEqual(Object.keys(error!), ['Quota exceeded']);
      assert.match(error!['Quota exceeded']!, new RegExp(`quota of the collection ${quota}: `));
      assert.match(error!['Quota exceeded']!, limit);
    };

    before(async () => {
      s = await startTestServer({ ...flags, 'resource.fsync': false, 's3.listen': '127.0.0.1:0' });
      alice = await s.bearer('alice');
      const key = await makeKey(s.url, alice);
      s3 = new S3Client({ endpoint: s.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: key.id, secretAccessKey: key.secret } });
    });
    after(async () => {
      s3?.destroy();
      await s?.stop();
      await cleanup();
    });

    it('refuses a raw PUT past the quota before its body (Content-Length) and at its commit (chunked), keeping nothing', async () => {
      const q = await box(100);
      assert.equal((await put(`${q}/a`, 'x'.repeat(60))).status, 200);
      await refused(await put(`${q}/b`, 'y'.repeat(41)), `${home}/${q}`, /100 B allowed, 60 B used, this write needs 41 B/);
      const chunked = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('z'.repeat(41))); c.close(); } });
      await refused(await put(`${q}/c`, chunked), `${home}/${q}`, /100 B allowed, 60 B used, this write needs 41 B/);
      assert.equal(await exists(`${q}/b`), false);
      assert.equal(await exists(`${q}/c`), false);
      assert.deepEqual(await usage(q), { bytes: 60, objects: 1 });
      assert.equal((await put(`${q}/a`, 'x'.repeat(100), {}).then((r) => r.status)), 409, 'an existing object still needs force');
      const over = await fetch(`${s.home('alice', `${q}/a`)}?force=true`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'x'.repeat(100) });
      assert.equal(over.status, 200, 'an overwrite is charged the difference');
      assert.deepEqual(await usage(q), { bytes: 100, objects: 1 });
    });

    it('refuses a form upload and a data-object count past the quota', async () => {
      const q = await box(null, 1);
      const form = (name: string) => {
        const f = new FormData();
        f.append('file', new Blob(['hello']), name);
        return fetch(`${s.home('alice', q)}/`, { method: 'PUT', headers: { authorization: alice }, body: f });
      };
      assert.equal((await form('one.txt')).status, 200);
      await refused(await form('two.txt'), `${home}/${q}`, /1 data objects allowed, 1 held, this write adds 1/);
      assert.equal(await exists(`${q}/two.txt`), false);
    });

    it('refuses a resumable upload at creation from its length, and a deferred one at the append that passes it', async () => {
      const q = await box(100);
      const tus = (method: string, url: string, headers: Record<string, string>, body?: string) =>
        fetch(url, { method, headers: { authorization: alice, 'tus-resumable': '1.0.0', ...headers }, ...(body === undefined ? {} : { body }) });
      const meta = (rest: string) => `path ${Buffer.from(`${home}/${rest}`).toString('base64')}`;
      await refused(await tus('POST', `${s.url}/api/uploads`, { 'upload-length': '101', 'upload-metadata': meta(`${q}/big`) }), `${home}/${q}`, /100 B allowed, 0 B used, this write needs 101 B/);
      const made = await tus('POST', `${s.url}/api/uploads`, { 'upload-defer-length': '1', 'upload-metadata': meta(`${q}/deferred`) });
      assert.equal(made.status, 201, await made.text());
      const at = new URL(made.headers.get('location')!, s.url).href;
      const first = await tus('PATCH', at, { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, 'a'.repeat(60));
      assert.equal(first.status, 204, await first.text());
      await refused(await tus('PATCH', at, { 'upload-offset': '60', 'content-type': 'application/offset+octet-stream' }, 'b'.repeat(41)), `${home}/${q}`, /needs 101 B/);
      const done = await tus('PATCH', at, { 'upload-offset': '60', 'upload-length': '100', 'content-type': 'application/offset+octet-stream' }, 'b'.repeat(40));
      assert.equal(done.status, 204, await done.text());
      assert.deepEqual(await usage(q), { bytes: 100, objects: 1 });
      assert.equal(await exists(`${q}/big`), false);
    });

    it('refuses a drop-box deposit past its owner\'s quota', async () => {
      const q = await box(10);
      const made = await api('POST', '/api/shares', { path: `${home}/${q}`, kind: 'upload' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const url = (made.body.Response.data as { url: string }).url;
      assert.equal((await fetch(`${url}/a.txt`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: '12345' })).status, 201);
      const res = await fetch(`${url}/b.txt`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: '123456' });
      assert.equal(res.status, 507);
      assert.deepEqual(Object.keys((await json(res)).Response.errors![0]!), ['Quota exceeded']);
      assert.equal(await exists(`${q}/b.txt`), false);
      assert.deepEqual(await usage(q), { bytes: 5, objects: 1 });
    });

    it('refuses a copy and a move into a quota they would pass, and lets a move out free it', async () => {
      const q = await box(100);
      const src = await box(null);
      assert.equal((await put(`${src}/big`, 'b'.repeat(80))).status, 200);
      assert.equal((await api('POST', '/api/registered', { path: `${home}/${src}/dir` })).status, 200);
      assert.equal((await put(`${src}/dir/x`, 'x'.repeat(40))).status, 200);
      assert.equal((await put(`${src}/dir/y`, 'y'.repeat(35))).status, 200);
      assert.equal((await put(`${q}/have`, 'h'.repeat(30))).status, 200);
      await refused(await fetch(s.home('alice', `${src}/big`), {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ copy_to: `${home}/${q}` }),
      }), `${home}/${q}`, /100 B allowed, 30 B used, this write needs 80 B/);
      await refused(await fetch(s.home('alice', `${src}/dir`), {
        method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ copy_to: `${home}/${q}` }),
      }), `${home}/${q}`, /this write needs 75 B/);
      assert.equal(await exists(`${q}/dir`), false, 'a collection\'s copy is refused before anything is created');
      await refused(await fetch(s.home('alice', `${src}/big`), {
        method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ destination: `${home}/${q}` }),
      }), `${home}/${q}`, /needs 80 B/);
      assert.equal(await exists(`${src}/big`), true);
      const out = await fetch(s.home('alice', `${q}/have`), {
        method: 'PATCH', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ destination: `${home}/${src}` }),
      });
      assert.equal(out.status, 200);
      assert.deepEqual(await usage(q), { bytes: 0, objects: 0 });
    });

    it('counts the trash until it is emptied; a restore needs no room, as what it brings back was counted', async () => {
      const q = await box(100);
      assert.equal((await put(`${q}/a`, 'a'.repeat(70))).status, 200);
      const trashed = await api('POST', '/api/trash', { path: `${home}/${q}/a` });
      assert.equal(trashed.status, 200);
      const id = (trashed.body.Response.data as { id: string }).id;
      assert.deepEqual(await usage(q), { bytes: 70, objects: 1 }, 'trashing frees nothing');
      await refused(await put(`${q}/b`, 'b'.repeat(31)), `${home}/${q}`, /100 B allowed, 70 B used/);
      assert.equal((await put(`${q}/b`, 'b'.repeat(30))).status, 200, 'what fits beside the trash is taken');
      const restored = await api('POST', `/api/trash/${id}/restore`, {});
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.deepEqual(await usage(q), { bytes: 100, objects: 2 });
      assert.equal((await api('POST', '/api/trash', { path: `${home}/${q}/a` })).status, 200);
      assert.equal((await api('DELETE', '/api/trash')).status, 200);
      assert.deepEqual(await usage(q), { bytes: 30, objects: 1 }, 'emptying the trash frees it');
      assert.equal((await put(`${q}/c`, 'c'.repeat(70))).status, 200);
    });

    it('refuses a WebDAV PUT past the quota, and shows the quota properties', async () => {
      const q = await box(100);
      const dav = `${s.url}/dav${home}/${q}`;
      assert.equal((await fetch(`${dav}/a`, { method: 'PUT', headers: { authorization: alice }, body: 'a'.repeat(60) })).status, 201);
      const res = await fetch(`${dav}/b`, { method: 'PUT', headers: { authorization: alice }, body: 'b'.repeat(41) });
      assert.equal(res.status, 507);
      assert.match(await res.text(), /Quota exceeded/);
      const found = await fetch(`${dav}/`, {
        method: 'PROPFIND', headers: { authorization: alice, depth: '0', 'content-type': 'application/xml' },
        body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>',
      });
      assert.equal(found.status, 207);
      const xml = await found.text();
      assert.match(xml, /<D:quota-available-bytes>40<\/D:quota-available-bytes>/);
      assert.match(xml, /<D:quota-used-bytes>60<\/D:quota-used-bytes>/);
    });

    it('refuses an S3 PutObject past the quota with QuotaExceeded (507)', async () => {
      const q = await box(100);
      await s3.send(new PutObjectCommand({ Bucket: 'alice', Key: `${q}/a`, Body: 'a'.repeat(60) }));
      await assert.rejects(s3.send(new PutObjectCommand({ Bucket: 'alice', Key: `${q}/b`, Body: 'b'.repeat(41) })), (err: { name: string; message: string; $metadata: { httpStatusCode: number } }) => {
        assert.equal(err.name, 'QuotaExceeded');
        assert.equal(err.$metadata.httpStatusCode, 507);
        assert.match(err.message, /100 B allowed, 60 B used/);
        return true;
      });
      assert.equal(await exists(`${q}/b`), false);
    });

    it('shows a user\'s quota and usage at GET /api/quota', async () => {
      await s.deps.quotas.set('alice', { maxBytes: 10 * 1024 ** 3 });
      const view = await api('GET', '/api/quota');
      assert.equal(view.status, 200);
      const data = view.body.Response.data as { path: string; quotas: { path: string; user: string | null; max_bytes: number; used_bytes: number; available_bytes: number }[] };
      assert.equal(data.path, home);
      assert.equal(data.quotas[0]!.path, home);
      assert.equal(data.quotas[0]!.user, 'alice');
      assert.equal(data.quotas[0]!.max_bytes, 10 * 1024 ** 3);
      assert.equal(data.quotas[0]!.available_bytes, data.quotas[0]!.max_bytes - data.quotas[0]!.used_bytes);
      assert.ok(data.quotas.length > 1, 'the collections below with quotas are listed too');
      const bob = await s.bearer('bob');
      const theirs = await fetch(`${s.url}/api/quota?path=${encodeURIComponent(home)}`, { headers: { authorization: bob } });
      assert.equal(theirs.status, 403, 'another user\'s home is not bob\'s to read');
      await s.deps.quotas.clear('alice');
    });
  });
}
