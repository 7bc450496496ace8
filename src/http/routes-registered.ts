/**
 * The `/api/registered` endpoints (spec 4.1–4.7): metadata, download, listing, upload,
 * collection creation, rename, and the refused DELETE. Routes translate HTTP to backend calls
 * and back; they decide no permission and parse paths only through `core/path.ts`.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { Type } from './typebox.ts';
import type { Backend, Listed } from '../core/backend.ts';
import { LadingError, isLadingError } from '../core/errors.ts';
import { type Path, baseName, childOf, parentOf, parseName, parseNewPath, parsePath } from '../core/path.ts';
import type { BackendCredential } from '../core/ports.ts';
import type { Collection, DataObject, Entity } from '../core/types.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { hasBody } from './protocol.ts';
import { UploadForm } from './upload-form.ts';
import { announcedDigests } from './conditional.ts';
import { sendDownload } from './download.ts';
import { type ArchiveLimits, downloadMode, sendArchive } from './archive-download.ts';
import { entityTarget } from './target.ts';
import {
  type Urls, collectionResult, encodePath, entityRecord, envelope, renameResult, uploadResult,
} from './envelope.ts';
import {
  Bytes, CollectionResult, CopyBody, CopyQuery, CopyResult, CreateBody, EntityList, GetQuery, ListQuery, PutQuery, RegisteredParams, RenameBody,
  RenameResult, type TypedApp, UploadResult,
  errorResponses, isSet,
} from './schemas.ts';

interface RegisteredDeps {
  backend: Backend;
  /** Waits for jobs (PID registration) for `pid_await`; absent when no rules are configured. */
  jobs?: { waitFor(ids: readonly string[], timeoutMs: number): Promise<boolean> };
  /** Longest `pid_await` wait after an upload finished (spec §8: 10 s). */
  pidAwaitMs: number;
  maxUploadBytes: number;
  urls: (request: FastifyRequest) => Urls;
  authenticate: Authenticate;
  archives: ArchiveLimits;
}

const PREFIX = '/api/registered';

/** The entity path and trailing slash of a target below `/api/registered` (see `entityTarget`). `INVALID_PATH`. */
function targetOf(target: string): { path: Path; trailingSlash: boolean } {
  return entityTarget(PREFIX, target);
}

/** OpenAPI links from an answer to reading and renaming what it names; `path` is a runtime expression giving the entity's path. */
function entityLinks(path: string) {
  return {
    Metadata: { operationId: 'getRegistered', parameters: { '*': path }, description: 'Metadata, listing or download of the entity.' },
    Rename: { operationId: 'renameRegistered', parameters: { '*': path }, description: 'Rename the entity.' },
  };
}

function credentialOf(request: FastifyRequest): BackendCredential {
  return request.auth!.credential;
}

/**
 * Registers the routes; returns `downloadAt`, which authenticates a request and streams the
 * data object at a path (used by PID resolution).
 */
export function registerRegisteredRoutes(app: TypedApp, deps: RegisteredDeps): {
  downloadAt: (request: FastifyRequest, reply: FastifyReply, path: Path) => Promise<FastifyReply>;
} {
  const { backend } = deps;
  const secured = { security: [{ bearer: [] }], tags: ['registered'] };
  const preHandler = (request: FastifyRequest): Promise<unknown> => deps.authenticate(request);

  const list = async (request: FastifyRequest, reply: FastifyReply, path: Path, paging: Static<typeof ListQuery>) => {
    const { continuation_token: token } = paging;
    const max = paging.max_keys === undefined ? undefined : Number(paging.max_keys);
    const { entries } = await backend.listing(credentialOf(request), path, token === undefined ? null : nameOfToken(token), { marks: paging.marks === 'true' });
    // NOTE: the first entry is read before the answer starts, so a catalog that fails at once
    // still gets its error envelope; a failure later can only cut the answer short.
    const first = await entries.next();
    return reply.type('application/json; charset=utf-8').send(Readable.from(listingJson(deps.urls(request), first, entries, max)));
  };

  const download = (request: FastifyRequest, reply: FastifyReply, path: Path) =>
    sendDownload(request, reply, (plan) => backend.openObject(credentialOf(request), path, plan));

  app.route({
    method: ['GET', 'HEAD'],
    url: PREFIX,
    exposeHeadRoute: false,
    schema: { ...secured, operationId: 'listHome', summary: 'List the caller\'s home collection', querystring: ListQuery, response: { 200: EntityList, ...errorResponses(401, 403, 404) } },
    preHandler,
    handler: async (request, reply) => {
      const user = await backend.whoami(credentialOf(request));
      return list(request, reply, backend.homeOf(user), request.query);
    },
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: `${PREFIX}/*`,
    exposeHeadRoute: false,
    schema: {
      ...secured,
      operationId: 'getRegistered',
      summary: 'Metadata of a data object, listing of a collection (path ending in /), download (download=true), or a collection as one archive (download=zip or download=bag)',
      description: 'download=true answers the bytes (Range, If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since apply); on a collection it is refused with 400. download=zip answers a collection as one ZIP archive (members stored, Zip64, UTF-8 names, the collection\'s name as top folder), download=bag as a BagIt bag (RFC 8493) in a ZIP: both are streamed, each member checked against its stored SHA-256 as it passes; a member that cannot be read whole cuts the transfer (no archive that looks whole). 413 beyond archives.max_entries members, 429 beyond archives.concurrent_per_user archives at once.',
      params: RegisteredParams,
      querystring: GetQuery, ListQuery,
      response: {
        200: {
          description: 'Entity records; with download=true, the bytes of the data object; with download=zip or bag, the archive of the collection.',
          content: { 'application/json': { schema: EntityList }, 'application/octet-stream': { schema: Bytes }, 'application/zip': { schema: Bytes } },
        },
        206: { description: 'The requested range of the data object (download=true with Range).', content: { 'application/octet-stream': { schema: Bytes } } },
        304: Type.Null({ description: 'Not modified (download=true with If-None-Match or If-Modified-Since).' }),
        ...errorResponses(400, 401, 403, 404, 412, 413, 416, 429),
      },
    },
    preHandler,
    handler: async (request, reply) => {
      const { path, trailingSlash } = targetOf(request.url);
      const mode = downloadMode(request.query.download);
      if (mode === 'zip' || mode === 'bag') {
        const actor = await backend.actorOf(credentialOf(request));
        return sendArchive(request, reply, deps.archives, {
          format: mode, key: `user:${actor.user}`, open: () => backend.walkAs(actor, path),
          source: `${deps.urls(request).base}${PREFIX}${encodePath(path)}`,
        });
      }
      if (mode === 'bytes') return download(request, reply, path);
      if (trailingSlash) return list(request, reply, path, request.query);
      const entity = await backend.stat(credentialOf(request), path);
      if (entity.kind === 'collection') return list(request, reply, path, request.query);
      return envelope([entityRecord(deps.urls(request), entity)]);
    },
  });

  app.put(`${PREFIX}/*`, {
    schema: {
      ...secured,
      operationId: 'uploadRegistered',
      summary: 'Upload a data object: multipart form field `file`, or the raw body with Content-Type: application/octet-stream',
      params: RegisteredParams,
      querystring: PutQuery,
      consumes: ['application/octet-stream', 'multipart/form-data'],
      response: { 200: UploadResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
    links: { 200: entityLinks('$request.path.*') },
    preHandler,
  }, async (request) => {
    const { path, trailingSlash } = targetOf(request.url);
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > deps.maxUploadBytes + 64 * 1024) {
      throw new LadingError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${deps.maxUploadBytes} bytes.`);
    }
    const cred = credentialOf(request);
    const given = request.headers['content-type'];
    const type = (given ?? '').split(';', 1)[0]!.trim().toLowerCase();
    const force = isSet(request.query.force);
    let target = path;
    let form: UploadForm | null = null;
    let upload: () => Promise<{ object: DataObject; jobIds: string[] }>;
    if (type === 'multipart/form-data') {
      const reading = new UploadForm(request, { force, maxFileBytes: deps.maxUploadBytes });
      form = reading;
      upload = () => reading.read(async (file) => {
        if (trailingSlash || (await isCollection(backend, cred, path))) target = childOf(path, parseName(file.filename));
        return backend.upload(cred, parseNewPath(target), file.source, { overwrite: file.force }, viaOf(request));
      });
    } else if (type === 'application/octet-stream' || (given === undefined && hasBody(request.headers))) {
      // NOTE: a body without Content-Type is taken as application/octet-stream (RFC 9110
      // §8.3); without a body either, the request is neither upload mode.
      if (trailingSlash) throw new LadingError('BAD_REQUEST', 'A streaming upload needs the path of the file to create, not of a collection (remove the trailing \'/\').');
      upload = () => backend.upload(cred, parseNewPath(target), request.raw, {
        overwrite: force, expected: announcedDigests(request.headers), ...(Number.isSafeInteger(length) ? { declaredSize: length } : {}),
      }, viaOf(request));
    } else {
      throw new LadingError('UNSUPPORTED_MEDIA_TYPE', `Upload with Content-Type application/octet-stream (raw body) or multipart/form-data (field 'file'), not ${given === undefined ? 'without a Content-Type and a body' : `'${type}'`}.`);
    }
    let outcome: { object: DataObject; jobIds: string[] };
    try {
      outcome = await upload();
    } catch (err) {
      throw (form?.force ?? force) ? err : await adviseForce(err, backend, cred, target, 'dataobject', 'Use force=true to overwrite it.');
    }
    let { object } = outcome;
    if (isSet(request.query.pid_await) && outcome.jobIds.length > 0 && deps.jobs) {
      // Spec §8: answer when registration completes, or after the wait at the latest; the
      // jobs go on in the background either way.
      await deps.jobs.waitFor(outcome.jobIds, deps.pidAwaitMs);
      const now = await backend.stat(cred, object.path).catch(() => object);
      if (now.kind === 'dataobject') object = now;
    }
    return envelope(uploadResult(deps.urls(request), object));
  });

  app.post(PREFIX, {
    schema: {
      ...secured,
      operationId: 'createCollection',
      summary: 'Create a collection',
      body: CreateBody,
      response: { 200: CollectionResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
    links: { 200: entityLinks('$response.body#/Response/data/path') },
    preHandler,
  }, async (request) => {
    const { body } = request;
    const parents = body.force === true || (typeof body.force === 'string' && isSet(body.force));
    const cred = credentialOf(request);
    // NOTE: with force, missing parents are created too, so every name must obey the rule.
    const path = parseNewPath(parsePath(body.path), parents ? Infinity : 1);
    let collection: Collection;
    try {
      collection = await backend.createCollection(cred, path, { parents }, viaOf(request));
    } catch (err) {
      throw parents ? err : await adviseForce(err, backend, cred, path, 'collection', 'Use force=true to accept an existing collection.');
    }
    return envelope(collectionResult(deps.urls(request), collection.path));
  });

  app.patch(`${PREFIX}/*`, {
    schema: {
      ...secured,
      operationId: 'renameRegistered',
      summary: 'Rename a data object or a collection (newname), or move it into another collection (destination)',
      description: 'newname alone renames in place (spec 4.6). destination moves the entity (a collection with everything below it) into that collection, in one transaction, keeping its name or taking newname; it needs write on the collection left, on the destination and on the entity. An existing target is refused with 409 unless force replaces a data object with a data object; a collection moved into itself or below itself is refused with 400. The rules see a rename, so PID records follow.',
      params: RegisteredParams,
      body: RenameBody,
      response: { 200: RenameResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
    links: { 200: entityLinks('{$response.body#/Response/data/path}/{$response.body#/Response/data/filename}') },
    preHandler,
  }, async (request) => {
    const { path } = targetOf(request.url);
    const { newname, destination } = request.body;
    const force = flagOf(request.body.force);
    const cred = credentialOf(request);
    let moved: Entity;
    if (newname === undefined && destination === undefined) throw new LadingError('BAD_REQUEST', 'Give newname (a rename in place), destination (a move into that collection), or both.');
    if (destination === undefined && !force && newname !== undefined) {
      moved = await backend.rename(cred, path, newname, viaOf(request));
    } else {
      const into = destination === undefined ? parentOf(path) : parsePath(destination);
      try {
        moved = await backend.move(cred, path, { into, ...(newname === undefined ? {} : { name: newname }), overwrite: force }, viaOf(request));
      } catch (err) {
        if (force || !isLadingError(err, 'CONFLICT')) throw err;
        throw await adviseForce(err, backend, cred, childOf(into, newname ?? baseName(path)), 'dataobject', 'Use force=true to replace it.');
      }
    }
    return envelope(renameResult(deps.urls(request), moved.path));
  });

  app.post(`${PREFIX}/*`, {
    schema: {
      ...secured,
      operationId: 'copyRegistered',
      summary: 'Copy a data object or a collection into a collection (copy_to)',
      description: 'Copies inside the storage (the bytes do not pass through the client): checksums are kept, user metadata is copied but not PID and EUDAT/… attributes, access lists are not copied (the copies are the caller\'s and inherit the destination\'s access), and each new data object is created as by an upload, so rules give it a PID of its own (pid_await waits for those of a data object\'s copy). A collection is copied with everything in it, one data object after another: a copy that fails midway keeps what was copied. Needs read on the entity and write on copy_to. Refused with 413 before anything is copied when the source is over limits.copy_bytes or limits.copy_entries, 409 when the target exists (force replaces a data object with a data object), 400 for a collection into itself or an object onto itself.',
      params: RegisteredParams,
      querystring: CopyQuery,
      body: CopyBody,
      response: { 200: CopyResult, ...errorResponses(401, 403, 404, 409, 413, 415) },
    },
    links: { 200: entityLinks('{$response.body#/Response/data/path}/{$response.body#/Response/data/filename}') },
    preHandler,
  }, async (request) => {
    const { path } = targetOf(request.url);
    const { newname } = request.body;
    const force = flagOf(request.body.force);
    const cred = credentialOf(request);
    const into = parsePath(request.body.copy_to);
    let outcome: { entity: Entity; jobIds: string[] };
    try {
      outcome = await backend.copy(cred, path, { into, ...(newname === undefined ? {} : { name: newname }), overwrite: force }, viaOf(request));
    } catch (err) {
      if (force || !isLadingError(err, 'CONFLICT')) throw err;
      throw await adviseForce(err, backend, cred, childOf(into, newname ?? baseName(path)), 'dataobject', 'Use force=true to replace it.');
    }
    if (isSet(request.query.pid_await) && outcome.jobIds.length > 0 && deps.jobs && outcome.entity.kind === 'dataobject') {
      await deps.jobs.waitFor(outcome.jobIds, deps.pidAwaitMs);
    }
    return envelope(renameResult(deps.urls(request), outcome.entity.path));
  });

  for (const url of [PREFIX, `${PREFIX}/*`]) {
    app.delete(url, {
      schema: { ...secured, summary: 'Not allowed in the registered domain (405)', response: errorResponses(401, 403, 405) },
      config: { refused: true },
      preHandler,
    }, async (request) => {
      throw new LadingError('METHOD_NOT_ALLOWED', 'Deleting is not allowed in the registered domain.', { details: { allow: request.server.allowOf(request.url) } });
    });
  }

  return {
    async downloadAt(request, reply, path) {
      await deps.authenticate(request);
      return download(request, reply, path);
    },
  };
}

/**
 * `err` with `advice` added when it is a `CONFLICT` that sending `force=true` would have
 * avoided, because what stands at `path` is of the kind `force` accepts; otherwise `err` as it
 * is (also when the caller may not look at `path`). The backend's errors speak no HTTP, so the
 * route names the parameter.
 */
async function adviseForce(
  err: unknown, backend: Backend, cred: BackendCredential, path: Path, accepted: Entity['kind'], advice: string,
): Promise<unknown> {
  if (!isLadingError(err, 'CONFLICT')) return err;
  const existing = await backend.stat(cred, path).catch(() => null);
  if (existing?.kind !== accepted) return err;
  return new LadingError('CONFLICT', `${err.message} ${advice}`, { cause: err, details: err.details });
}

/** Whether a body's `force` (a boolean or a flag's text) says true. */
function flagOf(force: boolean | string | undefined): boolean {
  return force === true || (typeof force === 'string' && isSet(force as Parameters<typeof isSet>[0]));
}

async function isCollection(backend: Backend, cred: BackendCredential, path: Path): Promise<boolean> {
  try {
    return (await backend.stat(cred, path)).kind === 'collection';
  } catch (err) {
    if (isLadingError(err, 'NOT_FOUND') || isLadingError(err, 'FORBIDDEN')) return false;
    throw err;
  }
}

/** The opaque continuation token of a listing page that ended at the entry `name`. */
function tokenOfName(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function nameOfToken(token: string): string {
  const name = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  if (!name || tokenOfName(name) !== token) throw new LadingError('BAD_REQUEST', 'continuation_token is not one a listing gave; start again without it.');
  return name;
}

/** Writes text of at least this size at once: fewer, larger writes to the socket. */
const LISTING_CHUNK = 64 * 1024;

/**
 * The JSON text of a listing's envelope, as the entries arrive: its data first, then its Meta
 * (which counts them, and with `max` says where the next page starts).
 */
async function* listingJson(urls: Urls, first: IteratorResult<Listed>, rest: AsyncIterator<Listed>, max: number | undefined): AsyncGenerator<string> {
  let text = '{"Response":{"data":[';
  let count = 0;
  let last: string | null = null;
  let more = false;
  for (let next = first; !next.done; next = await rest.next()) {
    if (max !== undefined && count === max) {
      more = true;
      await rest.return?.(undefined);
      break;
    }
    text += (count === 0 ? '' : ',') + JSON.stringify(entityRecord(urls, next.value));
    count++;
    last = next.value.name;
    if (text.length >= LISTING_CHUNK) {
      yield text;
      text = '';
    }
  }
  const meta = {
    data_type: "<class 'list'>", elements: count, errors: 0, status: 200,
    ...(max === undefined ? {} : { continuation_token: more && last !== null ? tokenOfName(last) : null }),
  };
  yield `${text}],"errors":null},"Meta":${JSON.stringify(meta)}}`;
}
