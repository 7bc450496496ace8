/**
 * The one error table seen from outside it: titles of errors known only by their status (the
 * embedded OpenID Provider's), and the provider's error pages as clients get them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS_BY_CODE, errorPage, titleOfStatus } from '../../src/http/errors.ts';
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
