/**
 * Sessions end when they should: a password change, `lading user revoke` and `lading user
 * disable`, run by an operator beside a running server on the same data directory, make the
 * user's existing bearer tokens fail at the next request; a disabled user cannot log in again
 * until enabled; other users keep their sessions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { LADING_BIN } from '../helpers/process.ts';
import { json, startTestServer, type TestServer } from '../helpers/server.ts';
import { follow, loginToCallback } from '../oidc/flow.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

function lading(args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LADING_'))), LADING_ZONE: server.zone };
  return new Promise((resolve) => {
    const child = execFile(LADING_BIN, [...args, '--data', server.dataDir], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

async function status(user: string, bearer: string): Promise<number> {
  const res = await fetch(`${server.home(user)}/`, { headers: { authorization: bearer } });
  await res.arrayBuffer();
  return res.status;
}

describe('ending sessions', () => {
  it('a password change refuses the tokens issued before it, and only that user\'s', async () => {
    const alice = await server.bearer('alice');
    const otherAlice = `Bearer ${await server.login('alice')}`;
    const bob = await server.bearer('bob');
    assert.equal(await status('alice', alice), 200);
    const res = await lading(['user', 'passwd', 'alice'], 'a-new-password\n');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'password of alice changed; 2 sessions ended\n');
    for (const token of [alice, otherAlice]) {
      const refused = await fetch(`${server.home('alice')}/`, { headers: { authorization: token } });
      assert.equal(refused.status, 401);
      assert.match(Object.values((await json(refused)).Response.errors![0]!)[0]!, /invalid or has expired; log in again/);
    }
    assert.equal(await status('bob', bob), 200, 'other users keep their sessions');
    await assert.rejects(server.login('alice'), /401/, 'the old password no longer works');
    const fresh = `Bearer ${await server.login('alice', 'a-new-password')}`;
    assert.equal(await status('alice', fresh), 200);
  });

  it('a password change also ends the sign-in at the embedded provider: the browser is asked for the password again', async () => {
    await server.addUser('erin', 'erin-password');
    const { jar, callback } = await loginToCallback(server.url, 'erin', 'erin-password');
    assert.equal((await jar.fetch(callback)).status, 200);
    const isCallback = (u: string) => new URL(u).pathname === '/auth/callback';
    // Signed in at the provider: a second login goes straight to the callback.
    assert.equal((await follow(jar, `${server.url}/auth/askauth`, isCallback)).res, null);
    assert.equal((await lading(['user', 'passwd', 'erin'], 'erin-new-password\n')).code, 0);
    const again = await follow(jar, `${server.url}/auth/askauth`, isCallback);
    assert.ok(again.res, 'stopped at a page rather than the callback');
    assert.match(await again.res.text(), /id="password"/);
  });

  it('lading user revoke ends every session of a user at once', async () => {
    const carol = await server.bearer('carol');
    assert.equal(await status('carol', carol), 200);
    const res = await lading(['user', 'revoke', 'carol']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, '1 session of carol ended\n');
    assert.equal(await status('carol', carol), 401);
  });

  it('a disabled user is logged out and cannot log in until enabled again', async () => {
    const dave = await server.bearer('dave');
    assert.equal((await lading(['user', 'disable', 'dave'])).stdout, 'dave disabled; their sessions are ended\n');
    assert.equal(await status('dave', dave), 401);
    const login = await fetch(`${server.url}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'dave', password: 'pw-dave' }),
    });
    assert.equal(login.status, 401);
    assert.match(Object.values((await json(login)).Response.errors![0]!)[0]!, /disabled/);
    assert.match((await lading(['user', 'list'])).stdout, /^dave\tuser\tdisabled$/m);
    assert.equal((await lading(['user', 'enable', 'dave'])).stdout, 'dave enabled\n');
    assert.equal(await status('dave', `Bearer ${await server.login('dave')}`), 200);
  });
});
