/**
 * Browser sign-in through an external OpenID Provider (a test double over a real socket): a
 * browser whose account is disabled gets a page saying so (403), not the envelope.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { trustedAuthority } from '../helpers/trusted.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Jar, follow } from './flow.ts';
import { startTestDoubleProvider, type TestDoubleProvider } from './test-double-provider.ts';

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

let idp: TestDoubleProvider;
let server: TestServer;

before(async () => {
  idp = await startTestDoubleProvider();
  server = await startTestServer(
    { 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId, 'oidc.client_secret': idp.clientSecret },
    { overrides: { authority: trustedAuthority } },
  );
});

after(async () => {
  await server?.stop();
  await idp?.close();
});

/** Runs /auth/signin through the double's authorization endpoint; returns the callback URL, not yet followed. */
async function toCallback(next = '/'): Promise<{ jar: Jar; callback: string }> {
  const jar = new Jar();
  const step = await follow(jar, `${server.url}/auth/signin?next=${encodeURIComponent(next)}`, (u) => new URL(u).pathname === '/auth/callback');
  assert.equal(step.res, null, 'reached the callback');
  return { jar, callback: step.url };
}

describe('browser sign-in through an external provider', () => {
  it('shows a disabled account a page saying so', async () => {
    idp.user = { sub: 'e1', preferred_username: 'erin' };
    await server.deps.backend.addUser('erin', { passwordHash: null });
    await server.deps.admin.setDisabled('erin', true);
    const { jar, callback } = await toCallback('/browse');
    const res = await jar.fetch(callback, { headers: HTML });
    const text = await res.text();
    assert.equal(res.status, 403, text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(text, /<h1>You cannot sign in with this account<\/h1>/);
    assert.match(text, /The account &#39;erin&#39; is disabled/);
    assert.equal(jar.get('lading_session'), undefined, 'no session');
  });
});
