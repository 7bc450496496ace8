/**
 * lading against an external OpenID Provider (a test double over a real socket): the login,
 * every way the callback must refuse an ID token or a state, token lifetime following the
 * provider's refresh token, and provider access tokens accepted directly as bearer tokens.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CredentialManager } from '../../src/core/ports.ts';
import { trustedAuthority } from '../helpers/trusted.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { Jar, follow } from './flow.ts';
import { startTestDoubleProvider, type TestDoubleProvider } from './test-double-provider.ts';

/** Trusted credentials whose expiry the test controls, to drive POST /auth/proxy. */
let credentialsExpired = false;
const controllableCredentials: CredentialManager = {
  async issue(user) {
    return JSON.stringify({ kind: 'trusted', user });
  },
  async open(stored) {
    return JSON.parse(stored);
  },
  async inspect(stored) {
    const { user } = JSON.parse(stored) as { user: string };
    return { notAfter: credentialsExpired ? new Date(0) : new Date(8.64e15), subject: `trusted:${user}` };
  },
};

let idp: TestDoubleProvider;
let server: TestServer;

before(async () => {
  idp = await startTestDoubleProvider();
  server = await startTestServer(
    { 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId, 'oidc.client_secret': idp.clientSecret },
    { overrides: { credentials: controllableCredentials, authority: trustedAuthority } },
  );
});

after(async () => {
  await server?.stop();
  await idp?.close();
});

/** Runs /auth/askauth through the double's authorization endpoint; returns the callback URL, not yet followed. */
async function toCallback(jar = new Jar()): Promise<{ jar: Jar; callback: string }> {
  const step = await follow(jar, `${server.url}/auth/askauth`, (u) => new URL(u).pathname === '/auth/callback');
  assert.equal(step.res, null, 'reached the callback');
  return { jar, callback: step.url };
}

async function login(): Promise<{ token: string; user: string }> {
  const { jar, callback } = await toCallback();
  const res = await jar.fetch(callback);
  const body = await json(res);
  assert.equal(res.status, 200, JSON.stringify(body));
  return { token: body.Response.data.token, user: body.Response.data.storage_user };
}

async function assertRefused(res: Response, status: number, pattern: RegExp): Promise<void> {
  const body = await json(res);
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.Meta.status, status);
  assert.equal(body.Response.data, null);
  assert.equal(body.Meta.errors, 1);
  assert.match(Object.values(body.Response.errors![0]!)[0]!, pattern);
}

describe('login through an external provider', () => {
  it('redirects with PKCE S256, state, nonce and the default scopes, and binds the state to the browser', async () => {
    const res = await fetch(`${server.url}/auth/askauth`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const to = new URL(res.headers.get('location')!);
    assert.equal(to.origin + to.pathname, `${idp.issuer}/authorize`);
    assert.equal(to.searchParams.get('response_type'), 'code');
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(to.searchParams.get('scope'), 'openid profile email');
    assert.equal(to.searchParams.get('redirect_uri'), `${server.url}/auth/callback`);
    assert.ok((to.searchParams.get('state') ?? '').length >= 32);
    assert.ok((to.searchParams.get('nonce') ?? '').length >= 32);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('lading_login='));
    assert.ok(cookie && /HttpOnly/i.test(cookie) && /SameSite=Lax/i.test(cookie) && /Path=\/auth\/callback/.test(cookie), cookie);
  });

  it('answers with the spec 2.6 envelope, creates the user and home on first login, and the token works', async () => {
    const res = await (async () => {
      const { jar, callback } = await toCallback();
      return jar.fetch(callback);
    })();
    const body = await json(res);
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.Meta.elements, 3);
    assert.deepEqual(Object.keys(body.Response.data).sort(), ['storage_home', 'storage_user', 'token']);
    assert.equal(body.Response.data.storage_user, 'dora');
    assert.equal(body.Response.data.storage_home, `/${server.zone}/home/dora`);
    const list = await fetch(server.home('dora') + '/', { headers: { authorization: `Bearer ${body.Response.data.token}` } });
    assert.equal(list.status, 200);
    assert.equal((await server.deps.catalog.getUser('dora'))?.passwordHash, null, 'an identity-provider user has no password');
    const second = await login();
    assert.equal(second.user, 'dora', 'the second login maps to the same user');
  });

  it('refuses a wrong state', async () => {
    const { jar, callback } = await toCallback();
    const url = new URL(callback);
    url.searchParams.set('state', 'not-the-state-we-sent');
    await assertRefused(await jar.fetch(url.href), 401, /state is unknown/);
  });

  it('refuses a replayed state (the same callback twice)', async () => {
    const { jar, callback } = await toCallback();
    assert.equal((await jar.fetch(callback)).status, 200);
    // The attacker replays with the victim's cookie as well.
    await assertRefused(await fetch(callback, { headers: { cookie: `lading_login=${jar.get('lading_login') ?? ''}` } }), 401, /already used|another browser/);
    await assertRefused(await jar.fetch(callback), 401, /already used|another browser/);
  });

  it('refuses a callback in a browser that did not start the login', async () => {
    const { callback } = await toCallback();
    await assertRefused(await fetch(callback), 401, /another browser/);
  });

  it('refuses a replayed code with a fresh state', async () => {
    const first = await toCallback();
    assert.equal((await first.jar.fetch(first.callback)).status, 200);
    const second = await toCallback(first.jar);
    const url = new URL(second.callback);
    url.searchParams.set('code', new URL(first.callback).searchParams.get('code')!);
    await assertRefused(await first.jar.fetch(url.href), 401, /invalid_grant/);
  });

  const badTokens: [string, () => void, RegExp][] = [
    ['a nonce mismatch', () => (idp.idTokenChanges = { nonce: 'someone-elses-nonce' }), /nonce/],
    ['an ID token from another issuer', () => (idp.idTokenChanges = { iss: 'https://evil.example' }), /iss/],
    ['an ID token for another audience', () => (idp.idTokenChanges = { aud: 'another-client' }), /aud/],
    ['an expired ID token', () => (idp.idTokenChanges = { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), /exp/],
    ['an ID token signed with a key the provider does not publish', () => (idp.signWithForeignKey = true), /signature|key/i],
  ];
  for (const [name, bend, pattern] of badTokens) {
    it(`refuses ${name}`, async () => {
      bend();
      try {
        const { jar, callback } = await toCallback();
        await assertRefused(await jar.fetch(callback), 401, pattern);
      } finally {
        idp.idTokenChanges = {};
        idp.signWithForeignKey = false;
      }
    });
  }

  it('refuses an identity whose user claim is not a valid user name, rather than rewriting it', async () => {
    idp.idTokenChanges = { preferred_username: 'Jane Doe' };
    try {
      const { jar, callback } = await toCallback();
      await assertRefused(await jar.fetch(callback), 403, /preferred_username/);
      assert.equal(await server.deps.catalog.getUser('Jane Doe'), null);
    } finally {
      idp.idTokenChanges = {};
    }
  });

  it('falls back to sub when the user claim is absent', async () => {
    idp.idTokenChanges = { preferred_username: undefined, sub: 'c0ffee42' };
    try {
      assert.equal((await login()).user, 'c0ffee42');
    } finally {
      idp.idTokenChanges = {};
    }
  });

  it('takes no redirect target: an open-redirect attempt is refused', async () => {
    for (const param of ['redirect_uri=https://evil.example/cb', 'next=https://evil.example', 'return_to=//evil.example']) {
      const res = await fetch(`${server.url}/auth/askauth?${param}`, { redirect: 'manual' });
      assert.equal(res.headers.get('location'), null);
      await assertRefused(res, 400, /.+/);
    }
  });
});

describe('token lifetime follows the provider', () => {
  it('keeps the session while the provider accepts the refresh token, and ends it when it refuses', async () => {
    const { token } = await login();
    const auth = { authorization: `Bearer ${token}` };
    credentialsExpired = true;
    try {
      const ok = await fetch(`${server.url}/auth/proxy`, { method: 'POST', headers: auth });
      const okBody = await json(ok);
      assert.equal(ok.status, 200, JSON.stringify(okBody));
      assert.match(okBody.Response.data.Completed, /New proxy/);

      idp.refreshTokens.clear();
      const refused = await fetch(`${server.url}/auth/proxy`, { method: 'POST', headers: auth });
      assert.match(refused.headers.get('www-authenticate') ?? '', /invalid_token/);
      await assertRefused(refused, 401, /\/auth\/askauth/);
    } finally {
      credentialsExpired = false;
    }
    const after = await fetch(server.home('dora') + '/', { headers: auth });
    assert.equal(after.status, 401, 'the token stopped working');
  });

  it('stores the refresh token sealed, never in clear', async () => {
    await login();
    const sealedAll = await server.deps.catalog.oidcList('lading:session-grant', new Date());
    assert.ok(sealedAll.length > 0);
    for (const r of sealedAll) {
      assert.match(r.payload, /^v1\./);
      for (const rt of idp.refreshTokens) assert.ok(!r.payload.includes(rt));
    }
  });
});

describe('provider access tokens as bearer tokens', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('accepts a valid access token and provisions the session and the user like a login', async () => {
    const at = await idp.accessToken({ iss: idp.issuer, aud: idp.clientId, sub: 'u-otto', preferred_username: 'otto', exp: now() + 300, iat: now() });
    const res = await fetch(server.home('otto') + '/', { headers: { authorization: `Bearer ${at}` } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok(await server.deps.catalog.getUser('otto'));
    const again = await fetch(server.home('otto') + '/', { headers: { authorization: `Bearer ${at}` } });
    assert.equal(again.status, 200);
  });

  const bad: [string, () => Promise<string>][] = [
    ['another audience', () => idp.accessToken({ iss: idp.issuer, aud: 'other-api', sub: 'x', preferred_username: 'otto', exp: now() + 300 })],
    ['another issuer', () => idp.accessToken({ iss: 'https://evil.example', aud: idp.clientId, sub: 'x', preferred_username: 'otto', exp: now() + 300 })],
    ['an expired token', () => idp.accessToken({ iss: idp.issuer, aud: idp.clientId, sub: 'x', preferred_username: 'otto', exp: now() - 60, iat: now() - 400 })],
    ['a foreign signature', () => idp.accessToken({ iss: idp.issuer, aud: idp.clientId, sub: 'x', preferred_username: 'otto', exp: now() + 300 }, { foreign: true })],
    ['an ID token', () => idp.accessToken({ iss: idp.issuer, aud: idp.clientId, sub: 'x', preferred_username: 'otto', exp: now() + 300, nonce: 'n' }, { typ: 'JWT' })],
  ];
  for (const [name, make] of bad) {
    it(`refuses ${name}`, async () => {
      const res = await fetch(server.home('otto') + '/', { headers: { authorization: `Bearer ${await make()}` } });
      await assertRefused(res, 401, /invalid|expired/);
    });
  }
});
