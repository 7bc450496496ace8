/**
 * Access lists (`/api/acl/…`), metadata (`/api/metadata/…`) and publishing (`/api/publish/…`)
 * of an entity, and what is shared with the caller (`/api/access/shared-with-me`), for
 * signed-in users, and reads of published data without a token
 * (`/api/public/…`). Routes translate HTTP to the core services and back; the services decide
 * every permission, and paths come only through `target.ts`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from './typebox.ts';
import type { Actor, Backend } from '../core/backend.ts';
import type { AccessControl, AccessList } from '../core/access-control.ts';
import type { Metadata } from '../core/metadata.ts';
import type { PublicationState, Publishing } from '../core/publishing.ts';
import type { Path } from '../core/path.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { sendDownload } from './download.ts';
import { type ArchiveLimits, downloadMode, sendArchive } from './archive-download.ts';
import { type Urls, encodePath, entityRecord, envelope, publicLinkOf } from './envelope.ts';
import {
  AclGrantBody, AclResult, AclRevokeQuery, AvuBody, Bytes, EntityList, GetQuery, MetadataDeleteQuery, MetadataResult,
  PublicationResult, SharedList, type TypedApp, errorResponses, isSet,
} from './schemas.ts';
import { entityParams, entityTarget } from './target.ts';
import { wantsPage } from './negotiation.ts';
import { STATUS_BY_CODE, toLadingError } from './errors.ts';
import type { SendAppPage } from './routes-web.ts';
import { parentOf } from '../core/path.ts';
import type { Entity } from '../core/types.ts';

interface AccessRouteDeps {
  backend: Backend;
  accessControl: AccessControl;
  metadata: Metadata;
  publishing: Publishing;
  urls: (request: FastifyRequest) => Urls;
  authenticate: Authenticate;
  archives: ArchiveLimits;
  /** Sends the web app's page: a browser opening published data gets it, with what is published; absent, it gets JSON. */
  page?: SendAppPage | null;
}

const ACL = '/api/acl';
const METADATA = '/api/metadata';
const PUBLISH = '/api/publish';
const PUBLIC = '/api/public';
const ACCESS = '/api/access';

function aclData(list: AccessList) {
  return { path: list.path, owner: list.owner, entries: list.entries, inherited: list.inherited };
}

function publicationData(urls: Urls, state: PublicationState) {
  return {
    path: state.path,
    published: state.published,
    via: state.via,
    published_at: state.publishedAt?.toISOString() ?? null,
    published_by: state.publishedBy,
    public_url: state.published ? publicLinkOf(urls, state.path) : null,
  };
}

export function registerAccessRoutes(app: TypedApp, deps: AccessRouteDeps): void {
  const { backend } = deps;
  const security = [{ bearer: [] }];
  /** The signed-in caller and the entity path below `prefix`. `UNAUTHENTICATED`, `INVALID_PATH`, … */
  const callerAt = async (request: FastifyRequest, prefix: string): Promise<{ actor: Actor; path: Path }> => {
    await deps.authenticate(request);
    const { path } = entityTarget(prefix, request.url);
    return { actor: await backend.actorOf(request.auth!.credential, viaOf(request)), path };
  };

  // Access lists.
  const aclParams = entityParams(ACL);
  app.get(`${ACL}/*`, {
    schema: {
      tags: ['access'], security, operationId: 'getAcl', params: aclParams,
      summary: 'The access list of an entity: owner, its own entries, and those inherited from the collections above it (needs own)',
      response: { 200: AclResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, ACL);
    return envelope(aclData(await deps.accessControl.list(actor, path)));
  });

  app.put(`${ACL}/*`, {
    schema: {
      tags: ['access'], security, operationId: 'grantAccess', params: aclParams, body: AclGrantBody,
      summary: 'Give a user, a group or public (every signed-in user) read, write or own access to an entity and what lies below it (needs own)',
      description: 'Replaces the principal\'s entry on the entity. 404 for an unknown principal; 400 for `anonymous` (publish instead) and for own to `public` (every user could take the entity over); 409 when lowering the last own entry would leave the entity without an owner; 403 for lowering the entry of a home\'s user on that home (they always keep own there).',
      response: { 200: AclResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, ACL);
    return envelope(aclData(await deps.accessControl.grant(actor, path, request.body.principal, request.body.level)));
  });

  app.delete(`${ACL}/*`, {
    schema: {
      tags: ['access'], security, operationId: 'revokeAccess', params: aclParams, querystring: AclRevokeQuery,
      summary: 'Remove a principal\'s entry on an entity (needs own)',
      description: '404 when the principal has no entry on the entity itself (an inherited entry is changed where it is set); 409 for the entity\'s last own entry; 403 for the entry of a home\'s user on that home (they always keep own there).',
      response: { 200: AclResult, ...errorResponses(401, 403, 404, 409) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, ACL);
    return envelope(aclData(await deps.accessControl.revoke(actor, path, request.query.principal)));
  });

  app.get(`${ACCESS}/shared-with-me`, {
    schema: {
      tags: ['access'], security: [{ bearer: [] }, { session: [] }], operationId: 'sharedWithMe',
      querystring: Type.Object({}, { additionalProperties: false }),
      summary: 'What others share with you: the top-most entities outside your home on which you or one of your groups hold an access entry',
      description: 'Each record is a listing\'s entity record with `access`, your level there. An entity below one listed is not listed again; what is granted to `public` (every user) or published is not "shared with you" and is left out. Sorted by path in byte order; at most 1,000 entities, the first by path, with Meta.truncated true when there are more.',
      response: { 200: SharedList, ...errorResponses(401) },
    },
  }, async (request) => {
    await deps.authenticate(request);
    const actor = await backend.actorOf(request.auth!.credential, viaOf(request));
    const { shared, truncated } = await deps.accessControl.sharedWith(actor);
    const urls = deps.urls(request);
    const data = shared.map(({ entity, level }) => ({ [entity.name]: { ...entityRecord(urls, entity)[entity.name]!, access: level } }));
    const answer = envelope(data);
    return { ...answer, Meta: { ...answer.Meta, truncated } };
  });

  // Metadata.
  const metaParams = entityParams(METADATA);
  app.get(`${METADATA}/*`, {
    schema: {
      tags: ['metadata'], security, operationId: 'getMetadata', params: metaParams,
      summary: 'The attribute–value–unit metadata of an entity (needs read)',
      response: { 200: MetadataResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, METADATA);
    return envelope(await deps.metadata.list(actor, path));
  });

  app.post(`${METADATA}/*`, {
    schema: {
      tags: ['metadata'], security, operationId: 'addMetadata', params: metaParams, body: AvuBody,
      summary: 'Add an attribute–value–unit triple to an entity (needs write); answers all of its metadata',
      description: 'Adding a triple that is there changes nothing. 403 for `PID` and `EUDAT/…` (in any case, and for names that read the same: compared after NFKC normalisation, with invisible characters and surrounding space removed), which the PID rules write; 400 for a part over 2,700 bytes, control characters in the attribute, or an entity that carries 1,000 AVUs already.',
      response: { 200: MetadataResult, ...errorResponses(401, 403, 404, 413, 415) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, METADATA);
    const { attribute, value, unit = '' } = request.body;
    return envelope(await deps.metadata.add(actor, path, { attribute, value, unit }));
  });

  app.delete(`${METADATA}/*`, {
    schema: {
      tags: ['metadata'], security, operationId: 'removeMetadata', params: metaParams, querystring: MetadataDeleteQuery,
      summary: 'Remove the AVUs with an attribute (and a value) from an entity (needs write); answers what remains',
      description: '404 when no AVU matches; 403 for `PID` and `EUDAT/…` (and names that read the same, as for adding).',
      response: { 200: MetadataResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, METADATA);
    return envelope(await deps.metadata.remove(actor, path, request.query.attribute, request.query.value));
  });

  // Publishing.
  const publishParams = entityParams(PUBLISH);
  app.get(`${PUBLISH}/*`, {
    schema: {
      tags: ['publishing'], security, operationId: 'getPublication', params: publishParams,
      summary: 'Whether an entity is published (itself or through a collection above it), since when and by whom (needs read)',
      response: { 200: PublicationResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, PUBLISH);
    return envelope(publicationData(deps.urls(request), await deps.publishing.status(actor, path)));
  });

  app.put(`${PUBLISH}/*`, {
    schema: {
      tags: ['publishing'], security, operationId: 'publish', params: publishParams,
      summary: 'Publish a data object or a collection (and everything in it): anyone may read it at /api/public without a token (needs own)',
      description: 'Idempotent. With PID rules for entity.published, the PID records of the entity and of the registered entities below it point to the public URL.',
      response: { 200: PublicationResult, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, PUBLISH);
    return envelope(publicationData(deps.urls(request), await deps.publishing.publish(actor, path)));
  });

  app.delete(`${PUBLISH}/*`, {
    schema: {
      tags: ['publishing'], security, operationId: 'unpublish', params: publishParams,
      summary: 'Unpublish an entity: reads without a token stop at once (needs own)',
      description: 'Idempotent. 409 when the entity is published only through a collection above it. With PID rules for entity.unpublished, PID records point to the registered URL again.',
      response: { 200: PublicationResult, ...errorResponses(401, 403, 404, 409) },
    },
  }, async (request) => {
    const { actor, path } = await callerAt(request, PUBLISH);
    return envelope(publicationData(deps.urls(request), await deps.publishing.unpublish(actor, path)));
  });

  // Published data, for anyone.
  /**
   * The web app's page for a browser that opens published data: the entity (a data object's
   * card, or a collection the app then lists) with the published collection it is in, for the
   * breadcrumbs; or why there is nothing, with the status the API would answer.
   */
  const publicPage = async (request: FastifyRequest, reply: FastifyReply, send: SendAppPage) => {
    let data: unknown;
    let status = 200;
    let title = 'Published data · lading';
    try {
      const { path } = entityTarget(PUBLIC, request.url);
      const entity = await deps.publishing.stat(path);
      // NOTE: the highest published collection above it: the page goes no higher, as what lies above is not public.
      let root: Entity = entity;
      for (let p = parentOf(path); p !== '/'; p = parentOf(p)) {
        const up = await deps.publishing.stat(p).catch(() => null);
        if (!up) break;
        root = up;
      }
      const urls = deps.urls(request);
      title = `${entity.name} · lading`;
      data = {
        kind: 'public', url: publicLinkOf(urls, root.path), root: root.name, rootPath: root.path,
        entry: {
          name: entity.name, kind: entity.kind, size: entity.kind === 'dataobject' ? entity.size : null,
          checksum: entity.kind === 'dataobject' ? entity.checksum : null, created_at: entity.createdAt.toISOString(),
          modified_at: entity.modifiedAt.toISOString(), path: entity.path === root.path ? '/' : entity.path.slice(root.path.length),
          link: publicLinkOf(urls, entity.path), owner: entity.owner,
        },
      };
    } catch (err) {
      const mapped = toLadingError(err);
      const { status: code, title: heading } = STATUS_BY_CODE[mapped.code];
      status = code;
      if (code >= 500) request.log.error({ err }, 'public page failed');
      data = { error: { status: code, title: heading, message: mapped.message, passwordRequired: false } };
    }
    return send(reply, { status, title, data: { public: data }, cacheControl: 'no-cache' });
  };
  const publicRecords = (request: FastifyRequest, entities: Parameters<typeof entityRecord>[1][]) =>
    envelope(entities.map((e) => entityRecord(deps.urls(request), e, publicLinkOf)));
  app.route({
    method: ['GET', 'HEAD'],
    url: `${PUBLIC}/*`,
    exposeHeadRoute: false,
    schema: {
      tags: ['publishing'],
      operationId: 'getPublic',
      summary: 'Published data, without a token: metadata of a data object, listing of a collection (path ending in /), or download (download=true)',
      description: 'Needs no token and ignores one: the answer is the same for everyone. A browser (a GET whose Accept prefers text/html to application/json, without download) gets the web app\'s page of it: a data object\'s card with its download, a collection\'s listing (or, with the status below, why there is nothing). What is not published answers 404, whether or not it exists. download=true answers the bytes (Range and conditional requests apply); on a collection it is 400. download=zip (or bag) answers a published collection as one ZIP archive (or a BagIt bag in a ZIP), as under /api/registered.',
      params: entityParams(PUBLIC, 'the published entity'),
      querystring: GetQuery,
      response: {
        200: {
          description: 'Entity records (links under /api/public); with download=true, the bytes of the data object; with download=zip or bag, the archive of the collection; to a browser, the web app\'s page.',
          content: { 'application/json': { schema: EntityList }, 'application/octet-stream': { schema: Bytes }, 'application/zip': { schema: Bytes }, 'text/html': { schema: Type.String({ description: 'The web app\'s page.' }) } },
        },
        206: { description: 'The requested range of the data object (download=true with Range).', content: { 'application/octet-stream': { schema: Bytes } } },
        304: Type.Null({ description: 'Not modified (download=true with If-None-Match or If-Modified-Since).' }),
        ...errorResponses(400, 404, 412, 413, 416, 429),
      },
    },
    onRequest: async (_request, reply: FastifyReply) => {
      // NOTE: published data may be fetched by pages of any origin; no credential is involved.
      reply.header('Access-Control-Allow-Origin', '*');
      // NOTE: caches must ask again (cheaply, by ETag) so that unpublishing takes effect at once.
      reply.header('Cache-Control', 'no-cache');
    },
    handler: async (request, reply) => {
      reply.header('Vary', 'Accept');
      if (deps.page && wantsPage(request.method, request.url, request.headers.accept)) return publicPage(request, reply, deps.page);
      const { path, trailingSlash } = entityTarget(PUBLIC, request.url);
      const mode = downloadMode(request.query.download);
      if (mode === 'zip' || mode === 'bag') {
        return sendArchive(request, reply, deps.archives, {
          format: mode, key: `address:${request.ip}`, open: () => deps.publishing.walk(path),
          source: `${deps.urls(request).base}${PUBLIC}${encodePath(path)}`,
        });
      }
      if (mode === 'bytes') return sendDownload(request, reply, (plan) => deps.publishing.open(path, plan));
      if (trailingSlash) return publicRecords(request, (await deps.publishing.list(path)).children);
      const entity = await deps.publishing.stat(path);
      if (entity.kind === 'collection') return publicRecords(request, (await deps.publishing.list(path)).children);
      return publicRecords(request, [entity]);
    },
  });
}
