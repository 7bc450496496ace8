/** Liveness (`/api/status`), readiness (`/api/ready`) and the OpenAPI document (`/api/specs`). No authentication. */
import type { Static } from '@sinclair/typebox';
import type { PublicBase } from '../core/public-base.ts';
import { envelope } from './envelope.ts';
import { ReadyResult, StatusResult, type TypedApp, errorResponses } from './schemas.ts';

// NOTE: the answer to liveness, written once: it is a fresh node's first request (load
// balancers ask it every few seconds), and serializing it by its schema would compile the
// schema serializer (fast-json-stringify with Ajv, ~110 modules) for it. The text is the one
// that serializer writes (test/http/status.test.ts); the schema stays for the document.
const ALIVE = JSON.stringify(envelope('Server is alive'));
const READY = JSON.stringify(envelope('ready'));

/** What `/api/ready` asks: resolves when the node can serve, rejects with `UNAVAILABLE` otherwise (see `core/readiness.ts`). */
export interface ReadinessCheck {
  check(): Promise<void>;
}

export function registerStatusRoutes(app: TypedApp, publicBase: PublicBase, readiness: ReadinessCheck | null = null): void {
  app.get('/api/status', {
    schema: { summary: 'Liveness check', tags: ['status'], response: { 200: StatusResult, ...errorResponses() } },
  }, async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    // NOTE: a string with a JSON type is sent as it is, not serialized again (hence the cast).
    reply.type('application/json; charset=utf-8');
    return ALIVE as unknown as Static<typeof StatusResult>;
  });

  if (readiness) {
    app.get('/api/ready', {
      schema: {
        summary: 'Readiness check',
        description: 'For load balancers: 200 when the catalog answers a trivial query and the store a cheap request (a stat of its directory, a HeadBucket), each within 2 s; 503 with Retry-After, naming what failed, otherwise. The answer is reused for one second. Unlike /api/status (liveness), it fails while a dependency cannot be reached.',
        tags: ['status'], response: { 200: ReadyResult, ...errorResponses() },
      },
    }, async (_request, reply) => {
      // NOTE: never cached, as every answer: startAnswer's Cache-Control says so.
      await readiness.check();
      reply.type('application/json; charset=utf-8');
      return READY as unknown as Static<typeof ReadyResult>;
    });
  }

  // NOTE: the document names the server it was asked of, unless a public URL is configured.
  app.get('/api/specs', { schema: { hide: true } }, async (request) => ({ ...app.swagger(), servers: [{ url: publicBase.forRequest(request) }] }));
}
