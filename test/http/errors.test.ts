/**
 * The one error table seen from outside it: titles of errors known only by their status (the
 * embedded OpenID Provider's), the provider's error pages as clients get them, and the
 * Retry-After of a dependency that is down.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { LadingError } from '../../src/core/errors.ts';
import { STATUS_BY_CODE, UNAVAILABLE_RETRY_AFTER, errorPage, registerErrorHandlers, titleOfStatus } from '../../src/http/errors.ts';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

describe('titles of bare statuses', () => {
  it('are the general code\'s title of each status', () => {
    assert.equal(titleOfStatus(400), 'Bad request');
    assert.equal(titleOfStatus(401), 'Unauthorized');
    assert.equal(titleOfStatus(403), 'Forbidden');
    assert.equal(titleOfStatus(404), 'Not found');
    assert.equal(titleOfStatus(429), 'Too many requests');
    assert.equal(titleOfStatus(500), 'Internal server error');
    assert.equal(titleOfStatus(503), 'Service unavailable');
  });

  it('fall back to the internal error\'s title for a status no code has', () => {
    assert.equal(titleOfStatus(502), STATUS_BY_CODE.INTERNAL.title);
  });

  it('title the error envelope of a page', () => {
    const page = errorPage(401, 'no access token provided');
    assert.equal(page.contentType, 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(page.body), {
      Meta: { data_type: "<class 'NoneType'>", elements: 0, errors: 1, status: 401 },
      Response: { data: null, errors: [{ Unauthorized: 'no access token provided' }] },
    });
  });
});

describe('the embedded provider\'s error pages', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  it('are the error envelope, titled from the one table', async () => {
    const res = await fetch(`${s.url}/oidc/auth`);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const body = await json(res);
    assert.deepEqual(body.Meta, { data_type: "<class 'NoneType'>", elements: 0, errors: 1, status: 400 });
    assert.deepEqual(Object.keys(body.Response.errors![0]!), [STATUS_BY_CODE.BAD_REQUEST.title]);
    assert.match(Object.values(body.Response.errors![0]!)[0]!, /client_id/);
  });
});

describe('a dependency that is down', () => {
  it('is answered 503 in the envelope with Retry-After, whatever the route', async () => {
    const app = Fastify();
    registerErrorHandlers(app);
    app.get('/down', async () => { throw new LadingError('UNAVAILABLE', 'The catalog (PostgreSQL) cannot be reached right now; retry later.'); });
    app.get('/named', async () => { throw new LadingError('UNAVAILABLE', 'Back soon.', { details: { retryAfter: 30 } }); });
    app.get('/other', async () => { throw new LadingError('INTERNAL', 'An unexpected error occurred.'); });
    try {
      const down = await app.inject({ url: '/down' });
      assert.equal(down.statusCode, 503);
      assert.equal(down.headers['retry-after'], String(UNAVAILABLE_RETRY_AFTER));
      assert.ok(UNAVAILABLE_RETRY_AFTER > 0 && UNAVAILABLE_RETRY_AFTER <= 30);
      assert.deepEqual(down.json().Response, { data: null, errors: [{ 'Service unavailable': 'The catalog (PostgreSQL) cannot be reached right now; retry later.' }] });
      assert.equal((await app.inject({ url: '/named' })).headers['retry-after'], '30', 'the time the error names');
      assert.equal((await app.inject({ url: '/other' })).headers['retry-after'], undefined, 'none on other errors');
    } finally {
      await app.close();
    }
  });
});
