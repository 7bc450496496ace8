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
import { Envelope, GetQuery, type TypedApp, errorResponses, isSet } from './schemas.ts';
import { Type } from '@sinclair/typebox';

interface PidRouteDeps {
  pids: PidProvider;
  /** Streams a data object at an `/api/registered` URL path to the reply, authenticating first. */
  download: (request: FastifyRequest, reply: FastifyReply, registeredUrlPath: string) => Promise<FastifyReply>;
}

const PidRecord = Envelope(Type.Record(Type.String(), Type.String()), 'A PID record: URL, EUDAT/CHECKSUM, EUDAT/CHECKSUM_TIMESTAMP, EUDAT/ROR.');

function handleOf(request: FastifyRequest, prefix: string): string {
  const raw = (request.raw.url ?? '').split('?', 1)[0]!.slice(prefix.length + 1);
  let handle: string;
  try {
    handle = decodeURIComponent(raw);
  } catch (cause) {
    throw new LadingError('BAD_REQUEST', 'The PID is not valid percent-encoded UTF-8.', { cause });
  }
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
      tags: ['pids'], summary: 'Resolve a PID to its record; download=true streams the object it points at',
      querystring: GetQuery, response: { 200: PidRecord, ...errorResponses },
    },
    handler: async (request, reply) => {
      const handle = handleOf(request, '/api/pids');
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
    schema: { tags: ['pids'], summary: 'Handle REST API read shape of a local PID', hide: false },
  }, async (request, reply) => {
    const handle = handleOf(request, '/api/handles');
    const values = await deps.pids.resolve(handle);
    if (!values) return reply.code(404).send({ responseCode: 100, handle });
    let next = 5;
    const index: Record<string, number> = { URL: 1, 'EUDAT/CHECKSUM': 2, 'EUDAT/CHECKSUM_TIMESTAMP': 3, 'EUDAT/ROR': 4 };
    return {
      responseCode: 1,
      handle,
      values: Object.entries(values).map(([type, value]) => ({
        index: index[type] ?? next++, type, data: { format: 'string', value }, ttl: 86400,
      })),
    };
  });
}
