/**
 * `/api/status` answers with a text written once (`routes-status.ts`) instead of serializing by
 * its schema: that text, its type and its length must be those Fastify's serializer writes for
 * the route's schema, as for every other route.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { envelope } from '../../src/http/envelope.ts';
import { StatusResult } from '../../src/http/schemas.ts';
import { type TestServer, startTestServer } from '../helpers/server.ts';

describe('GET /api/status', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer(); });
  after(() => s.stop());

  it('says what the schema serializer would say', async () => {
    const reference = Fastify();
    reference.get('/api/status', { schema: { response: { 200: StatusResult } } }, async () => envelope('Server is alive'));
    for (const method of ['GET', 'HEAD'] as const) {
      const expected = await reference.inject({ method, url: '/api/status' });
      const res = await fetch(`${s.url}/api/status`, { method });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), expected.body, method);
      assert.equal(res.headers.get('content-type'), expected.headers['content-type'], method);
      assert.equal(res.headers.get('content-length'), String(expected.headers['content-length']), method);
    }
    await reference.close();
  });
});
