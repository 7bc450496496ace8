/**
 * The one reader of the `Authorization` header: which headers carry a bearer credential, and
 * how API requests are authenticated with it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { authenticator, bearerCredential } from '../../src/http/authorization.ts';
import { isLadingError } from '../../src/core/errors.ts';
import type { AuthenticatedSession } from '../../src/identity/sessions/sessions.ts';

describe('bearerCredential', () => {
  const of = (authorization: string | undefined, syntax?: 'token68' | 'any') => bearerCredential({ authorization }, syntax);

  it('reads the credential of the Bearer scheme, in any case, with any white space around it', () => {
    assert.equal(of('Bearer abc.DEF-123_~+/='), 'abc.DEF-123_~+/=');
    assert.equal(of('bearer tok'), 'tok');
    assert.equal(of('BEARER \t tok  '), 'tok');
  });

  it('gives null without a header, for another scheme, and for more than one word', () => {
    assert.equal(of(undefined), null);
    assert.equal(of(''), null);
    assert.equal(of('Bearer'), null);
    assert.equal(of('Bearer '), null);
    assert.equal(of('Basic dXNlcjpwYXNz'), null);
    assert.equal(of('Bearer two words'), null);
    assert.equal(of('Token tok'), null);
  });

  it('accepts only token68 characters unless told to accept any visible ones', () => {
    assert.equal(of('Bearer s3cr!t#'), null);
    assert.equal(of('Bearer a=b'), null, 'padding only at the end');
    assert.equal(of('Bearer s3cr!t#', 'any'), 's3cr!t#');
    assert.equal(of('Bearer two words', 'any'), null);
  });
});

describe('authenticator', () => {
  const session = { user: 'alice' } as unknown as AuthenticatedSession;
  const base = { forRequest: () => 'http://127.0.0.1:8080' };
  const request = (authorization?: string, rawHeaders = authorization === undefined ? [] : ['Authorization', authorization]) => (
    { headers: { authorization }, raw: { headers: { authorization }, rawHeaders }, auth: null }) as unknown as FastifyRequest;

  it('opens the session of the bearer token and returns the token', async () => {
    const seen: string[] = [];
    const authenticate = authenticator({ authenticate: async (token) => (seen.push(token), session) }, base);
    const req = request('Bearer tok-1');
    assert.equal(await authenticate(req), 'tok-1');
    assert.equal(req.auth, session);
    assert.deepEqual(seen, ['tok-1']);
  });

  it('refuses a request without a bearer token with UNAUTHENTICATED, before asking the sessions', async () => {
    const authenticate = authenticator({ authenticate: async () => assert.fail('no session lookup without a token') }, base);
    for (const header of [undefined, 'Basic dXNlcjpwYXNz', 'Bearer s3cr!t']) {
      await assert.rejects(authenticate(request(header)), (err) => isLadingError(err, 'UNAUTHENTICATED') && !err.details.invalidToken);
    }
  });

  it('refuses a request with two Authorization headers with BAD_REQUEST, before asking the sessions', async () => {
    const authenticate = authenticator({ authenticate: async () => assert.fail('no session lookup with two credentials') }, base);
    const req = request('Bearer tok-1', ['Authorization', 'Bearer tok-1', 'authorization', 'Bearer tok-2']);
    await assert.rejects(authenticate(req), (err) => isLadingError(err, 'BAD_REQUEST'));
  });
});
