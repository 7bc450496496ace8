/**
 * The embedded OpenID Provider as users and attackers meet it, over HTTP: discovery and JWKS,
 * the full login with no configuration, CSRF protection and rate limits on the login form,
 * refusal of foreign redirect URIs and replayed codes, a cancelled consent, the provider's
 * own access tokens accepted as bearer tokens, and its state surviving a restart.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from 'openid-client';
import { loadMasterKey } from '../../src/identity/secrets/sealing.ts';
import { oidcSecret } from '../../src/identity/oidc/oidc-login.ts';
import { embeddedClientSecret } from '../../src/identity/oidc/provider.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { Jar, follow, formPost, hiddenCsrf, location, loginToCallback } from './flow.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer({ 'oidc.max_failed_logins': 3 });
  await server.addUser('alice', 'alice-password');
});

after(async () => {
  await server?.stop();
});

async function assertEnvelopeError(res: Response, status: number, pattern: RegExp): Promise<void> {
  const body = await json(res);
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.Meta.status, status);
  assert.equal(body.Response.data, null);
  assert.match(Object.values(body.Response.errors![0]!)[0]!, pattern);
}

/** Starts a login and returns the jar and the URL of the login page. */
async function loginPage(jar = new Jar(), start = `${server.url}/auth/askauth`): Promise<{ jar: Jar; url: string; csrf: string }> {
  const step = await follow(jar, start);
  const html = await step.res!.text();
  assert.equal(step.res!.status, 200);
  assert.match(html, /id="password"/);
  return { jar, url: step.url, csrf: hiddenCsrf(html) };
}

describe('embedded provider', () => {
  it('publishes discovery and a JWKS with a signing key', async () => {
    const res = await fetch(`${server.url}/oidc/.well-known/openid-configuration`);
    assert.equal(res.status, 200);
    const meta = (await res.json()) as Record<string, unknown>;
    assert.equal(meta.issuer, `${server.url}/oidc`);
    for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri']) {
      assert.ok(String(meta[endpoint]).startsWith(`${server.url}/oidc/`), endpoint);
    }
    const jwks = (await (await fetch(String(meta.jwks_uri))).json()) as { keys: Record<string, unknown>[] };
    assert.ok(jwks.keys.length >= 1);
    for (const key of jwks.keys) assert.equal(key.d, undefined, 'no private key material is published');
  });

  it('offers only the authorization code flow with PKCE, the device grant and refresh tokens (no implicit or hybrid grant)', async () => {
    const meta = (await (await fetch(`${server.url}/oidc/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    assert.deepEqual(meta.response_types_supported, ['code']);
    assert.deepEqual([...meta.grant_types_supported!].sort(), ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
  });

  it('logs a local user in with no configuration, and the token works', async () => {
    const { jar, callback } = await loginToCallback(server.url, 'alice', 'alice-password');
    const res = await jar.fetch(callback);
    const body = await json(res);
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.Response.data.storage_user, 'alice');
    const list = await fetch(server.home('alice') + '/', { headers: { authorization: `Bearer ${body.Response.data.token}` } });
    assert.equal(list.status, 200);
  });

  it('refuses a login form without, or with a wrong, CSRF token', async () => {
    const { jar, url } = await loginPage();
    await assertEnvelopeError(await formPost(jar, `${url}/login`, { username: 'alice', password: 'alice-password' }), 403, /form/);
    await assertEnvelopeError(await formPost(jar, `${url}/login`, { csrf: 'forged', username: 'alice', password: 'alice-password' }), 403, /form/);
  });

  it('refuses a login form posted from another site, even with the right token', async () => {
    const { jar, url, csrf } = await loginPage();
    await assertEnvelopeError(await formPost(jar, `${url}/login`, { csrf, username: 'alice', password: 'alice-password' }, { origin: 'https://evil.example' }), 403, /site/);
    await assertEnvelopeError(await formPost(jar, `${url}/login`, { csrf, username: 'alice', password: 'alice-password' }, { 'sec-fetch-site': 'cross-site' }), 403, /site/);
  });

  it('refuses a foreign redirect URI with an envelope error and no redirect (open redirect)', async () => {
    const url = new URL(`${server.url}/oidc/auth`);
    url.search = new URLSearchParams({
      client_id: 'lading', response_type: 'code', scope: 'openid', redirect_uri: 'https://evil.example/callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's', nonce: 'n',
    }).toString();
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.headers.get('location'), null);
    await assertEnvelopeError(res, 400, /redirect_uri/);
  });

  it('refuses a replayed authorization code', async () => {
    const { jar, callback } = await loginToCallback(server.url, 'alice', 'alice-password');
    assert.equal((await jar.fetch(callback)).status, 200);
    // A second login in the same browser gives a fresh, valid state; the old code goes with it.
    const fresh = await loginToCallback(server.url, 'alice', 'alice-password', jar);
    const replay = new URL(fresh.callback);
    replay.searchParams.set('code', new URL(callback).searchParams.get('code')!);
    await assertEnvelopeError(await jar.fetch(replay.href), 401, /invalid_grant/);
  });

  it('asks lading\'s own app no consent, and refuses the login when the user cancels on a consent page asked for', async () => {
    await server.addUser('carol', 'carol-password');
    const { jar: plainJar, callback } = await loginToCallback(server.url, 'carol', 'carol-password');
    assert.ok(new URL(callback).searchParams.get('code'), 'a code right after the password');
    assert.equal((await plainJar.fetch(callback)).status, 200);
    // NOTE: any client may still ask for the consent page (prompt=consent).
    const browser = new Jar();
    const start = await follow(browser, `${server.url}/auth/askauth`, (u) => new URL(u).pathname === '/oidc/auth');
    const asked = new URL(start.url);
    asked.searchParams.set('prompt', 'consent');
    const { jar, url, csrf } = await loginPage(browser, asked.href);
    const posted = await formPost(jar, `${url}/login`, { csrf, username: 'carol', password: 'carol-password' });
    assert.equal(posted.status, 303);
    const consent = await follow(jar, location(posted, url));
    const html = await consent.res!.text();
    assert.match(html, /Allow access/);
    const cancelled = await formPost(jar, `${consent.url}/abort`, { csrf: hiddenCsrf(html) });
    const back = await follow(jar, location(cancelled, consent.url));
    await assertEnvelopeError(back.res!, 401, /access_denied/);
  });

  it("accepts the provider's own access tokens (JWT) as bearer tokens, but not its ID tokens", async () => {
    await server.addUser('erin', 'erin-password');
    const tokens = await toolTokens(server, 'erin', 'erin-password');
    assert.equal(tokens.access_token.split('.').length, 3, 'the access token is a JWT');
    const ok = await fetch(server.home('erin') + '/', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(ok.status, 200, await ok.clone().text());
    const idToken = await fetch(server.home('erin') + '/', { headers: { authorization: `Bearer ${tokens.id_token}` } });
    await assertEnvelopeError(idToken, 401, /invalid|expired/);
  });

  it('checks access tokens by introspection when configured', async () => {
    const introspecting = await startTestServer({ 'oidc.introspection': true });
    try {
      await introspecting.addUser('fay', 'fay-password');
      const tokens = await toolTokens(introspecting, 'fay', 'fay-password');
      const ok = await fetch(introspecting.home('fay') + '/', { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(ok.status, 200, await ok.clone().text());
      // Revoked at the provider: introspection says inactive, so a new session cannot start from it.
      const other = await toolTokens(introspecting, 'fay', 'fay-password');
      await client.tokenRevocation(other.config, other.access_token);
      await assertEnvelopeError(await fetch(introspecting.home('fay') + '/', { headers: { authorization: `Bearer ${other.access_token}` } }), 401, /invalid|expired/);
    } finally {
      await introspecting.stop();
    }
  });
});

/**
 * Plays a tool such as oidc-agent that holds lading's client registration at the embedded
 * provider: runs the code flow itself and returns the provider's tokens.
 */
async function toolTokens(target: TestServer, user: string, password: string) {
  const masterKey = await loadMasterKey(join(target.dataDir, 'keys', 'master.key'), false);
  const secret = embeddedClientSecret(oidcSecret(masterKey));
  const config = await client.discovery(new URL(`${target.url}/oidc`), 'lading', secret, client.ClientSecretBasic(secret), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const start = client.buildAuthorizationUrl(config, {
    redirect_uri: `${target.url}/auth/callback`, scope: 'openid profile', state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  });
  const { callback } = await loginToCallback(target.url, user, password, new Jar(), start.href);
  const tokens = await client.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
  return { config, access_token: tokens.access_token, id_token: tokens.id_token };
}

describe('embedded provider rate limits', () => {
  // NOTE: a server of its own, since these tests lock the test's address out.
  before(async () => {
    await server.stop();
    server = await startTestServer({ 'oidc.max_failed_logins': 3 });
    await server.addUser('alice', 'alice-password');
    await server.addUser('bob', 'bob-password');
  });

  it('rate-limits failed logins per account, even with the right password afterwards', async () => {
    const { jar, url, csrf } = await loginPage();
    for (let i = 0; i < 3; i++) {
      const res = await formPost(jar, `${url}/login`, { csrf, username: 'bob', password: `wrong-${i}` });
      assert.equal(res.status, 401);
      assert.match(await res.text(), /user name or password is wrong/);
    }
    const limited = await formPost(jar, `${url}/login`, { csrf, username: 'bob', password: 'bob-password' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.match(await limited.text(), /Too many failed sign-in attempts/);
    // Another account is not locked by bob's failures (until the address limit).
    const other = await loginToCallback(server.url, 'alice', 'alice-password');
    assert.equal((await other.jar.fetch(other.callback)).status, 200);
  });

  it('rate-limits failed logins per address across accounts', async () => {
    const { jar, url, csrf } = await loginPage();
    let status = 0;
    let attempts = 0;
    // 3 per account and address → 60 per address over every account; the address already
    // failed 3 times in the test above.
    for (; attempts < 80 && status !== 429; attempts++) {
      const res = await formPost(jar, `${url}/login`, { csrf, username: `nobody-${attempts}`, password: 'x' });
      status = res.status;
    }
    assert.equal(status, 429);
    assert.equal(attempts, 58, 'the sixtieth failure from one address locks it');
  });

});

describe('embedded provider state in the catalog', () => {
  it('lets a login started before a restart finish after it', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const dataDir = await mkdtemp(join(tmpdir(), 'lading-oidc-restart-'));
    try {
      const flags = { listen: `127.0.0.1:${port}` };
      const first = await startTestServer(flags, { dataDir, keepData: true });
      await first.addUser('dan', 'dan-password');
      const jar = new Jar();
      const step = await follow(jar, `${first.url}/auth/askauth`);
      const csrf = hiddenCsrf(await step.res!.text());
      await first.stop();

      const second = await startTestServer(flags, { dataDir, keepData: true });
      try {
        const posted = await formPost(jar, `${step.url}/login`, { csrf, username: 'dan', password: 'dan-password' });
        assert.equal(posted.status, 303, await posted.clone().text());
        let next = await follow(jar, location(posted, step.url), (u) => new URL(u).pathname === '/auth/callback');
        if (next.res) {
          const html = await next.res.text();
          const confirmed = await formPost(jar, `${next.url}/confirm`, { csrf: hiddenCsrf(html) });
          next = await follow(jar, location(confirmed, next.url), (u) => new URL(u).pathname === '/auth/callback');
        }
        const res = await jar.fetch(next.url);
        const body = await json(res);
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.Response.data.storage_user, 'dan');
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('embedded provider signing keys', () => {
  it('rotates keys by period and keeps the previous one published for one more period', async () => {
    let now = Date.parse('2031-05-01T00:00:00Z');
    const clock = { now: () => new Date(now) };
    const rotating = await startTestServer({ 'oidc.key_rotation': 1000 }, { overrides: { clock } });
    try {
      const kids = async () => {
        const res = await fetch(`${rotating.url}/oidc/jwks`);
        assert.equal(res.status, 200);
        return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
      };
      const first = await kids();
      assert.equal(first.length, 1);
      now += 1000 * 1000;
      const second = await kids();
      assert.equal(second.length, 2);
      assert.equal(second[1], first[0], 'the previous key is still published, after the new one');
      assert.notEqual(second[0], first[0]);
      now += 1000 * 1000;
      const third = await kids();
      assert.ok(!third.includes(first[0]!), 'a key two periods old is gone');
      assert.equal(third[1], second[0]);
    } finally {
      await rotating.stop();
    }
  });

  it('sends a browser that opened another host name to the configured origin first', async () => {
    const url = new URL(server.url);
    const res = await fetch(`http://localhost:${url.port}/auth/askauth`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `${server.url}/auth/askauth`);
    assert.equal(res.headers.getSetCookie().length, 0);
  });
});
