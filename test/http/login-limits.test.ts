/**
 * One failed-attempt limiter for every way to log in with a password: `POST /auth/login`,
 * `/auth/b2safeproxy` and the embedded provider's sign-in page count into the same per-account
 * window, so a lockout on one door holds at the others, with the right password too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';
import { Jar, follow, formPost, hiddenCsrf } from '../oidc/flow.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer({ 'oidc.max_failed_logins': 3 });
  for (const name of ['dave', 'erin']) await server.addUser(name, `${name}-password`);
});

after(async () => {
  await server?.stop();
});

function apiLogin(route: string, username: string, password: string): Promise<Response> {
  return fetch(`${server.url}${route}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }),
  });
}

async function browserLogin(username: string, password: string): Promise<Response> {
  const jar = new Jar();
  const step = await follow(jar, `${server.url}/auth/askauth`);
  const csrf = hiddenCsrf(await step.res!.text());
  return formPost(jar, `${step.url}/login`, { csrf, username, password });
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
});
