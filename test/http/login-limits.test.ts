/**
 * One failed-attempt limiter for every way to log in with a password: `POST /auth/login`,
 * `/auth/b2safeproxy` and the embedded provider's sign-in page count into the same windows, so
 * a lockout on one door holds at the others, with the right password too. It counts per
 * account and address, per account over every address and per address over every account, so
 * one person's typos or a guesser at one account lock out nobody else. Addresses are set with
 * X-Forwarded-For (the server trusts its proxy).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { Jar, follow, formPost, hiddenCsrf } from '../oidc/flow.ts';

let server: TestServer;

before(async () => {
  // NOTE: 3 per account and address, so 12 per account and 60 per address.
  server = await startTestServer({ 'oidc.max_failed_logins': 3, trust_proxy: true });
  for (const name of ['dave', 'erin', 'carol', 'frank', 'gina', 'hugo', 'ivan']) await server.addUser(name, `${name}-password`);
});

after(async () => {
  await server?.stop();
});

/** Logs in through `route`, from the client's own address or from `from` (as a proxy says). */
function apiLogin(route: string, username: string, password: string, from?: string): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(from ? { 'x-forwarded-for': from } : {}) },
    body: JSON.stringify({ username, password }),
  });
}

async function browserLogin(username: string, password: string, from?: string): Promise<Response> {
  const jar = new Jar();
  const step = await follow(jar, `${server.url}/auth/askauth`);
  const csrf = hiddenCsrf(await step.res!.text());
  return formPost(jar, `${step.url}/login`, { csrf, username, password }, from ? { 'x-forwarded-for': from } : {});
}

/** Fails `times` logins as `username` from `from`, through the three doors in turn; returns the statuses. */
async function fail(username: string, from: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) {
    const door = i % 3;
    const res = door === 2 ? await browserLogin(username, `wrong-${i}`, from)
      : await apiLogin(door === 0 ? '/auth/login' : '/auth/b2safeproxy', username, `wrong-${i}`, from);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

describe('login rate limits shared by every login path', () => {
  it('answers 429 with Retry-After on POST /auth/login after the configured failures, even for the right password', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await apiLogin('/auth/login', 'dave', `wrong-${i}`)).status, 401);
    for (const route of ['/auth/login', '/auth/b2safeproxy']) {
      const limited = await apiLogin(route, 'dave', 'dave-password');
      const body = await json(limited);
      assert.equal(limited.status, 429, JSON.stringify(body));
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(body.Response.data, null);
      assert.match(Object.values(body.Response.errors![0]!)[0]!, /Too many failed sign-in attempts/);
    }
    // The browser sign-in shares the window: dave is locked out there too.
    const page = await browserLogin('dave', 'dave-password');
    assert.equal(page.status, 429);
    assert.match(await page.text(), /Too many failed sign-in attempts/);
  });

  it('counts browser sign-in failures against POST /auth/login', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await browserLogin('erin', `wrong-${i}`)).status, 401);
    const limited = await apiLogin('/auth/login', 'erin', 'erin-password');
    assert.equal(limited.status, 429);
  });

  it('lets a guesser at one account, or at a name that does not exist, lock out no other account from the same address', async () => {
    const office = '198.51.100.7';
    // 3 tries per name count; the rest are refused and count nowhere.
    assert.deepEqual(await fail('nobody-here', office, 20), [401, 401, 401, ...Array(17).fill(429)]);
    for (const name of ['dave', 'frank', 'gina']) assert.deepEqual(await fail(name, office, 5), [401, 401, 401, 429, 429]);
    // 12 failures from the address, over four names: carol, from the same address, gets in.
    const carol = await apiLogin('/auth/login', 'carol', 'carol-password', office);
    assert.equal(carol.status, 200, JSON.stringify(await json(carol)));
    assert.equal((await browserLogin('hugo', 'hugo-password', office)).status, 303, 'the browser sign-in too');
    // The pairs stay locked, with the right password too, at every door.
    for (const route of ['/auth/login', '/auth/b2safeproxy']) {
      const limited = await apiLogin(route, 'dave', 'dave-password', office);
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
    }
    assert.equal((await browserLogin('dave', 'dave-password', office)).status, 429);
    // dave, from home, is not locked out by what was tried at the office.
    assert.equal((await apiLogin('/auth/b2safeproxy', 'dave', 'dave-password', '198.51.100.8')).status, 200);
  });

  it('stops a guesser at one account spread over many addresses, for that account only', async () => {
    for (let i = 1; i <= 4; i++) assert.deepEqual(await fail('ivan', `192.0.2.${i}`, 3), [401, 401, 401]);
    // 12 failures for ivan from four addresses: ivan is locked out everywhere, with the right password too.
    for (const from of ['192.0.2.5', '192.0.2.6']) {
      const limited = await apiLogin('/auth/login', 'ivan', 'ivan-password', from);
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
    }
    assert.equal((await browserLogin('ivan', 'ivan-password', '192.0.2.5')).status, 429);
    // Nobody else is, at those addresses.
    assert.equal((await apiLogin('/auth/login', 'gina', 'gina-password', '192.0.2.1')).status, 200);
  });

  it('stops a password spray from one address at the much higher per-address bound, at every door', async () => {
    const sprayer = '203.0.113.9';
    const statuses: number[] = [];
    // 20 names × 3 failures, through the three doors in turn: 60, the address's bound.
    for (let i = 0; i < 20; i++) statuses.push(...await fail(`sprayed-${i}`, sprayer, 3));
    assert.deepEqual(statuses, Array(60).fill(401));
    // From there on the address is refused for any account, with the right password too.
    for (const route of ['/auth/login', '/auth/b2safeproxy']) {
      const limited = await apiLogin(route, 'erin', 'erin-password', sprayer);
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
    }
    assert.equal((await browserLogin('hugo', 'hugo-password', sprayer)).status, 429);
    // The accounts it tried are not locked out elsewhere.
    assert.equal((await apiLogin('/auth/login', 'hugo', 'hugo-password', '203.0.113.10')).status, 200);
  });
});
