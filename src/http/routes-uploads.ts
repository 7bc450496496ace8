/**
 * The `/api/uploads` endpoints: resumable uploads in the tus 1.0 protocol (core, creation,
 * creation-with-upload, creation-defer-length, termination, checksum, expiration), so tus
 * clients (tus-js-client, Uppy) work unchanged, plus JSON reads of an upload's state and of the
 * caller's open uploads. Routes translate tus headers to `ResumableUploads` calls and back;
 * every error is lading's envelope with the status tus prescribes. They decide no permission.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from './typebox.ts';
import type { Backend } from '../core/backend.ts';
import { LadingError } from '../core/errors.ts';
import { CHECKSUM_ALGORITHMS, type ChecksumAlgorithm, type ResumableUploads, type UploadTarget, type UploadView } from '../core/uploads.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { type Urls, entityRecord, envelope, linkOf } from './envelope.ts';
import { announcedSha256 } from './conditional.ts';
import { hasBody } from './protocol.ts';
import { Envelope, EntityRecord, Flag, type TypedApp, errorResponses, isSet } from './schemas.ts';

interface UploadRoutesDeps {
  uploads: ResumableUploads;
  backend: Backend;
  authenticate: Authenticate;
  urls: (request: FastifyRequest) => Urls;
  /** Waits for jobs (PID registration) for `pid_await`; absent when no rules are configured. */
  jobs?: { waitFor(ids: readonly string[], timeoutMs: number): Promise<boolean> };
  pidAwaitMs: number;
}

const PREFIX = '/api/uploads';
export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-with-upload,creation-defer-length,termination,checksum,expiration';
const OFFSET_TYPE = 'application/offset+octet-stream';
const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

const UploadState = Type.Object({
  id: Type.String({ description: 'The upload\'s id, the last segment of its URL.', examples: ['0b6e2a0c-5f7d-4c1e-9a53-3f1f2d9e8c41'] }),
  url: Type.String({ description: 'The upload\'s URL (tus: the Location of its creation).', examples: ['https://staging.example.org/api/uploads/0b6e2a0c-5f7d-4c1e-9a53-3f1f2d9e8c41'] }),
  state: Type.Union([Type.Literal('open'), Type.Literal('complete')], { description: 'open: bytes are still expected; complete: it became the data object.' }),
  offset: Type.Integer({ description: 'Bytes received and acknowledged.', examples: [16777216] }),
  length: Type.Union([Type.Integer(), Type.Null()], { description: 'Total size, null while deferred.', examples: [268435456] }),
  created: Type.String({ description: 'When it was created (ISO 8601).', examples: ['2026-11-30T09:12:04.000Z'] }),
  expires: Type.String({ description: 'When it expires unless it is used again (ISO 8601).', examples: ['2026-12-01T09:30:00.000Z'] }),
  path: Type.String({ description: 'The data object it becomes (or became).', examples: ['/lading/home/alice/run-42.h5'] }),
  object: Type.Union([EntityRecord, Type.Null()], { description: 'Once complete, the record of the data object (as /api/registered answers it, with its PID).' }),
});

const UploadResult = Envelope(UploadState, 'The state of a resumable upload.');
const UploadList = Envelope(Type.Array(UploadState), 'The caller\'s open resumable uploads, oldest first.');
const UploadParams = Type.Object({
  id: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'The upload\'s id.', examples: ['0b6e2a0c-5f7d-4c1e-9a53-3f1f2d9e8c41'] }),
});
const AwaitQuery = Type.Object({ pid_await: Type.Optional(Flag) }, { additionalProperties: true });
const NoBody = (description: string) => Type.Null({ description });

const TUS_HEADERS = 'Requests other than OPTIONS and GET must send Tus-Resumable: 1.0.0 (else 412, with Tus-Version).';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** A non-negative integer header, or undefined when absent. `BAD_REQUEST`. */
function integerHeader(request: FastifyRequest, name: string): number | undefined {
  const value = header(request, name);
  if (value === undefined) return undefined;
  if (!INTEGER.test(value.trim()) || !Number.isSafeInteger(Number(value))) throw new LadingError('BAD_REQUEST', `${name} must be a non-negative integer, not '${value}'.`);
  return Number(value);
}

/** `Tus-Resumable` must name the version lading speaks. `PRECONDITION_FAILED`. */
function requireTus(request: FastifyRequest, reply: FastifyReply): void {
  const version = header(request, 'tus-resumable');
  if (version?.trim() === TUS_VERSION) return;
  reply.header('Tus-Version', TUS_VERSION);
  throw new LadingError('PRECONDITION_FAILED', version === undefined
    ? `Send Tus-Resumable: ${TUS_VERSION} with every request of the tus protocol.`
    : `Tus-Resumable ${version} is not supported; lading speaks ${TUS_VERSION}.`);
}

/** The key-value pairs of `Upload-Metadata` (values base64, UTF-8). `BAD_REQUEST`. */
export function parseMetadata(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (text === undefined || text.trim() === '') return out;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for (const pair of text.split(',')) {
    const [key, value, ...rest] = pair.trim().split(' ');
    if (!key || rest.length > 0 || out.has(key)) throw new LadingError('BAD_REQUEST', 'Upload-Metadata must be comma-separated pairs of a key and a base64 value, each key once.');
    if (value === undefined || value === '') {
      out.set(key, '');
      continue;
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) throw new LadingError('BAD_REQUEST', `The Upload-Metadata value of '${key}' is not base64.`);
    try {
      out.set(key, utf8.decode(Buffer.from(value, 'base64')));
    } catch {
      throw new LadingError('BAD_REQUEST', `The Upload-Metadata value of '${key}' is not UTF-8 text.`);
    }
  }
  return out;
}

/** Where the upload goes, from its metadata. */
function targetOf(metadata: Map<string, string>): UploadTarget {
  const force = metadata.get('force');
  return {
    path: metadata.get('path'), collection: metadata.get('collection'), filename: metadata.get('filename'),
    force: force !== undefined && ['true', '1'].includes(force.toLowerCase()),
  };
}

/** The `Upload-Checksum` of a request, if any. `BAD_REQUEST` for an unsupported algorithm. */
function checksumOf(request: FastifyRequest): { algorithm: ChecksumAlgorithm; digest: Buffer } | undefined {
  const value = header(request, 'upload-checksum');
  if (value === undefined) return undefined;
  const [algorithm, digest, ...rest] = value.trim().split(' ');
  if (!CHECKSUM_ALGORITHMS.includes(algorithm as ChecksumAlgorithm)) {
    throw new LadingError('BAD_REQUEST', `Upload-Checksum algorithm '${algorithm}' is not supported; use one of ${CHECKSUM_ALGORITHMS.join(', ')}.`);
  }
  if (!digest || rest.length > 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(digest)) throw new LadingError('BAD_REQUEST', 'Upload-Checksum must be an algorithm and a base64 digest.');
  return { algorithm: algorithm as ChecksumAlgorithm, digest: Buffer.from(digest, 'base64') };
}

/** The body of a request that appends, or undefined when it sends none. `UNSUPPORTED_MEDIA_TYPE`. */
function bodyOf(request: FastifyRequest, required: boolean): { source: FastifyRequest['raw']; contentLength?: number } | undefined {
  const type = (header(request, 'content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (!hasBody(request.headers) && !required) return undefined;
  if (type !== OFFSET_TYPE) throw new LadingError('UNSUPPORTED_MEDIA_TYPE', `Send the bytes of an upload as ${OFFSET_TYPE}, not ${type ? `'${type}'` : 'without a Content-Type'}.`);
  return { source: request.raw, contentLength: integerHeader(request, 'content-length') };
}

/** Registers the routes. */
export function registerUploadRoutes(app: TypedApp, deps: UploadRoutesDeps): void {
  const { uploads, backend } = deps;
  const secured = { security: [{ bearer: [] }], tags: ['uploads'] };
  const actorOf = async (request: FastifyRequest) => {
    await deps.authenticate(request);
    return backend.actorOf(request.auth!.credential, viaOf(request));
  };
  const urlOf = (request: FastifyRequest, id: string) => `${deps.urls(request).base}${PREFIX}/${id}`;
  const stateOf = (request: FastifyRequest, view: UploadView) => {
    const urls = deps.urls(request);
    return {
      id: view.id, url: urlOf(request, view.id), state: view.status, offset: view.offset, length: view.length, created: view.createdAt.toISOString(), expires: view.expiresAt.toISOString(),
      path: view.path, object: view.object ? entityRecord(urls, view.object)[view.object.name]! : null,
    };
  };
  /** The tus headers of an answer about `view`. */
  const tusHeaders = (request: FastifyRequest, reply: FastifyReply, view: UploadView): void => {
    reply.header('Upload-Offset', String(view.offset));
    reply.header('Upload-Expires', view.expiresAt.toUTCString());
    if (view.object) reply.header('Content-Location', linkOf(deps.urls(request), view.object.path));
  };
  // NOTE: on every answer of the tus requests, errors included (tus: "MUST be included in
  // every request and response except for OPTIONS").
  const tusRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.header('Tus-Resumable', TUS_VERSION);
    requireTus(request, reply);
  };

  app.route({
    method: 'OPTIONS',
    url: PREFIX,
    schema: {
      tags: ['uploads'], operationId: 'discoverUploads',
      summary: 'tus discovery: the protocol version, extensions, largest upload and checksum algorithms (no token needed)',
      response: { 204: NoBody('Tus-Version, Tus-Extension, Tus-Max-Size and Tus-Checksum-Algorithm headers.'), ...errorResponses() },
    },
    handler: async (_request, reply) => {
      reply.header('Tus-Resumable', TUS_VERSION).header('Tus-Version', TUS_VERSION).header('Tus-Extension', TUS_EXTENSIONS)
        .header('Tus-Max-Size', String(uploads.maxUploadBytes)).header('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','))
        .header('Allow', app.allowOf(PREFIX) ?? 'OPTIONS');
      return reply.code(204).send(null);
    },
  });

  app.post(PREFIX, {
    schema: {
      ...secured, operationId: 'createUpload',
      summary: 'tus creation: start a resumable upload of a data object (Upload-Length or Upload-Defer-Length: 1; Upload-Metadata names the target: path, or filename and collection; force)',
      description: `${TUS_HEADERS} Upload-Metadata keys: path (absolute path of the object to create), or filename with collection (default: your home); force (true or 1) overwrites. A body (${OFFSET_TYPE}) is appended at once (creation-with-upload), checked against Upload-Checksum and Repr-Digest as PATCH checks it. The target is checked as PUT checks it. Answers 201 with Location (the upload's URL), Upload-Offset and Upload-Expires.`,
      consumes: [OFFSET_TYPE],
      response: {
        201: UploadResult,
        ...errorResponses(401, 403, 404, 409, 412, 413, 415, 429, 460),
      },
    },
    onRequest: tusRequest,
  }, async (request, reply) => {
    const length = integerHeader(request, 'upload-length');
    const deferred = header(request, 'upload-defer-length');
    if (deferred !== undefined && deferred.trim() !== '1') throw new LadingError('BAD_REQUEST', 'Upload-Defer-Length must be 1.');
    if ((length === undefined) === (deferred === undefined)) throw new LadingError('BAD_REQUEST', 'Send either Upload-Length or Upload-Defer-Length: 1.');
    const rawMetadata = header(request, 'upload-metadata') ?? '';
    const metadata = parseMetadata(rawMetadata);
    const actor = await actorOf(request);
    const body = bodyOf(request, false);
    const view = await uploads.create(actor, {
      length: length ?? null, metadata: rawMetadata, target: targetOf(metadata),
      body: body ? { ...body, checksum: checksumOf(request), whole: announcedSha256(request.headers, 'repr-digest') } : undefined,
    });
    reply.header('Location', urlOf(request, view.id));
    tusHeaders(request, reply, view);
    return reply.code(201).send(envelope(stateOf(request, view), 201));
  });

  app.route({
    // NOTE: a list, because @fastify/swagger leaves a route whose method is the string 'HEAD' out of the document.
    method: ['HEAD'],
    url: `${PREFIX}/:id`,
    schema: {
      ...secured, operationId: 'uploadOffset',
      summary: 'tus: the offset of a resumable upload (Upload-Offset, Upload-Length or Upload-Defer-Length, Upload-Metadata, Upload-Expires)',
      description: TUS_HEADERS,
      params: UploadParams,
      response: { 200: NoBody('The upload\'s headers, no body.'), ...errorResponses(401, 404, 412) },
    },
    onRequest: tusRequest,
    handler: async (request, reply) => {
      const view = await uploads.get(await actorOf(request), request.params.id);
      tusHeaders(request, reply, view);
      if (view.length === null) reply.header('Upload-Defer-Length', '1');
      else reply.header('Upload-Length', String(view.length));
      if (view.metadata) reply.header('Upload-Metadata', view.metadata);
      return reply.code(200).send(null);
    },
  });

  app.patch(`${PREFIX}/:id`, {
    schema: {
      ...secured, operationId: 'appendUpload',
      summary: `tus: append the body (${OFFSET_TYPE}) at Upload-Offset; the request that brings the last byte makes the data object (Content-Location names it)`,
      description: `${TUS_HEADERS} Upload-Length sets a deferred length; Upload-Checksum (sha256, sha1 or md5 and a base64 digest) checks the body before any of it is kept (460 on a mismatch). Repr-Digest (sha-256=:<base64>:, RFC 9530) is the SHA-256 of the whole upload: on the request that brings the last byte it is checked before that byte is acknowledged and the data object made (460 on a mismatch; the message says whether the upload is still open short of its last bytes or was removed); other requests ignore it. 409 when Upload-Offset is not the upload's offset or another request is appending to it (then with Retry-After, the seconds left on that request's lease).`,
      params: UploadParams,
      consumes: [OFFSET_TYPE],
      response: { 204: NoBody('Upload-Offset, Upload-Expires; Content-Location once complete.'), ...errorResponses(401, 403, 404, 409, 412, 413, 415, 460) },
    },
    onRequest: tusRequest,
  }, async (request, reply) => {
    const body = bodyOf(request, true)!;
    const offset = integerHeader(request, 'upload-offset');
    if (offset === undefined) throw new LadingError('BAD_REQUEST', 'Send Upload-Offset: the offset the body starts at.');
    const length = integerHeader(request, 'upload-length');
    const checksum = checksumOf(request);
    const whole = announcedSha256(request.headers, 'repr-digest');
    const view = await uploads.append(await actorOf(request), request.params.id, offset, { ...body, length, checksum, whole });
    tusHeaders(request, reply, view);
    return reply.code(204).send(null);
  });

  app.delete(`${PREFIX}/:id`, {
    schema: {
      ...secured, operationId: 'terminateUpload',
      summary: 'tus termination: remove a resumable upload and its bytes (a complete one\'s data object stays)',
      description: TUS_HEADERS,
      params: UploadParams,
      response: { 204: NoBody('Terminated.'), ...errorResponses(401, 403, 404, 409, 412) },
    },
    onRequest: tusRequest,
  }, async (request, reply) => {
    await uploads.terminate(await actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });

  app.get(`${PREFIX}/:id`, {
    exposeHeadRoute: false,
    schema: {
      ...secured, operationId: 'getUpload',
      summary: 'The state of a resumable upload; once complete, the record of its data object (pid_await=true waits for its PID as PUT does)',
      params: UploadParams,
      querystring: AwaitQuery,
      response: { 200: UploadResult, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const actor = await actorOf(request);
    let view = await uploads.get(actor, request.params.id);
    if (isSet(request.query.pid_await) && view.jobIds.length > 0 && deps.jobs && view.object && view.object.pid === null) {
      // Spec §8, as for PUT: answer when registration completes, or after the wait at the latest.
      await deps.jobs.waitFor(view.jobIds, deps.pidAwaitMs);
      view = await uploads.get(actor, request.params.id);
    }
    return envelope(stateOf(request, view));
  });

  app.get(PREFIX, {
    exposeHeadRoute: false,
    schema: {
      ...secured, operationId: 'listUploads',
      summary: 'The caller\'s open resumable uploads, oldest first (to resume them, e.g. after a page reload)',
      response: { 200: UploadList, ...errorResponses(401) },
    },
  }, async (request) => {
    const views = await uploads.list(await actorOf(request));
    return envelope(views.map((view) => stateOf(request, view)));
  });
}
