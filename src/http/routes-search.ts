/**
 * Search over the API: `GET /api/search` finds entities below a collection by name, metadata
 * and kind, among what the caller may read; `GET /api/recent` lists the caller's latest
 * uploads. Both answer a listing's entity records (spec 2.2), paged by an opaque
 * `continuation_token`. Routes translate HTTP to the core's `Search` and back; the service
 * decides what the caller sees, and paths come only through `core/path.ts`.
 */
import type { FastifyRequest } from 'fastify';
import type { Backend } from '../core/backend.ts';
import { STORED_NAME_PATTERN, parsePath } from '../core/path.ts';
import { MAX_NAME_PATTERN, SEARCH_MAX_PAGE, SEARCH_PAGE, type Search, type SearchPage } from '../core/search.ts';
import type { Entity } from '../core/types.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { type Urls, entityRecord, envelope } from './envelope.ts';
import { EntityRecord, PagedEnvelope, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface SearchRouteDeps {
  backend: Backend;
  search: Search;
  urls: (request: FastifyRequest) => Urls;
  authenticate: Authenticate;
}

const Limit = Type.String({
  pattern: '^(1000|[1-9][0-9]{0,2})$', examples: ['100'], description: `Entities per page, 1 to ${SEARCH_MAX_PAGE} (default ${SEARCH_PAGE}).`,
});
const After = Type.String({ minLength: 1, maxLength: 8192, description: 'The continuation_token of the previous page.' });

const SearchQuery = Type.Object({
  under: Type.Optional(Type.String({
    minLength: 1, maxLength: 4096, examples: ['/lading/home/alice'],
    description: 'The collection searched, with everything below it (not itself). Default `/`: everything you may read.',
  })),
  name: Type.Optional(Type.String({
    maxLength: MAX_NAME_PATTERN * 4, examples: ['survey', '*.csv'],
    description: 'Part of the name, ignoring the case of ASCII letters; with `*` (any run of characters) or `?` (one character), a pattern the whole name must match.',
  })),
  attribute: Type.Optional(Type.String({ maxLength: 2700, examples: ['project'], description: 'Only entities carrying an AVU with this attribute (exactly).' })),
  value: Type.Optional(Type.String({ maxLength: 2700, examples: ['alpha'], description: 'With attribute: only AVUs with this value (exactly).' })),
  type: Type.Optional(Type.Union([Type.Literal('dataobject'), Type.Literal('collection')], { description: 'Only data objects, or only collections.' })),
  limit: Type.Optional(Limit),
  after: Type.Optional(After),
}, { additionalProperties: false });

const RecentQuery = Type.Object({ limit: Type.Optional(Limit), after: Type.Optional(After) }, { additionalProperties: false });

// NOTE: a record's key is the entity's name; see `EntityList` in schemas.ts for its pattern.
const Found = Type.Record(Type.String({ pattern: STORED_NAME_PATTERN }), EntityRecord);
const SearchList = PagedEnvelope(Found, 'Entity records (spec 2.2, as in a listing: `path` is the collection holding the entity), in byte order of their paths.');
const RecentList = PagedEnvelope(Found, 'Entity records (spec 2.2, as in a listing) of your data objects, the most recently changed first.');

export function registerSearchRoutes(app: TypedApp, deps: SearchRouteDeps): void {
  const common = { tags: ['search'], security: [{ bearer: [] }, { session: [] }] as Record<string, string[]>[] };
  const actorOf = async (request: FastifyRequest) => {
    await deps.authenticate(request);
    return deps.backend.actorOf(request.auth!.credential, viaOf(request));
  };
  const paged = (request: FastifyRequest, page: SearchPage<Entity>) => {
    const urls = deps.urls(request);
    const answer = envelope(page.entities.map((e) => entityRecord(urls, e)));
    return { ...answer, Meta: { ...answer.Meta, continuation_token: page.next } };
  };

  app.get('/api/search', {
    schema: {
      ...common, operationId: 'search', querystring: SearchQuery,
      summary: 'Find data objects and collections below a collection by name, metadata (attribute, value) and type, among what you may read',
      description: 'Criteria combine; with none, everything you may read below `under`. What you may read: your home, what you, your groups or every user (`public`) hold read, write or own on (and everything below it); an admin reads everything. Nothing else is found or counted. Paged in byte order of paths. 404 (or 400 for a data object) when you may read `under` and it is no collection; a collection you may not read is searched for what below it you may.',
      response: { 200: SearchList, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    const q = request.query;
    return paged(request, await deps.search.find(actor, {
      under: q.under === undefined ? null : parsePath(q.under),
      name: q.name ?? null, attribute: q.attribute ?? null, value: q.value ?? null, kind: q.type ?? null,
      ...(q.limit === undefined ? {} : { limit: Number(q.limit) }), after: q.after ?? null,
    }));
  });

  app.get('/api/recent', {
    schema: {
      ...common, operationId: 'recentUploads', querystring: RecentQuery,
      summary: 'Your latest uploads: the data objects you own, the most recently changed first, paged',
      description: 'A page may hold fewer entities than `limit` when some of your objects are no longer readable to you; `continuation_token` is null only after the last page.',
      response: { 200: RecentList, ...errorResponses(401, 403) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    const q = request.query;
    return paged(request, await deps.search.recent(actor, { ...(q.limit === undefined ? {} : { limit: Number(q.limit) }), after: q.after ?? null }));
  });
}
