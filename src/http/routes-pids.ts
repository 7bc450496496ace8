/**
 * PID resolution: `/api/pids/<pid>` answers a handle's record in the envelope (and, with
 * `download=true`, streams the object when the record's URL points at this server), and
 * `/api/handles/<pid>` answers the Handle REST API's read shape so generic handle tooling can
 * resolve local PIDs. Records are public, as handle records are; downloads need a token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LadingError } from '../core/errors.ts';
import type { PidProvider } from '../core/ports.ts';
import { envelope } from './envelope.ts';
import { Bytes, Envelope, GetQuery, PidParams, type TypedApp, errorResponses, isSet } from './schemas.ts';
import { Type } from '@sinclair/typebox';

interface PidRouteDeps {
  pids: PidProvider;
  /** Streams a data object at an `/api/registered` URL path to the reply, authenticating first. */
  download: (request: FastifyRequest, reply: FastifyReply, registeredUrlPath: string) => Promise<FastifyReply>;
}

const PidRecord = Envelope(Type.Record(Type.String(), Type.String()), 'A PID record: URL, EUDAT/CHECKSUM, EUDAT/CHECKSUM_TIMESTAMP, EUDAT/ROR.');

const HandleValue = Type.Object({
  index: Type.Integer(), type: Type.String(), data: Type.Object({ format: Type.Literal('string'), value: Type.String() }), ttl: Type.Integer(),
});
const HandleRecord = Type.Object({ responseCode: Type.Literal(1), handle: Type.String(), values: Type.Array(HandleValue) }, { description: 'The Handle REST API\'s read shape.' });
const HandleMissing = Type.Object({ responseCode: Type.Literal(100), handle: Type.String() }, { description: 'Handle not found (Handle REST API responseCode 100).' });

/** The PID the route's wildcard names (already percent-decoded by the router). Rejects with `BAD_REQUEST`. */
function handleOf(params: { '*': string }): string {
  const handle = params['*'];
  if (!/^[^/\s]+\/[^\s]+$/.test(handle)) throw new LadingError('BAD_REQUEST', `'${handle}' is not a PID of the form <prefix>/<suffix>.`);
  return handle;
}

export function registerPidRoutes(app: TypedApp, deps: PidRouteDeps): void {
  const resolve = async (handle: string) => {
    const values = await deps.pids.resolve(handle);
    if (!values) throw new LadingError('NOT_FOUND', `The PID ${handle} is not registered here.`);
    return values;
  };

  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/pids/*',
    exposeHeadRoute: false,
    schema: {
      tags: ['pids'], operationId: 'resolvePid', summary: 'Resolve a PID to its record; download=true streams the object it points at (with a token)',
      params: PidParams, querystring: GetQuery,
      response: {
        200: {
          description: 'The PID record; with download=true, the bytes of the data object it points at.',
          content: { 'application/json': { schema: PidRecord }, 'application/octet-stream': { schema: Bytes } },
        },
        206: { description: 'The requested range (download=true with Range).', content: { 'application/octet-stream': { schema: Bytes } } },
        304: Type.Null({ description: 'Not modified (download=true with If-None-Match or If-Modified-Since).' }),
        ...errorResponses(401, 403, 404, 412, 416),
      },
    },
    handler: async (request, reply) => {
      const handle = handleOf(request.params);
      const values = await resolve(handle);
      if (isSet(request.query.download)) {
        const url = values.URL ?? '';
        const at = url.indexOf('/api/registered/');
        if (at < 0) throw new LadingError('NOT_FOUND', `The PID ${handle} points elsewhere (${url}); download it from there.`);
        return deps.download(request, reply, url.slice(at));
      }
      // NOTE: to a HEAD request, Node sends the headers of this answer without its body.
      return envelope(values);
    },
  });

  app.get('/api/handles/*', {
    schema: {
      tags: ['pids'], operationId: 'readHandle', summary: 'Handle REST API read shape of a local PID',
      params: PidParams,
      response: { 200: HandleRecord, 404: HandleMissing, ...errorResponses() },
    },
  }, async (request, reply) => {
    const handle = handleOf(request.params);
    const values = await deps.pids.resolve(handle);
    if (!values) return reply.code(404).send({ responseCode: 100 as const, handle });
    let next = 5;
    const index: Record<string, number> = { URL: 1, 'EUDAT/CHECKSUM': 2, 'EUDAT/CHECKSUM_TIMESTAMP': 3, 'EUDAT/ROR': 4 };
    return {
      responseCode: 1 as const,
      handle,
      values: Object.entries(values).map(([type, value]) => ({
        index: index[type] ?? next++, type, data: { format: 'string' as const, value }, ttl: 86400,
      })),
    };
  });
}
