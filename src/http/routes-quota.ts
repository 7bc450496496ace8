/**
 * Quotas over the API (`GET /api/quota`): the limits and usage that bound the caller's writes
 * at a path (their home by default), and the quotas below it they may read. Read only: quotas
 * are set by the operators (`lading quota`). Routes translate HTTP to the core's
 * `QuotaService` and back.
 */
import type { Backend } from '../core/backend.ts';
import { parsePath } from '../core/path.ts';
import type { QuotaRecord, QuotaService } from '../core/quotas.ts';
import type { Authenticate } from './authorization.ts';
import { envelope } from './envelope.ts';
import { Envelope, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface QuotaRouteDeps {
  backend: Backend;
  quotas: QuotaService;
  authenticate: Authenticate;
}

const Bound = (description: string) => Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description });

export const QuotaSchema = Type.Object({
  path: Type.String({ description: 'The collection whose tree the quota bounds (a user\'s home for a user\'s quota).' }),
  user: Type.Union([Type.String(), Type.Null()], { description: 'The user whose quota it is; null for a collection\'s.' }),
  max_bytes: Bound('Bytes allowed; null for no bound.'),
  max_objects: Bound('Data objects allowed; null for no bound.'),
  used_bytes: Type.Integer({ minimum: 0, description: 'Bytes held below the collection, what of it is in the trash included.' }),
  used_objects: Type.Integer({ minimum: 0, description: 'Data objects held below it, the trash included (collections do not count).' }),
  available_bytes: Bound('Bytes that can still be written; null for no bound.'),
}, {
  examples: [{
    path: '/lading/home/alice', user: 'alice', max_bytes: 10737418240, max_objects: null, used_bytes: 1048576, used_objects: 3, available_bytes: 10736369664,
  }],
});

const QuotaView = Envelope(Type.Object({
  path: Type.String({ description: 'The path asked about (your home when none was given).' }),
  quotas: Type.Array(QuotaSchema, { description: 'The quotas that bound a write at the path (at it and above it, outermost first), then those below it on collections you may read; [] when none applies.' }),
}), 'The quotas at a path and their usage.');

const QuotaQuery = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, description: 'A collection or data object; your home by default.' })),
}, { additionalProperties: false });

/** A quota as the API shows it. */
export function quotaData(q: QuotaRecord) {
  return {
    path: q.path, user: q.user, max_bytes: q.maxBytes, max_objects: q.maxObjects, used_bytes: q.bytes, used_objects: q.objects,
    available_bytes: q.maxBytes === null ? null : Math.max(0, q.maxBytes - q.bytes),
  };
}

export function registerQuotaRoutes(app: TypedApp, deps: QuotaRouteDeps): void {
  app.get('/api/quota', {
    schema: {
      tags: ['quota'], security: [{ bearer: [] }, { session: [] }],
      operationId: 'getQuota',
      summary: 'The quotas (limits and usage) that bound your writes at a path',
      description: 'Usage counts every data object below a quota\'s collection, those in the trash included until they are purged. A write that would pass a bound is refused with 507 QUOTA_EXCEEDED.',
      querystring: QuotaQuery,
      response: { 200: QuotaView, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => {
    await deps.authenticate(request);
    const actor = await deps.backend.actorOf(request.auth!.credential);
    const view = await deps.quotas.view(actor, request.query.path === undefined ? undefined : parsePath(request.query.path));
    return envelope({ path: view.path, quotas: view.quotas.map(quotaData) });
  });
}
