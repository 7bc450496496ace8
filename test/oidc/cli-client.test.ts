/**
 * The server side of the command line's login: `GET /auth/clients/cli` says where the device
 * authorization grant runs (the embedded provider, with its public `lading-cli` client), the
 * provider accepts that client's device authorization requests without a secret, `POST
 * /auth/exchange` refuses anything but the provider's access tokens (the whole exchange runs
 * in test/client/device-login.test.ts), and `GET /auth/proxy` reports the caller's proxy.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
  await server.addUser('alice', 'alice-password');
});

after(async () => {
  await server?.stop();
});

const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
});

describe('command-line login, server side', () => {
  it('GET /auth/clients/cli names the embedded provider\'s device, token and revocation endpoints and the public client', async () => {
    const res = await fetch(`${server.url}/auth/clients/cli`);
    assert.equal(res.status, 200);
    const info = ((await res.json()) as { Response: { data: Record<string, unknown> } }).Response.data;
    assert.deepEqual(info, {
      issuer: `${server.url}/oidc`,
      device_authorization_endpoint: `${server.url}/oidc/device/auth`,
      token_endpoint: `${server.url}/oidc/token`,
      revocation_endpoint: `${server.url}/oidc/token/revocation`,
      client_id: 'lading-cli',
      scopes: 'openid profile offline_access',
      token_ttl: 86400,
      local_accounts: true,
    });
  });

  it('the provider starts a device authorization for the public client, and refuses an unknown client', async () => {
    const start = (client: string) => fetch(`${server.url}/oidc/device/auth`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client, scope: 'openid profile offline_access' }),
    });
    const ok = await start('lading-cli');
    assert.equal(ok.status, 200);
    const device = (await ok.json()) as Record<string, string>;
    assert.match(device.user_code!, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(device.verification_uri, `${server.url}/oidc/device`);
    const poll = await fetch(`${server.url}/oidc/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code!, client_id: 'lading-cli' }),
    });
    assert.equal(((await poll.json()) as { error: string }).error, 'authorization_pending');
    assert.equal((await start('someone-else')).status, 401);
  });

  it('the code page looks like the sign-in pages and keeps the provider\'s CSRF value', async () => {
    const res = await fetch(`${server.url}/oidc/device`);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<title>Connect a device · lading<\/title>/);
    assert.match(html, /<label for="user_code">Code<\/label>/);
    assert.match(html, /<input type="hidden" name="xsrf" value="[^"]+">/);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  });

  it('POST /auth/exchange refuses what is not an access token of the provider: a lading token, garbage, no token', async () => {
    const token = await server.login('alice', 'alice-password');
    for (const access_token of [token, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.x', 'garbage']) {
      const res = await post('/auth/exchange', { access_token });
      assert.equal(res.status, 401, access_token);
      const body = (await res.json()) as { Response: { data: null; errors: Record<string, string>[] } };
      assert.equal(body.Response.data, null);
      assert.match(Object.values(body.Response.errors[0]!)[0]!, /not a valid access token/);
    }
    assert.equal((await post('/auth/exchange', {})).status, 400);
  });

  it('GET /auth/proxy reports the caller\'s proxy certificate, user and home; 401 without a token', async () => {
    const token = await server.login('alice', 'alice-password');
    const res = await fetch(`${server.url}/auth/proxy`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
    const p = ((await res.json()) as { Response: { data: Record<string, unknown> } }).Response.data;
    assert.match(String(p.subject), /CN=alice/);
    assert.match(String(p.issuer), /CN=alice/);
    assert.equal(p.expired, false);
    assert.equal(p.storage_user, 'alice');
    assert.equal(p.storage_home, `/${server.zone}/home/alice`);
    const left = (Date.parse(String(p.not_after)) - Date.now()) / 1000;
    assert.ok(Math.abs(Number(p.seconds_left) - left) < 120, `seconds_left ${p.seconds_left} matches not_after`);
    assert.ok(Date.parse(String(p.not_before)) <= Date.now());
    assert.equal((await fetch(`${server.url}/auth/proxy`)).status, 401);
  });
});

describe('device authorization polling (RFC 8628 sections 3.2 and 3.5)', () => {
  let polled: TestServer;
  let now = Date.now();
  before(async () => {
    // NOTE: the server's clock stands still unless the test moves it, so "too soon" is exact.
    polled = await startTestServer({}, { overrides: { clock: { now: () => new Date(now) } } });
  });
  after(async () => {
    await polled?.stop();
  });

  it('says the interval, answers slow_down to a poll sooner than it, and adds 5 seconds after each', async () => {
    const start = await fetch(`${polled.url}/oidc/device/auth`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'lading-cli', scope: 'openid profile offline_access' }),
    });
    assert.equal(start.status, 200);
    const device = (await start.json()) as { device_code: string; interval: number };
    assert.equal(device.interval, 5);
    const poll = async () => {
      const res = await fetch(`${polled.url}/oidc/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'lading-cli' }),
      });
      assert.equal(res.status, 400);
      return ((await res.json()) as { error: string }).error;
    };
    assert.equal(await poll(), 'authorization_pending', 'the first poll');
    assert.equal(await poll(), 'slow_down', 'at once again');
    now += 5_000;
    assert.equal(await poll(), 'authorization_pending', 'an interval after the first poll');
    now += 5_000;
    assert.equal(await poll(), 'slow_down', 'the interval is now 10 seconds');
    now += 10_000;
    assert.equal(await poll(), 'authorization_pending', 'past the 10 seconds from the last poll in time');
    now += 10_000;
    assert.equal(await poll(), 'slow_down', 'the interval is now 15 seconds');
    // Racing polls: only one of them is in time.
    now += 20_000;
    const raced = await Promise.all([poll(), poll(), poll(), poll()]);
    assert.deepEqual(raced.filter((e) => e === 'authorization_pending').length, 1, raced.join());
  });
});
