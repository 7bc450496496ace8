/**
 * The audit trail through every door of a whole node: the API (sign-in success and failure,
 * tokens, S3 keys, every data change, access lists, metadata, share links, publishing, the
 * trash, a denied change, sign-out), WebDAV, S3 and a share link each leave records naming the
 * user, the client's address, the door, the action, the path and the outcome; only
 * administrators read them, paged, filtered and as JSON lines; and no record holds a secret.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { hashPassword } from '../../src/identity/secrets/password.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';

interface Rec {
  seq: number; at: string; user: string | null; address: string | null; door: string; action: string; path: string | null;
  detail: Record<string, unknown>; outcome: string; prev_hash: string; hash: string;
}

describe('the audit trail over HTTP', () => {
  let s: TestServer;
  let root: string;
  let alice: string;
  let aliceToken: string;
  const secrets: string[] = ['pw-alice', 'pw-root', 'pw-bob', 'share-password-42', 'wrong-password-7'];
  const home = '/tz/home/alice';

  const api = async (method: string, path: string, auth: string | null, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers };
    if (auth) h.authorization = auth;
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(`${s.url}${path}`, { method, headers: h, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await json(res) };
  };
  const all = async (): Promise<Rec[]> => {
    const res = await fetch(`${s.url}/api/admin/audit?format=jsonl`, { headers: { authorization: root } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    return (await res.text()).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Rec);
  };
  /** The one newest record of `action` (and `path`, when given), asserting there is one. */
  const last = async (action: string, path?: string): Promise<Rec> => {
    const found = (await all()).filter((r) => r.action === action && (path === undefined || r.path === path)).at(-1);
    assert.ok(found, `no ${action} record${path ? ` of ${path}` : ''}`);
    return found;
  };

  before(async () => {
    s = await startTestServer({ 's3.listen': '127.0.0.1:0' });
    await s.deps.backend.addUser('root', { kind: 'admin', passwordHash: await hashPassword('pw-root') });
    root = `Bearer ${await s.login('root')}`;
    await s.addUser('alice');
    await s.addUser('bob');
  });
  after(async () => {
    await s?.stop();
  });

  it('records what comes through the API door: sign-ins, tokens, keys, changes, access lists, metadata, links, publishing, the trash, a refusal and the sign-out', async () => {
    assert.equal((await api('POST', '/auth/login', null, { username: 'alice', password: 'wrong-password-7' })).status, 401);
    const failed = await last('login');
    assert.deepEqual([failed.user, failed.door, failed.outcome, failed.address], ['alice', 'api', 'denied', '127.0.0.1']);
    assert.equal((await api('POST', '/auth/login', null, { username: 'nobody-here', password: 'wrong-password-7' })).status, 401);
    assert.equal((await last('login')).user, null, 'an unknown name is not kept: it may be a password typed in the wrong field');
    aliceToken = await s.login('alice');
    secrets.push(aliceToken);
    alice = `Bearer ${aliceToken}`;
    assert.deepEqual([(await last('login')).user, (await last('login')).outcome], ['alice', 'ok']);

    const put = (rest: string, body: string) => fetch(`${s.url}/api/registered${home}/${rest}`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body });
    assert.equal((await put('f.txt', 'one')).status, 200);
    const upload = await last('upload', `${home}/f.txt`);
    assert.deepEqual([upload.user, upload.door, upload.outcome, upload.detail.size], ['alice', 'api', 'ok', 3]);
    assert.equal((await fetch(`${s.url}/api/registered${home}/f.txt?force=true`, { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'two!' })).status, 200);
    assert.equal((await last('overwrite', `${home}/f.txt`)).detail.size, 4);
    assert.equal((await api('POST', '/api/registered', alice, { path: `${home}/dir` })).status, 200);
    assert.equal((await last('mkdir', `${home}/dir`)).outcome, 'ok');
    assert.equal((await api('PATCH', `/api/registered${home}/f.txt`, alice, { newname: 'g.txt' })).status, 200);
    assert.equal((await last('rename', `${home}/f.txt`)).detail.to, `${home}/g.txt`);
    assert.equal((await api('PATCH', `/api/registered${home}/g.txt`, alice, { destination: `${home}/dir` })).status, 200);
    assert.equal((await last('move', `${home}/g.txt`)).detail.to, `${home}/dir/g.txt`);
    assert.equal((await api('POST', `/api/registered${home}/dir/g.txt`, alice, { copy_to: home })).status, 200);
    assert.equal((await last('copy', `${home}/dir/g.txt`)).detail.to, `${home}/g.txt`);

    assert.equal((await api('PUT', `/api/acl${home}/dir`, alice, { principal: 'bob', level: 'read' })).status, 200);
    assert.deepEqual((await last('acl.set', `${home}/dir`)).detail, { principal: 'bob', level: 'read' });
    assert.equal((await api('POST', `/api/metadata${home}/g.txt`, alice, { attribute: 'depth', value: '10', unit: 'm' })).status, 200);
    assert.equal((await last('meta.add', `${home}/g.txt`)).detail.attribute, 'depth');
    assert.equal((await api('DELETE', `/api/metadata${home}/g.txt?attribute=depth`, alice)).status, 200);
    assert.equal((await last('meta.remove', `${home}/g.txt`)).outcome, 'ok');

    const link = await api('POST', '/api/shares', alice, { path: `${home}/g.txt`, kind: 'read', password: 'share-password-42' });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    secrets.push(link.body.Response.data.token as string);
    const created = await last('share.create', `${home}/g.txt`);
    assert.deepEqual([created.detail.share, created.detail.passwordProtected], [link.body.Response.data.id, true]);
    assert.equal((await api('DELETE', `/api/shares/${link.body.Response.data.id as string}`, alice)).status, 200);
    assert.equal((await last('share.revoke')).path, `${home}/g.txt`);

    assert.equal((await api('PUT', `/api/publish${home}/g.txt`, alice)).status, 200);
    assert.equal((await last('publish', `${home}/g.txt`)).outcome, 'ok');
    assert.equal((await api('DELETE', `/api/publish${home}/g.txt`, alice)).status, 200);
    assert.equal((await last('unpublish', `${home}/g.txt`)).outcome, 'ok');

    const trashed = await api('POST', '/api/trash', alice, { path: `${home}/g.txt`, reason: 'superseded' });
    assert.equal(trashed.status, 200);
    const id = trashed.body.Response.data.id as string;
    assert.deepEqual((await last('trash', `${home}/g.txt`)).detail, { entity: id, reason: 'superseded' });
    assert.equal((await api('POST', `/api/trash/${id}/restore`, alice, {})).status, 200);
    assert.equal((await last('restore')).path, `${home}/g.txt`);
    assert.equal((await api('POST', '/api/trash', alice, { path: `${home}/g.txt` })).status, 200);
    assert.equal((await api('DELETE', `/api/trash/${id}`, alice)).status, 200);
    assert.equal((await last('purge', `${home}/g.txt`)).detail.entity, id);

    const key = await api('POST', '/api/s3/keys', alice, { label: 'laptop' });
    assert.equal(key.status, 201);
    secrets.push(key.body.Response.data.secret_access_key as string);
    assert.equal((await last('s3key.create')).detail.key, key.body.Response.data.access_key_id);
    assert.equal((await api('DELETE', `/api/s3/keys/${key.body.Response.data.access_key_id as string}`, alice)).status, 200);
    assert.equal((await last('s3key.revoke')).outcome, 'ok');

    const bob = `Bearer ${await s.login('bob')}`;
    assert.equal((await fetch(`${s.url}/api/registered${home}/bobs.txt`, { method: 'PUT', headers: { authorization: bob, 'content-type': 'application/octet-stream' }, body: 'x' })).status, 403);
    const denied = await last('upload', `${home}/bobs.txt`);
    assert.deepEqual([denied.user, denied.outcome, denied.detail.error], ['bob', 'denied', 'FORBIDDEN']);

    assert.equal((await api('POST', '/auth/logout', bob)).status, 200);
    assert.deepEqual([(await last('logout')).user, (await last('logout')).door], ['bob', 'api']);
  });

  it('records what comes through WebDAV, with its door', async () => {
    const basic = `Basic ${Buffer.from(`alice:${aliceToken}`).toString('base64')}`;
    const dav = `${s.url}/dav/tz/home/alice`;
    assert.equal((await fetch(`${dav}/davdir`, { method: 'MKCOL', headers: { authorization: basic } })).status, 201);
    assert.equal((await fetch(`${dav}/davdir/d.txt`, { method: 'PUT', headers: { authorization: basic }, body: 'dav' })).status, 201);
    assert.equal((await fetch(`${dav}/davdir/d.txt`, { method: 'DELETE', headers: { authorization: basic } })).status, 204);
    for (const [action, path] of [['mkdir', `${home}/davdir`], ['upload', `${home}/davdir/d.txt`], ['trash', `${home}/davdir/d.txt`]] as const) {
      const r = await last(action, path);
      assert.deepEqual([r.user, r.door, r.address, r.outcome], ['alice', 'dav', '127.0.0.1', 'ok'], action);
    }
    const password = `Basic ${Buffer.from('alice:pw-alice').toString('base64')}`;
    assert.equal((await fetch(`${dav}/`, { method: 'PROPFIND', headers: { authorization: password, depth: '0' } })).status, 207);
    assert.deepEqual([(await last('login')).door, (await last('login')).user], ['dav', 'alice']);
  });

  it('records what comes through S3 and through a share link, with their doors', async () => {
    const key = (await api('POST', '/api/s3/keys', alice, {})).body.Response.data as { access_key_id: string; secret_access_key: string };
    secrets.push(key.secret_access_key);
    const s3 = new S3Client({ endpoint: s.s3Url!, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key } });
    try {
      await s3.send(new PutObjectCommand({ Bucket: 'alice', Key: 's3.txt', Body: 'from s3' }));
    } finally {
      s3.destroy();
    }
    const r = await last('upload', `${home}/s3.txt`);
    assert.deepEqual([r.user, r.door, r.outcome, r.detail.size], ['alice', 's3', 'ok', 7]);
    assert.match(r.address ?? '', /127\.0\.0\.1/);

    const link = (await api('POST', '/api/shares', alice, { path: `${home}/s3.txt`, kind: 'read' })).body.Response.data as { token: string; id: string };
    secrets.push(link.token);
    const got = await fetch(`${s.url}/api/shared/${link.token}`);
    assert.equal(got.status, 200);
    assert.equal(await got.text(), 'from s3');
    const used = await last('share.use', `${home}/s3.txt`);
    assert.deepEqual([used.user, used.door, used.address, used.detail.share, used.detail.creator], [null, 'share', '127.0.0.1', link.id, 'alice']);
  });

  it('is read by administrators only, paged with a cursor and filtered by user, path, action and time', async () => {
    assert.equal((await api('GET', '/api/admin/audit', alice)).status, 403);
    assert.equal((await api('GET', '/api/admin/audit', null)).status, 401);
    const first = await api('GET', '/api/admin/audit?limit=2', root);
    assert.equal(first.status, 200);
    assert.equal(first.body.Response.data.length, 2);
    const next = await api('GET', `/api/admin/audit?limit=2&after=${first.body.Meta.continuation_token!}`, root);
    assert.equal(next.body.Response.data[0].seq, first.body.Response.data[1].seq + 1);
    const uploads = (await api('GET', '/api/admin/audit?user=alice&action=upload', root)).body.Response.data as Rec[];
    assert.ok(uploads.length >= 3);
    assert.ok(uploads.every((r) => r.user === 'alice' && r.action === 'upload'));
    const below = (await api('GET', `/api/admin/audit?path=${encodeURIComponent(`${home}/davdir`)}`, root)).body.Response.data as Rec[];
    assert.deepEqual([...new Set(below.map((r) => r.action))].sort(), ['mkdir', 'trash', 'upload']);
    assert.equal((await api('GET', '/api/admin/audit?since=2999-01-01T00:00:00Z', root)).body.Response.data.length, 0);
    const lines = await fetch(`${s.url}/api/admin/audit?action=mkdir`, { headers: { authorization: root, accept: 'application/x-ndjson' } });
    assert.match(lines.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.ok((await lines.text()).trim().split('\n').every((l) => (JSON.parse(l) as Rec).action === 'mkdir'));
  });

  it('holds no secret in any record: no password, token, S3 secret or share link token', async () => {
    const text = JSON.stringify(await all());
    for (const secret of secrets) assert.ok(!text.includes(secret), `a record holds a secret (${secret.slice(0, 4)}…)`);
  });
});
