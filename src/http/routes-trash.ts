/**
 * The trash over the API (`/api/trash`): an owner moves an entity to it, lists it, restores
 * an entry, purges one or empties it. Routes translate HTTP to the core's `Trash` and back;
 * the service decides every permission.
 */
import type { FastifyRequest } from 'fastify';
import type { Backend } from '../core/backend.ts';
import { LadingError } from '../core/errors.ts';
import { parsePath } from '../core/path.ts';
import type { Trash } from '../core/trash.ts';
import type { Entity, TrashEntry } from '../core/types.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { type Urls, envelope, linkOf, pidLinkOf } from './envelope.ts';
import { Envelope, PagedEnvelope, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface TrashRouteDeps {
  backend: Backend;
  trash: Trash;
  urls: (request: FastifyRequest) => Urls;
  authenticate: Authenticate;
}

const TRASH = '/api/trash';
/** Entries in one page of `GET /api/trash` by default, and at most. */
const PAGE = 100;
const MAX_PAGE = 1000;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

export const TrashEntrySchema = Type.Object({
  id: Type.String({ description: 'The entry\'s id: the entity\'s stable id.' }),
  path: Type.String({ description: 'Where the entity stood when it was trashed (where a restore puts it back).' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('dataobject'), Type.Literal('collection')]),
  owner: Type.String(),
  size: Type.Integer({ minimum: 0, description: 'Its size in bytes: a data object\'s, or the sum of a collection\'s data objects\'.' }),
  PID: Nullable(Type.String(), 'Its PID, which resolves to a tombstone while it is withdrawn; null when it has none.'),
  tombstone: Nullable(Type.String(), 'The PID\'s landing page (the tombstone); null without a PID.'),
  state: Type.Union([Type.Literal('trashed'), Type.Literal('purged'), Type.Literal('taken_down')], {
    description: 'trashed: in the trash with its bytes, restorable; purged: its bytes were removed (trash emptied, or trash.retention passed); taken_down: an admin removed its bytes.',
  }),
  trashed_at: Type.String({ format: 'date-time' }),
  trashed_by: Type.String(),
  reason: Nullable(Type.String(), 'Why it was trashed, when said.'),
  purge_after: Nullable(Type.String({ format: 'date-time' }), 'When the periodic sweep purges it (trashed_at + trash.retention); null once its bytes are gone.'),
  removed_at: Nullable(Type.String({ format: 'date-time' }), 'When its bytes were removed; null while trashed.'),
  removed_by: Nullable(Type.String(), 'Who removed them (`lading` for the retention sweep).'),
  removal_reason: Nullable(Type.String(), 'Why (a takedown\'s reason).'),
}, {
  examples: [{
    id: '3f1c2b9e-6a4d-4f7e-9b1a-2c3d4e5f6a7b', path: '/lading/home/alice/draft.csv', name: 'draft.csv', kind: 'dataobject', owner: 'alice', size: 18211,
    PID: '21.T99999/3f1c2b9e-6a4d-4f7e-9b1a-2c3d4e5f6a7b', tombstone: 'https://staging.example.org/api/pids/21.T99999/3f1c2b9e-6a4d-4f7e-9b1a-2c3d4e5f6a7b',
    state: 'trashed', trashed_at: '2026-11-27T12:00:00.000Z', trashed_by: 'alice', reason: 'superseded', purge_after: '2026-12-27T12:00:00.000Z',
    removed_at: null, removed_by: null, removal_reason: null,
  }],
});

const TrashResult = Envelope(TrashEntrySchema, 'A trash entry.');
const TrashList = PagedEnvelope(TrashEntrySchema, 'Your trash, newest first.');
const RestoredResult = Envelope(Type.Object({
  id: Type.String(),
  path: Type.String({ description: 'Where it now stands.' }),
  kind: Type.Union([Type.Literal('dataobject'), Type.Literal('collection')]),
  link: Type.String({ description: 'Its URL under /api/registered.' }),
}), 'The restored entity.');
const EmptiedResult = Envelope(Type.Object({ purged: Type.Integer({ minimum: 0, description: 'How many entries were purged.' }) }), 'The trash was emptied.');

const TrashBody = Type.Object({
  path: Type.String({ minLength: 1, description: 'The data object or collection to trash (a collection goes with everything in it).' }),
  reason: Type.Optional(Type.String({ maxLength: 1000, description: 'Why, shown on the PID\'s tombstone.' })),
}, { additionalProperties: false, examples: [{ path: '/lading/home/alice/draft.csv', reason: 'superseded' }] });
const RestoreBody = Type.Object({
  newname: Type.Optional(Type.String({ minLength: 1, description: 'Restore beside the original path under this name (when the original is taken).' })),
}, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'The entry\'s id.' }) });
const ListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$', examples: ['100'], description: `Entries per page, 1 to ${MAX_PAGE} (default ${PAGE}).` })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The continuation_token of the previous page.' })),
}, { additionalProperties: false });

/** Where a page of the trash starts: the continuation token of the page before (`<ms>_<id>`). `BAD_REQUEST`. */
function pageAfter(token: string): { at: Date; id: string } {
  const m = /^(\d{1,15})_(.+)$/.exec(token);
  if (!m) throw new LadingError('BAD_REQUEST', `'${token}' is not a continuation_token of GET /api/trash.`);
  return { at: new Date(Number(m[1])), id: m[2]! };
}

export function registerTrashRoutes(app: TypedApp, deps: TrashRouteDeps): void {
  const { backend, trash } = deps;
  const common = { tags: ['trash'], security: [{ bearer: [] }, { session: [] }] as Record<string, string[]>[] };
  const actorOf = async (request: FastifyRequest) => {
    await deps.authenticate(request);
    return backend.actorOf(request.auth!.credential, viaOf(request));
  };
  const entryData = (request: FastifyRequest, e: TrashEntry) => ({
    id: e.id, path: e.path, name: e.name, kind: e.kind, owner: e.owner, size: e.size, PID: e.pid,
    tombstone: e.pid === null ? null : pidLinkOf(deps.urls(request).base, e.pid),
    state: e.state, trashed_at: e.trashedAt.toISOString(), trashed_by: e.trashedBy, reason: e.reason,
    purge_after: e.state === 'trashed' ? new Date(e.trashedAt.getTime() + trash.retentionSeconds * 1000).toISOString() : null,
    removed_at: e.removedAt?.toISOString() ?? null, removed_by: e.removedBy, removal_reason: e.removalReason,
  });
  const restoredData = (request: FastifyRequest, e: Entity) => ({ id: e.id, path: e.path, kind: e.kind, link: linkOf(deps.urls(request), e.path) });

  app.post(TRASH, {
    schema: {
      ...common, operationId: 'trashEntity', body: TrashBody,
      summary: 'Move a data object or a collection (with everything in it) to the trash (needs own)',
      description: 'It leaves listings, /api/public, shared-with-me and share links at once (reads of its path answer 404, and the path is free for a new entity); it keeps its bytes, access list, metadata and PID, which resolves to a tombstone until it is restored. Purged after trash.retention. 400 for the zone\'s top collections and homes.',
      response: { 200: TrashResult, ...errorResponses(401, 403, 404, 413, 415) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    return envelope(entryData(request, await trash.trash(actor, parsePath(request.body.path), request.body.reason ?? null)));
  });

  app.get(TRASH, {
    schema: {
      ...common, operationId: 'listTrash', querystring: ListQuery,
      summary: 'Your trash: what you trashed and what you own that is in the trash, newest first, paged',
      response: { 200: TrashList, ...errorResponses(401, 403) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    const limit = request.query.limit === undefined ? PAGE : Number(request.query.limit);
    const page = await trash.list(actor, limit, request.query.after === undefined ? null : pageAfter(request.query.after));
    const answer = envelope(page.map((e) => entryData(request, e)));
    const last = page.at(-1);
    return { ...answer, Meta: { ...answer.Meta, continuation_token: page.length === limit && last ? `${last.trashedAt.getTime()}_${last.id}` : null } };
  });

  app.get(`${TRASH}/:id`, {
    schema: {
      ...common, operationId: 'getTrashEntry', params: IdParams,
      summary: 'One trash entry (trashed, purged or taken down) that you trashed or own',
      response: { 200: TrashResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    return envelope(entryData(request, await trash.entry(actor, request.params.id)));
  });

  app.post(`${TRASH}/:id/restore`, {
    schema: {
      ...common, operationId: 'restoreTrashEntry', params: IdParams, body: RestoreBody,
      summary: 'Put a trashed entity back where it was, or beside it under newname; never overwrites (needs write on the collection it returns to)',
      description: '409 when the path is taken (give newname) or its bytes were purged or taken down; 404 when the collection it returns to is gone.',
      response: { 200: RestoredResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    return envelope(restoredData(request, await trash.restore(actor, request.params.id, request.body?.newname ?? null)));
  });

  app.delete(`${TRASH}/:id`, {
    schema: {
      ...common, operationId: 'purgeTrashEntry', params: IdParams,
      summary: 'Purge one entry now: its bytes are removed for good; its PID keeps resolving to a tombstone',
      response: { 200: TrashResult, ...errorResponses(401, 403, 404, 409) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    return envelope(entryData(request, await trash.purge(actor, request.params.id)));
  });

  app.delete(TRASH, {
    schema: {
      ...common, operationId: 'emptyTrash', querystring: Type.Object({}, { additionalProperties: false }),
      summary: 'Empty your trash: purge every entry you would list',
      response: { 200: EmptiedResult, ...errorResponses(401, 403) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    return envelope({ purged: await trash.empty(actor) });
  });
}
