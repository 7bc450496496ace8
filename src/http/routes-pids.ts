/**
 * PID resolution: `/api/pids/<pid>` answers a handle's record in the envelope (and, with
 * `download=true`, streams the object when the record's URL points at this server) — or, to a
 * client that prefers HTML (a browser), the PID's landing page — and `/api/handles/<pid>`
 * answers the Handle REST API's read shape so generic handle tooling can resolve local PIDs.
 * Records are public, as handle records are; downloads need a token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../core/backend.ts';
import { LadingError } from '../core/errors.ts';
import type { Path } from '../core/path.ts';
import type { PidProvider } from '../core/ports.ts';
import type { Publishing } from '../core/publishing.ts';
import type { Trash } from '../core/trash.ts';
import { type Urls, encodePath, envelope, publicLinkOf } from './envelope.ts';
import { PRIVATE_NO_STORE } from './caching.ts';
import { preferredType } from './negotiation.ts';
import { type DownloadOffer, PID_PAGE_HEADERS, renderElsewherePage, renderPidPage, renderTombstonePage, renderUnknownPidPage } from './pid-page.ts';
import { entityTarget } from './target.ts';
import { Bytes, Envelope, ErrorEnvelope, GetQuery, PidParams, type TypedApp, errorResponses } from './schemas.ts';
import { downloadMode } from './archive-download.ts';
import { Type } from './typebox.ts';

interface PidRouteDeps {
  pids: PidProvider;
  /** Streams a data object at an `/api/registered` URL path to the reply, authenticating first. */
  /** Streams the data object at a path to the reply, authenticating first. */
  download: (request: FastifyRequest, reply: FastifyReply, path: Path) => Promise<FastifyReply>;
  /** What a landing page may show, and whether its viewer may download. */
  publishing: Pick<Publishing, 'pidSubject'>;
  urls: (request: FastifyRequest) => Urls;
  /**
   * Who views a landing page: the user of the web app's session cookie (or of a token), else
   * the anonymous actor; the page offers the download to whoever may read the object. Sets
   * `request.auth` when the request is signed in.
   */
  viewerOf: (request: FastifyRequest) => Promise<Actor>;
  /** Where a browser signs in (`/auth/signin`, which takes `next`); null where it cannot. */
  signIn?: string | null;
  /** Tombstones of withdrawn entities; none when absent. */
  trash: Pick<Trash, 'tombstone'> | null;
}

/** The URL prefixes of entities here that a PID record's URL may name. */
const ENTITY_PREFIXES = ['/api/registered', '/api/public'];

/** The entity paths a record's URL may name here (none when it names none). */
function candidatePaths(url: string | null): Path[] {
  if (url === null) return [];
  const paths: Path[] = [];
  for (const prefix of ENTITY_PREFIXES) {
    const at = url.indexOf(`${prefix}/`);
    if (at < 0) continue;
    try {
      paths.push(entityTarget(prefix, url.slice(at)).path);
    } catch {
      // Not a path of ours after all: the page says where the record points.
    }
  }
  return paths;
}

const PidRecord = Envelope(Type.Record(Type.String(), Type.String()), 'A PID record: URL, EUDAT/CHECKSUM, EUDAT/CHECKSUM_TIMESTAMP, EUDAT/ROR.');

const Html = Type.String({ description: 'An HTML page, for clients that prefer text/html (browsers).' });

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

  const landingPage = async (request: FastifyRequest, reply: FastifyReply, handle: string) => {
    const base = deps.urls(request).base;
    const encoded = handle.split('/').map(encodeURIComponent).join('/');
    const recordHref = `${base}/api/handles/${encoded}`;
    const values = await deps.pids.resolve(handle);
    if (!values) return reply.code(404).headers(PID_PAGE_HEADERS).send(renderUnknownPidPage(handle));
    const tombstone = await deps.trash?.tombstone(handle);
    if (tombstone) {
      const { entity, entry } = tombstone;
      return reply.headers(PID_PAGE_HEADERS).send(renderTombstonePage({
        handle, kind: entity.kind, name: entity.name, owner: entity.owner, createdAt: entity.createdAt, state: entry.state,
        withdrawnAt: entry.trashedAt, withdrawnBy: entry.trashedBy, reason: entry.reason,
        removedAt: entry.removedAt, removedBy: entry.removedBy, removalReason: entry.removalReason, recordHref,
      }));
    }
    const url = values.URL ?? null;
    const viewer = await deps.viewerOf(request);
    const subject = await deps.publishing.pidSubject(handle, candidatePaths(url), viewer);
    if (!subject) return reply.headers(PID_PAGE_HEADERS).send(renderElsewherePage({ handle, url, recordHref }));
    const { entity, published, viewerMayRead } = subject;
    const publicUrl = publicLinkOf({ base }, entity.path);
    let download: DownloadOffer;
    if (entity.kind === 'collection') download = { kind: 'none', reason: published ? '' : 'This collection is not public. Its owner can publish it.' };
    else if (published) download = { kind: 'link', href: `${publicUrl}?download=true` };
    else if (viewerMayRead) download = { kind: 'link', href: `${base}/api/pids/${encoded}?download=true` };
    else if (!request.auth && deps.signIn) {
      // NOTE: back to this page once signed in, where the download is offered if the account may read it.
      download = { kind: 'signin', href: `${deps.signIn}?${new URLSearchParams({ next: `/api/pids/${encoded}` }).toString()}`, reason: 'This data object is not public. If you have access to it, sign in to download it.' };
    } else if (request.auth) download = { kind: 'none', reason: `This data object is not public, and ${viewer.user} has no access to it. Ask its owner for access, or to publish it.` };
    else download = { kind: 'none', reason: `This data object is not public. Users with access download it with their token: GET ${base}/api/pids/${handle}?download=true, or ask its owner to publish it.` };
    reply.headers(PID_PAGE_HEADERS);
    // NOTE: the page of what is not published offers its download by what the viewer may read.
    if (!published) reply.header('cache-control', PRIVATE_NO_STORE);
    return reply.send(renderPidPage({
      handle, kind: entity.kind, name: entity.name, owner: entity.owner, createdAt: entity.createdAt, modifiedAt: entity.modifiedAt,
      ...(entity.kind === 'dataobject' ? { size: entity.size, checksum: entity.checksum } : {}),
      download, listing: entity.kind === 'collection' && published ? `${base}/api/public${encodePath(entity.path)}/` : null, recordHref,
    }));
  };

  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/pids/*',
    exposeHeadRoute: false,
    schema: {
      tags: ['pids'], operationId: 'resolvePid', summary: 'Resolve a PID to its record; download=true streams the object it points at (with a token); browsers get its landing page',
      description: 'Content negotiation by Accept: a client that prefers text/html to application/json (a browser) gets the landing page — name, size, checksum, dates, owner, the PID with a copy button, and a download button when the object is published; for a withdrawn entity (trashed, purged, taken down) its tombstone: withdrawn when, by whom and why — or, for an unknown PID, an HTML 404 page; every other client (curl\'s */* included) gets the JSON envelope (a withdrawn entity\'s record carries WITHDRAWN/STATE, WITHDRAWN/AT, WITHDRAWN/BY, WITHDRAWN/REASON and, once its bytes are gone, WITHDRAWN/REMOVED_AT, WITHDRAWN/REMOVED_BY, WITHDRAWN/REMOVAL_REASON). With download=true, 410 for a withdrawn entity.',
      params: PidParams, querystring: GetQuery,
      response: {
        200: {
          description: 'The PID record; with download=true, the bytes of the data object it points at; to a browser, the landing page.',
          content: { 'application/json': { schema: PidRecord }, 'application/octet-stream': { schema: Bytes }, 'text/html': { schema: Html } },
        },
        206: { description: 'The requested range (download=true with Range).', content: { 'application/octet-stream': { schema: Bytes } } },
        304: Type.Null({ description: 'Not modified (download=true with If-None-Match or If-Modified-Since).' }),
        ...errorResponses(401, 403, 410, 412, 416),
        404: {
          description: 'The PID is not registered here (or, with download=true, points elsewhere): the error envelope, or an HTML page for a browser.',
          content: { 'application/json': { schema: ErrorEnvelope }, 'text/html': { schema: Html } },
        },
      },
    },
    handler: async (request, reply) => {
      const handle = handleOf(request.params);
      reply.header('Vary', 'Accept');
      if (downloadMode(request.query.download) === null && preferredType(request.headers.accept, ['application/json', 'text/html']) === 'text/html') {
        return landingPage(request, reply, handle);
      }
      const values = await resolve(handle);
      if (downloadMode(request.query.download) !== null) {
        if (await deps.trash?.tombstone(handle)) throw new LadingError('GONE', `The PID ${handle} names something that was withdrawn; see its landing page.`);
        const url = values.URL ?? '';
        const [path] = candidatePaths(url);
        if (path === undefined) throw new LadingError('NOT_FOUND', `The PID ${handle} points elsewhere (${url}); download it from there.`);
        return deps.download(request, reply, path);
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
