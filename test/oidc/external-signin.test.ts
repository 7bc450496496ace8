/**
 * Browser sign-in and sign-out through an external OpenID Provider (test doubles over real
 * sockets): a browser whose account is disabled gets a page saying so (403), not the envelope;
 * sign-out sends the browser to the provider's end-session endpoint with the login's ID token
 * and lading's / to come back to (RP-initiated logout), or to / when the provider has none.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { trustedAuthority } from '../helpers/trusted.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { Jar, follow } from './flow.ts';
import { startTestDoubleProvider, type TestDoubleProvider } from './test-double-provider.ts';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

interface Node { idp: TestDoubleProvider; server: TestServer }
let withEndSession: Node;
let without: Node;

async function startNode(endSession: boolean): Promise<Node> {
  const idp = await startTestDoubleProvider({ endSession });
  const server = await startTestServer(
    { 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId, 'oidc.client_secret': idp.clientSecret },
    { overrides: { authority: trustedAuthority } },
  );
  return { idp, server };
}

before(async () => {
  withEndSession = await startNode(true);
  without = await startNode(false);
});

after(async () => {
  for (const node of [withEndSession, without]) {
    await node?.server.stop();
    await node?.idp.close();
  }
});

/** Runs /auth/signin through the double's authorization endpoint; returns the callback URL, not yet followed. */
async function toCallback(server: TestServer, next = '/'): Promise<{ jar: Jar; callback: string }> {
  const jar = new Jar();
  const step = await follow(jar, `${server.url}/auth/signin?next=${encodeURIComponent(next)}`, (u) => new URL(u).pathname === '/auth/callback');
  assert.equal(step.res, null, 'reached the callback');
  return { jar, callback: step.url };
}

/** Signs a browser in and out; returns what sign-out answered. */
async function signInAndOut(server: TestServer, signedIn: () => Promise<void> = async () => {}): Promise<{ jar: Jar; next: string }> {
  const { jar, callback } = await toCallback(server);
  assert.equal((await jar.fetch(callback)).status, 303);
  await signedIn();
  const session = await json(await jar.fetch(`${server.url}/auth/session`));
  assert.equal(session.Response.data.provider, 'external');
  const out = await jar.fetch(`${server.url}/auth/signout`, { method: 'POST', headers: { 'x-csrf-token': session.Response.data.csrf_token } });
  const body = await json(out);
  assert.equal(out.status, 200, JSON.stringify(body));
  assert.equal(body.Response.data.Completed, 'Signed out.');
  assert.equal((await jar.fetch(`${server.url}/auth/session`)).status, 401, 'signed out at lading at once');
  return { jar, next: body.Response.data.next };
}

describe('browser sign-in through an external provider', () => {
  it('shows a disabled account a page saying so', async () => {
    const { idp, server } = without;
    idp.user = { sub: 'e1', preferred_username: 'erin' };
    await server.deps.backend.addUser('erin', { passwordHash: null });
    await server.deps.admin.setDisabled('erin', true);
    const { jar, callback } = await toCallback(server, '/browse');
    const res = await jar.fetch(callback, { headers: HTML });
    const text = await res.text();
    assert.equal(res.status, 403, text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(text, /<h1>You cannot sign in with this account<\/h1>/);
    assert.match(text, /The account &#39;erin&#39; is disabled/);
    assert.equal(jar.get('lading_session'), undefined, 'no session');
  });

  it('signs out at the provider\'s end-session endpoint, with the login\'s ID token, back to /', async () => {
    const { idp, server } = withEndSession;
    idp.user = { sub: 'f1', preferred_username: 'fay' };
    const { jar, next } = await signInAndOut(server, async () => {
      const kept = await server.deps.catalog.oidcList('lading:session-id-token', new Date());
      assert.equal(kept.length, 1, 'the ID token is kept for sign-out');
      assert.ok(!kept[0]!.payload.includes(idp.idTokens.at(-1)!.split('.')[1]!), 'sealed, not in clear');
    });
    const url = new URL(next);
    assert.equal(url.origin + url.pathname, `${idp.issuer}/logout`);
    assert.equal(url.searchParams.get('id_token_hint'), idp.idTokens.at(-1), 'the ID token of this login');
    assert.equal(decodeJwt(url.searchParams.get('id_token_hint')!).preferred_username, 'fay');
    assert.equal(url.searchParams.get('post_logout_redirect_uri'), `${server.url}/`);
    assert.equal(url.searchParams.get('client_id'), idp.clientId);

    const back = await jar.fetch(next);
    assert.equal(back.status, 302);
    assert.equal(back.headers.get('location'), `${server.url}/`, 'the provider sends the browser back to lading');
    assert.equal(idp.endSessions.length, 1);
    assert.deepEqual(await server.deps.catalog.oidcList('lading:session-id-token', new Date()), [], 'and dropped once used');

    // The ID token was for that one sign-out: a bearer token's sign-out has none to send.
    const token = await server.deps.sessions.open('fay');
    const bearer = await fetch(`${server.url}/auth/signout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal((await json(bearer)).Response.data.next, '/');
  });

  it('signs out to / when the provider advertises no end-session endpoint', async () => {
    const { idp, server } = without;
    idp.user = { sub: 'g1', preferred_username: 'gus' };
    const { next } = await signInAndOut(server);
    assert.equal(next, '/');
  });
});
