/** Liveness (`/api/status`) and the OpenAPI document (`/api/specs`). No authentication. */
import type { PublicBase } from '../core/public-base.ts';
import { envelope } from './envelope.ts';
import { StatusResult, type TypedApp, errorResponses } from './schemas.ts';

export function registerStatusRoutes(app: TypedApp, publicBase: PublicBase): void {
  app.get('/api/status', {
    schema: { summary: 'Liveness check', tags: ['status'], response: { 200: StatusResult, ...errorResponses() } },
  }, async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    return envelope('Server is alive');
  });

  // NOTE: the document names the server it was asked of, unless a public URL is configured.
  app.get('/api/specs', { schema: { hide: true } }, async (request) => ({ ...app.swagger(), servers: [{ url: publicBase.forRequest(request) }] }));
}
