/**
 * The OpenAPI document and its viewer, registered lazily (`src/http/lazy-openapi.ts`), against
 * `@fastify/swagger` and `@fastify/swagger-ui` registered as such on the same routes: the same
 * route table, the same document (JSON and YAML), and the same answers under `/api/docs`, for
 * routes of every kind the app has (schemas with and without a `$id`, HEAD routes, hidden
 * routes, routes in a plugin with a prefix, routes that stream their body).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import { openapiOptions } from '../../src/http/openapi.ts';
import { registerOpenApi } from '../../src/http/lazy-openapi.ts';

const VIEWER = { routePrefix: '/api/docs', uiConfig: { url: '/api/specs' } };

function routes(app: FastifyInstance): void {
  const Node = Type.Recursive((self) => Type.Object({ name: Type.String(), children: Type.Array(self) }), { $id: 'Node' });
  app.get('/api/status', { schema: { summary: 'Liveness check', tags: ['status'], response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => ({ ok: true }));
  app.get('/api/specs', { schema: { hide: true } }, async () => app.swagger());
  app.route({
    method: ['GET', 'HEAD'], url: '/api/registered/*',
    schema: { tags: ['registered'], operationId: 'getEntity', querystring: Type.Object({ download: Type.Optional(Type.Boolean()) }), response: { 200: Node } },
    handler: async () => ({ name: 'a', children: [] }),
  });
  app.put('/api/registered/*', { schema: { tags: ['registered'], consumes: ['application/octet-stream', 'multipart/form-data'] } }, async () => ({}));
  app.post('/api/registered', { schema: { tags: ['registered'], body: Type.Object({ path: Type.String() }) } }, async () => ({}));
  void app.register(async (scope) => {
    scope.get('/cacert', { schema: { tags: ['ca'], response: { 200: Type.String() } } }, async () => 'pem');
  }, { prefix: '/api/ca' });
}

async function build(lazy: boolean): Promise<FastifyInstance> {
  const app = Fastify();
  if (lazy) {
    await registerOpenApi(app, openapiOptions('1.2.3'), VIEWER);
  } else {
    await app.register(swagger, openapiOptions('1.2.3'));
    await app.register(swaggerUi, VIEWER as never);
  }
  routes(app);
  await app.ready();
  return app;
}

const REQUESTS: [string, string, Record<string, string>?][] = [
  ['GET', '/api/specs'], ['GET', '/api/docs'], ['GET', '/api/docs/'], ['HEAD', '/api/docs/'], ['GET', '/api/docs/json'], ['GET', '/api/docs/yaml'],
  ['GET', '/api/docs/static/index.html'], ['GET', '/api/docs/static/swagger-initializer.js'], ['GET', '/api/docs/static/swagger-ui.css'],
  ['HEAD', '/api/docs/static/swagger-ui-bundle.js'], ['GET', '/api/docs/static/swagger-ui.css', { range: 'bytes=10-99' }],
  ['GET', '/api/docs/static/'], ['GET', '/api/docs/static/missing.js'], ['GET', '/api/docs/static/../package.json'], ['GET', '/api/docs/missing'],
];

describe('the OpenAPI document and viewer, loaded at first use', () => {
  it('have the route table, document and answers of the plugins registered as such', async () => {
    const eager = await build(false);
    const lazy = await build(true);
    try {
      assert.equal(lazy.printRoutes({ commonPrefix: false }), eager.printRoutes({ commonPrefix: false }));
      // NOTE: the viewer first, so that loading it before the document is covered too.
      for (const [method, url, headers] of [...REQUESTS.slice(1), REQUESTS[0]!]) {
        const [a, b] = await Promise.all([eager, lazy].map((app) => app.inject({ method: method as 'GET', url, headers })));
        const shown = (r: typeof a) => ({ status: r!.statusCode, headers: { ...r!.headers, date: undefined }, body: r!.body });
        assert.deepEqual(shown(b), shown(a), `${method} ${url}`);
      }
      assert.deepEqual(lazy.swagger(), eager.swagger());
      assert.equal(lazy.swagger({ yaml: true }), eager.swagger({ yaml: true }));
    } finally {
      await Promise.all([eager.close(), lazy.close()]);
    }
  });

  it('as when registered, the document cannot be asked for before the app is ready', async () => {
    const app = Fastify();
    await registerOpenApi(app, openapiOptions('1.2.3'), VIEWER);
    routes(app);
    assert.throws(() => app.swagger(), /must be called after .ready\(\)/);
    await app.ready();
    assert.ok((app.swagger() as { paths: object }).paths);
    await app.close();
  });
});
