/**
 * Changing a share link's expiry and use limit over HTTP (`PATCH /api/shares/<id>`): only who
 * may manage the link (its creator, a holder of own on its entity, an admin) changes it, and
 * anyone else gets the same 404 as for no link; bad bodies get 400; every refusal is the JSON
 * envelope; the change takes effect for the token already handed out (a link past its new use
 * limit answers 410, one brought back works again); and the audit trail records `share.update`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword } from '../../src/identity/secrets/password.ts';
import { json, startTestServer, type EnvelopeBody, type TestServer } from '../helpers/server.ts';

interface Link { id: string; url: string; uses: number; max_uses: number | null; expires_at: string | null; state: string }

describe('changing a share link over HTTP', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let carol: string;
  let root: string;
  const path = (rest: string) => `/tz/home/alice/${rest}`;

  const call = async (method: string, url: string, auth: string | null, body?: unknown): Promise<{ status: number; body: EnvelopeBody }> => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = auth;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${s.url}${url}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await json(res) };
  };
  const create = async (body: Record<string, unknown>): Promise<Link> => {
    const made = await call('POST', '/api/shares', alice, body);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.Response.data as Link;
  };
  const patch = (id: string, body: unknown, auth = alice) => call('PATCH', `/api/shares/${encodeURIComponent(id)}`, auth, body);
  /** Asserts the answer is the error envelope with `status` and one error titled `title`. */
  const refused = (answer: { status: number; body: EnvelopeBody }, status: number, title: string, what: string) => {
    assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.Meta.status, status, what);
    assert.equal(answer.body.Response.data, null, what);
    assert.deepEqual(Object.keys(answer.body.Response.errors?.[0] ?? {}), [title], what);
  };

  before(async () => {
    s = await startTestServer();
    alice = await s.bearer('alice');
    bob = await s.bearer('bob');
    carol = await s.bearer('carol');
    await s.deps.backend.addUser('root', { kind: 'admin', passwordHash: await hashPassword('pw-root') });
    root = `Bearer ${await s.login('root')}`;
    await fetch(`${s.url}/api/registered`, {
      method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: path('study'), force: true }),
    });
    const put = await fetch(s.home('alice', 'study/data.csv'), { method: 'PUT', headers: { authorization: alice, 'content-type': 'application/octet-stream' }, body: 'a,b\n1,2\n' });
    assert.equal(put.status, 200);
    // NOTE: carol holds own on the folder; bob only read.
    for (const [principal, level] of [['carol', 'own'], ['bob', 'read']] as const) {
      assert.equal((await call('PUT', `/api/acl${path('study')}`, alice, { principal, level })).status, 200);
    }
  });
  after(() => s?.stop());

  it('raises and lowers the use limit of the link already handed out: past its uses it answers 410, given more it works again', async () => {
    const link = await create({ path: path('study/data.csv'), kind: 'read', max_uses: 1 });
    assert.equal((await fetch(link.url)).status, 200);
    assert.equal((await fetch(link.url)).status, 410, 'used up');
    const more = await patch(link.id, { max_uses: 3 });
    assert.equal(more.status, 200, JSON.stringify(more.body));
    assert.deepEqual((({ uses, max_uses, state }) => ({ uses, max_uses, state }))(more.body.Response.data as Link), { uses: 1, max_uses: 3, state: 'active' });
    assert.equal((await fetch(link.url)).status, 200, 'the same link works again');
    const fewer = await patch(link.id, { max_uses: 2 });
    assert.equal((fewer.body.Response.data as Link).state, 'used up', 'two uses taken of two');
    const gone = await fetch(link.url);
    assert.equal(gone.status, 410);
    assert.deepEqual(Object.keys((await json(gone)).Response.errors?.[0] ?? {}), ['Gone']);
    const unlimited = await patch(link.id, { max_uses: null });
    assert.equal((unlimited.body.Response.data as Link).max_uses, null);
    assert.equal((await fetch(link.url)).status, 200);
  });

  it('sets, moves and removes the expiry; what is left out stays', async () => {
    const link = await create({ path: path('study'), kind: 'read', expires_in: 3600, max_uses: 5 });
    const later = new Date(Date.now() + 30 * 86400_000).toISOString();
    const moved = await patch(link.id, { expires_at: later });
    assert.equal(moved.status, 200);
    assert.equal((moved.body.Response.data as Link).expires_at, later);
    assert.equal((moved.body.Response.data as Link).max_uses, 5, 'the use limit stays');
    const inAWeek = await patch(link.id, { expires_in: 7 * 86400 });
    const at = Date.parse((inAWeek.body.Response.data as Link).expires_at!);
    assert.ok(Math.abs(at - (Date.now() + 7 * 86400_000)) < 60_000, 'a week from now');
    const never = await patch(link.id, { expires_at: null });
    assert.equal((never.body.Response.data as Link).expires_at, null);
    const listed = await call('GET', `/api/shares?path=${encodeURIComponent(path('study'))}`, alice);
    assert.deepEqual((listed.body.Response.data as Link[]).filter((l) => l.id === link.id).map((l) => [l.expires_at, l.max_uses]), [[null, 5]], 'as listed');
  });

  it('lets the creator, a holder of own and an admin change it; anyone else, and no link, get the same 404', async () => {
    const link = await create({ path: path('study'), kind: 'read' });
    assert.equal((await patch(link.id, { max_uses: 10 }, carol)).status, 200, 'carol holds own');
    assert.equal((await patch(link.id, { max_uses: 11 }, root)).status, 200, 'an admin');
    refused(await patch(link.id, { max_uses: 1 }, bob), 404, 'Not found', 'bob may only read');
    refused(await patch('00000000-0000-4000-8000-000000000000', { max_uses: 1 }), 404, 'Not found', 'no such link');
    refused(await call('PATCH', `/api/shares/${link.id}`, null, { max_uses: 1 }), 401, 'Unauthorized', 'no token');
    const listed = await call('GET', `/api/shares?path=${encodeURIComponent(path('study'))}`, alice);
    assert.equal((listed.body.Response.data as Link[]).find((l) => l.id === link.id)?.max_uses, 11, 'bob changed nothing');
  });

  it('refuses bad changes with 400 and changes nothing', async () => {
    const link = await create({ path: path('study'), kind: 'read', max_uses: 4 });
    for (const bad of [
      {},
      { max_uses: 0 },
      { max_uses: 1.5 },
      { max_uses: 'many' },
      { expires_at: 'tomorrow' },
      { expires_at: '2000-01-01T00:00:00Z' },
      { expires_in: 0 },
      { expires_at: '2999-01-01T00:00:00Z', expires_in: 60 },
      { token: 'mine' },
    ]) refused(await patch(link.id, bad), 400, 'Bad request', JSON.stringify(bad));
    const listed = await call('GET', `/api/shares?path=${encodeURIComponent(path('study'))}`, alice);
    assert.deepEqual((listed.body.Response.data as Link[]).filter((l) => l.id === link.id).map((l) => [l.max_uses, l.expires_at]), [[4, null]]);
  });

  it('records share.update in the audit trail, with the new bounds and never the token', async () => {
    const link = await create({ path: path('study/data.csv'), kind: 'read' });
    assert.equal((await patch(link.id, { max_uses: 9 })).status, 200);
    assert.equal((await patch(link.id, { max_uses: 1 }, bob)).status, 404);
    const res = await fetch(`${s.url}/api/admin/audit?format=jsonl`, { headers: { authorization: root } });
    const text = await res.text();
    const records = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { action: string; user: string; path: string | null; outcome: string; detail: Record<string, unknown> });
    const updates = records.filter((r) => r.action === 'share.update' && r.detail.share === link.id);
    assert.deepEqual(updates.map((r) => [r.user, r.outcome, r.path, r.detail.maxUses ?? null]), [
      ['alice', 'ok', path('study/data.csv'), 9],
      ['bob', 'failed', null, null],
    ]);
    assert.ok(!text.includes(link.url.split('/').at(-1)!), 'no token in the trail');
  });
});
