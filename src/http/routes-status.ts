/** Liveness (`/api/status`) and the OpenAPI document (`/api/specs`). No authentication. */
import { envelope } from './envelope.ts';
import { StatusResult, type TypedApp } from './schemas.ts';

export function registerStatusRoutes(app: TypedApp): void {
  app.get('/api/status', {
    schema: { summary: 'Liveness check', tags: ['status'], response: { 200: StatusResult } },
  }, async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    return envelope('Server is alive');
  });

  app.get('/api/specs', { schema: { hide: true } }, async () => app.swagger());
}
