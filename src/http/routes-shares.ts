/**
 * Share links over HTTP: `/api/shares` for owners (create, list, change, revoke; bearer token) and
 * `/api/shared/<token>[/<path>]` for whoever holds a link (download, listing, drop-box
 * uploads; no account, the link's password as HTTP Basic). Routes translate HTTP to
 * `ShareService` calls and back; the service decides every permission and limit. Answers to
 * link holders never show the owner's paths, and no log line shows a token.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from './typebox.ts';
import type { Backend } from '../core/backend.ts';
import { LadingError } from '../core/errors.ts';
import { type Path, parsePath, parseUrlPath } from '../core/path.ts';
import { MAX_SHARE_PASSWORD_LENGTH, type ShareAccess, type ShareService, type ShareView } from '../core/shares.ts';
import type { DataObject, Entity } from '../core/types.ts';
import { type Authenticate, basicPassword, secureCookies, sharePasswordCookie, sharePasswordOf, viaOf } from './authorization.ts';
import { announcedDigests } from './conditional.ts';
import { sendDownload } from './download.ts';
import { type ArchiveLimits, downloadMode, sendArchive } from './archive-download.ts';
import { type Urls, encodePath, envelope } from './envelope.ts';
import { hasBody } from './protocol.ts';
import { Bytes, Envelope, ErrorEnvelope, type TypedApp, errorResponses } from './schemas.ts';
import { UploadForm } from './upload-form.ts';
import { wantsPage } from './negotiation.ts';
import { STATUS_BY_CODE, retryAfterOf, toLadingError } from './errors.ts';
import type { SendAppPage } from './routes-web.ts';

interface ShareRouteDeps {
  shares: ShareService;
  backend: Backend;
  authenticate: Authenticate;
  urls: (request: FastifyRequest) => Urls;
  archives: ArchiveLimits;
  maxUploadBytes: number;
  /**
   * Sends the web app's page: a browser opening a link gets it (with what the link shares)
   * instead of the bytes or the JSON listing. Absent: browsers get what every client gets.
   */
  page?: SendAppPage | null;
}

const SHARED = '/api/shared';
// NOTE: the longest expiry `expires_in` takes: a century, well inside what a Date holds.
const MAX_EXPIRES_IN = 100 * 365 * 86400;

/**
 * How answers read through a link (its page too) may be cached: by the browser of whoever
 * holds it only, and asked again each time (cheaply, by ETag), so that a revoked or expired
 * link stops at once and every reuse is checked again, its password included.
 */
const SHARED_CACHING = 'private, no-cache';

const ShareKindSchema = Type.Union([Type.Literal('read'), Type.Literal('upload')], {
  description: 'read: anyone with the link downloads the data object, or lists and downloads the collection\'s members at any depth. upload: a drop box onto a collection; anyone with the link deposits new files directly inside it, and can neither list nor download.',
});

const CreateShareBody = Type.Object({
  path: Type.String({ minLength: 1, description: 'Absolute path of the collection or data object to share; you need own on it.' }),
  kind: ShareKindSchema,
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'When the link stops working (ISO 8601, e.g. 2026-06-30T12:00:00Z); not with expires_in.' })),
  expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRES_IN, description: 'Seconds from now until the link stops working; not with expires_at.' })),
  max_uses: Type.Optional(Type.Integer({ minimum: 1, description: 'How many uses the link allows: each download that sends bytes (a whole object or a range) and each uploaded file is one; HEAD, 304 and listings are none.' })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SHARE_PASSWORD_LENGTH, description: 'A password the link\'s users must send as HTTP Basic authentication, any user name (curl -u :PASSWORD).' })),
  max_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'For a drop box (kind upload) only: how many bytes it takes in all, every file together; a deposit that would pass it gets 413 and stores nothing. Without it, the server\'s shares.drop_max_bytes (10 GiB unless configured).' })),
}, {
  additionalProperties: false,
  examples: [
    { path: '/lading/home/alice/results.csv', kind: 'read', expires_in: 604800 },
    { path: '/lading/home/alice/incoming', kind: 'upload', max_uses: 20, max_bytes: 5368709120, password: 'correct horse' },
  ],
});

const ShareLinkFields = {
  id: Type.String({ description: 'The link\'s id, to revoke it (not a secret).' }),
  kind: ShareKindSchema,
  path: Type.Union([Type.String(), Type.Null()], { description: 'The shared entity\'s path now (links follow renames); null when it is gone.' }),
  creator: Type.String({ description: 'The user the link acts as: downloads read as this user, deposits are owned by this user.' }),
  created_at: Type.String({ description: 'ISO 8601.' }),
  expires_at: Type.Union([Type.String(), Type.Null()], { description: 'ISO 8601, or null for no expiry.' }),
  max_uses: Type.Union([Type.Integer(), Type.Null()], { description: 'null for no limit.' }),
  uses: Type.Integer({ description: 'Uses taken so far.' }),
  max_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'A drop box\'s bound on the bytes deposited, every file together; null for a read link.' }),
  bytes_used: Type.Integer({ description: 'Bytes deposited so far (with those that deposits under way have reserved); 0 for a read link.' }),
  password: Type.Boolean({ description: 'Whether the link asks for a password.' }),
  state: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('used up'), Type.Literal('gone')], {
    description: 'active, expired, used up, or gone (its entity no longer exists). An active link also stops working when its creator loses access.',
  }),
};

const LINK_EXAMPLE = {
  id: '0b4e5f7a-2c1d-4e8f-9a3b-6c5d4e3f2a1b', kind: 'read', path: '/lading/home/alice/results.csv', creator: 'alice',
  created_at: '2026-06-01T09:30:00.000Z', expires_at: '2026-06-08T09:30:00.000Z', max_uses: null, uses: 3, max_bytes: null, bytes_used: 0, password: false, state: 'active',
};

const ShareLink = Type.Object(ShareLinkFields, { examples: [LINK_EXAMPLE] });

const CreatedShare = Envelope(Type.Object({
  ...ShareLinkFields,
  token: Type.String({ description: 'The link\'s secret token; shown only in this answer.' }),
  url: Type.String({ description: 'The link: GET it to download or list, PUT <url>/<name> or POST a form to it to deposit.' }),
}, {
  examples: [{
    ...LINK_EXAMPLE, uses: 0, token: 'q3Vb0mY1xJ9sT2kW8fR4nL6pC7hD5gA0eZ1uI3oK9yM',
    url: 'https://staging.example.org/api/shared/q3Vb0mY1xJ9sT2kW8fR4nL6pC7hD5gA0eZ1uI3oK9yM',
  }],
}), 'The new link, with its token and URL (shown only here).');

const UpdateShareBody = Type.Object({
  expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the link stops working (ISO 8601), or null for never; not with expires_in.' })),
  expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXPIRES_IN, description: 'Seconds from now until the link stops working; not with expires_at.' })),
  max_uses: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'How many uses the link allows in all, those taken so far included; null for no limit.' })),
}, {
  additionalProperties: false,
  examples: [{ expires_in: 1209600 }, { expires_at: null, max_uses: 10 }],
});

const ShareList = Envelope(Type.Array(ShareLink), 'Share links.');
const UpdatedShare = Envelope(ShareLink, 'The link as it is now.');
const RevokedShare = Envelope(ShareLink, 'The link as it was before it was revoked.');

const SharedMember = Type.Object({
  name: Type.String(),
  kind: Type.Union([Type.Literal('collection'), Type.Literal('dataobject')]),
  size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes; null for a collection.' }),
  checksum: Type.Union([Type.String(), Type.Null()], { description: 'sha2:<base64 of SHA-256>; null for a collection.' }),
  created_at: Type.String({ description: 'ISO 8601.' }),
  modified_at: Type.String({ description: 'ISO 8601.' }),
  path: Type.String({ description: 'The member\'s path below the shared collection, e.g. /run1/reads.bam.' }),
  link: Type.String({ description: 'The member under the share link: a data object downloads, a collection lists.' }),
}, {
  examples: [{
    name: 'reads.bam', kind: 'dataobject', size: 52428800, checksum: 'sha2:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=',
    created_at: '2026-06-01T09:00:00.000Z', modified_at: '2026-06-01T09:00:00.000Z', path: '/run1/reads.bam',
    link: 'https://staging.example.org/api/shared/q3Vb0mY1xJ9sT2kW8fR4nL6pC7hD5gA0eZ1uI3oK9yM/run1/reads.bam',
  }],
});

const SharePage = Type.String({ description: 'The web app\'s page (HTML).' });

const SharedListing = Envelope(Type.Array(SharedMember), 'The members of the shared collection (or of a collection below it), sorted by name.');

const Deposit = Envelope(Type.Object({
  filename: Type.String(),
  size: Type.Integer(),
  checksum: Type.String({ description: 'sha2:<base64 of SHA-256>.' }),
}, { examples: [{ filename: 'results.csv', size: 18, checksum: 'sha2:0Vxbt+7qK1tJ2XgP3xP5r1oHn1cVnN6Zf0kC9y0E0nU=' }] }), 'The deposited file.');

// NOTE: the router refuses a parameter over 100 characters with 414 before any handler runs.
const TOKEN_DOC = 'The share link\'s token (43 characters; one over 100 is refused with 414).';
const TokenParams = Type.Object({
  token: Type.String({ description: TOKEN_DOC }),
});
const TokenPathParams = Type.Object({
  token: Type.String({ description: TOKEN_DOC }),
  '*': Type.String({ description: 'A path below the shared collection, each segment percent-encoded; for PUT, the name of the new file.' }),
});
const ListSharesQuery = Type.Object({
  path: Type.Optional(Type.String({ minLength: 1, description: 'An entity you own: list its links. Without it: the links that act as you.' })),
}, { additionalProperties: true });
const ShareIdParams = Type.Object({ id: Type.String({ description: 'The link\'s id (one over 100 characters is refused with 414).' }) });

// NOTE: the scheme and authority of an absolute-form request target, which the router strips.
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The token and the path below the shared entity that a request target
 * (`/api/shared/<token>[/<path>]`) names; the path is `/` for the entity itself. Rejects with
 * `INVALID_PATH` for a path `core/path.ts` refuses and `NOT_FOUND` for a token that is not
 * percent-encoded UTF-8.
 */
function sharedTarget(target: string): { token: string; path: Path } {
  const pathname = target.split('?', 1)[0]!.replace(ABSOLUTE_FORM, '');
  const rest = pathname.slice(`${SHARED}/`.length);
  const slash = rest.indexOf('/');
  let token: string;
  try {
    token = decodeURIComponent(slash < 0 ? rest : rest.slice(0, slash));
  } catch {
    throw new LadingError('NOT_FOUND', 'No such link.');
  }
  return { token, path: parseUrlPath(slash < 0 ? '' : rest.slice(slash)) };
}

function linkRecord(view: ShareView) {
  const { share } = view;
  return {
    id: share.id, kind: share.kind, path: view.path, creator: share.creator,
    created_at: share.createdAt.toISOString(), expires_at: share.expiresAt?.toISOString() ?? null,
    max_uses: share.maxUses, uses: share.uses,
    max_bytes: view.maxBytes, bytes_used: share.bytesUsed,
    password: share.passwordHash !== null, state: view.state,
  };
}

function memberRecord(shareUrl: string, access: ShareAccess, entity: Entity) {
  const path = access.relative(entity);
  return {
    name: entity.name,
    kind: entity.kind,
    size: entity.kind === 'dataobject' ? entity.size : null,
    checksum: entity.kind === 'dataobject' ? entity.checksum : null,
    created_at: entity.createdAt.toISOString(),
    modified_at: entity.modifiedAt.toISOString(),
    path,
    link: `${shareUrl}${path === '/' ? '' : encodePath(path)}`,
  };
}

function depositRecord(object: DataObject) {
  return { filename: object.name, size: object.size, checksum: object.checksum };
}

export function registerShareRoutes(app: TypedApp, deps: ShareRouteDeps): void {
  const { shares, backend } = deps;
  const owner = { security: [{ bearer: [] }], tags: ['shares'] };
  // NOTE: a link without a password needs no credential; one with a password takes it as Basic.
  const holder = { security: [{}, { sharePassword: [] }] as Record<string, string[]>[], tags: ['shares'] };
  const preHandler = async (request: FastifyRequest) => {
    await deps.authenticate(request);
  };
  const actorOf = (request: FastifyRequest) => backend.actorOf(request.auth!.credential, viaOf(request));
  const shareUrl = (request: FastifyRequest, token: string) => `${deps.urls(request).base}${SHARED}/${encodeURIComponent(token)}`;

  app.post('/api/shares', {
    schema: {
      ...owner,
      operationId: 'createShare',
      summary: 'Create a share link (read) or a drop box (upload) for an entity you own',
      description: 'The answer holds the link\'s token and URL, shown only here (lading keeps only the token\'s SHA-256). A drop box takes at most max_bytes in all (shares.drop_max_bytes unless given); max_bytes on a read link is 400. 429 when the user the link acts as already holds shares.max_active_per_user active links.',
      body: CreateShareBody,
      response: { 201: CreatedShare, ...errorResponses(401, 403, 404, 413, 415, 429) },
    },
    links: { 201: { Revoke: { operationId: 'revokeShare', parameters: { id: '$response.body#/Response/data/id' }, description: 'Revoke the link.' } } },
    preHandler,
  }, async (request, reply) => {
    const { body } = request;
    const actor = await actorOf(request);
    const { view, token } = await shares.create(actor, {
      path: parsePath(body.path), kind: body.kind,
      expiresAt: body.expires_at === undefined ? null : new Date(body.expires_at), expiresIn: body.expires_in ?? null,
      maxUses: body.max_uses ?? null, password: body.password ?? null, maxBytes: body.max_bytes ?? null,
    });
    reply.code(201);
    return envelope({ ...linkRecord(view), token, url: shareUrl(request, token) }, 201);
  });

  app.get('/api/shares', {
    schema: {
      ...owner,
      operationId: 'listShares',
      summary: 'List the links of an entity you own (path=…), or the links that act as you',
      querystring: ListSharesQuery,
      response: { 200: ShareList, ...errorResponses(401, 403, 404) },
    },
    preHandler,
  }, async (request) => {
    const actor = await actorOf(request);
    const path = request.query.path;
    const views = path === undefined ? await shares.listMine(actor) : await shares.listOf(actor, parsePath(path));
    return envelope(views.map(linkRecord));
  });

  app.delete('/api/shares/:id', {
    schema: {
      ...owner,
      operationId: 'revokeShare',
      summary: 'Revoke a link (its creator, or a holder of own on its entity): refused from the next request on, on every node',
      params: ShareIdParams,
      response: { 200: RevokedShare, ...errorResponses(401, 403, 404, 414) },
    },
    preHandler,
  }, async (request) => {
    const view = await shares.revoke(await actorOf(request), request.params.id);
    return envelope(linkRecord(view));
  });

  app.patch('/api/shares/:id', {
    schema: {
      ...owner,
      operationId: 'updateShare',
      summary: 'Change a link\'s expiry or use limit (its creator, or a holder of own on its entity); the link itself stays the same',
      description: 'Give expires_at or expires_in (null: no expiry), max_uses (null: no limit), or both; what is left out stays. Uses taken so far count against the new max_uses; a link that expired or was used up works again once its new bounds allow it. 404 when there is no such link or you may not change it.',
      params: ShareIdParams,
      body: UpdateShareBody,
      response: { 200: UpdatedShare, ...errorResponses(401, 403, 404, 413, 414, 415, 429) },
    },
    preHandler,
  }, async (request) => {
    const { body } = request;
    const view = await shares.update(await actorOf(request), request.params.id, {
      ...(body.expires_at === undefined ? {} : { expiresAt: body.expires_at === null ? null : new Date(body.expires_at) }),
      ...(body.expires_in === undefined ? {} : { expiresIn: body.expires_in }),
      ...(body.max_uses === undefined ? {} : { maxUses: body.max_uses }),
    });
    return envelope(linkRecord(view));
  });

  /**
   * Opens the link a request names, with its password (Basic, as curl sends it, else the cookie
   * a browser got from `POST <link>/password`) and client address.
   */
  const open = (request: FastifyRequest, token: string) =>
    shares.open(token, { password: basicPassword(request.raw) ?? sharePasswordOf(request.headers), address: request.ip });

  /**
   * The web app's page for a browser that opens a link: what the link shares (a data object's
   * name, size and checksum; a collection, which the app then lists; a drop box), or why it
   * leads nowhere, with the status the API would answer. Takes no use: no bytes are sent.
   */
  const sharePage = async (request: FastifyRequest, reply: FastifyReply, send: SendAppPage) => {
    let share: unknown;
    let status = 200;
    let url: string | null = null;
    try {
      const { token, path } = sharedTarget(request.url);
      url = shareUrl(request, token);
      const access = await open(request, token);
      if (access.kind === 'upload') {
        if (path !== '/') throw new LadingError('FORBIDDEN', 'A drop box takes files; it cannot list or download.');
        share = { kind: 'upload', url };
      } else {
        const entity = await shares.entry(access, path);
        share = { kind: 'read', url, entry: memberRecord(url, access, entity), root: access.root.name };
      }
    } catch (err) {
      const mapped = toLadingError(err);
      const { status: code, title } = STATUS_BY_CODE[mapped.code];
      status = code;
      if (code >= 500) request.log.error({ err }, 'share page failed');
      else request.log.info({ code: mapped.code, reason: mapped.message }, 'request refused');
      // NOTE: no Basic challenge to a browser: the page asks for the password itself (its own
      // field, not a prompt for a user name that means nothing) and posts it to <link>/password.
      const retryAfter = retryAfterOf(mapped);
      if (retryAfter !== null) reply.header('Retry-After', retryAfter);
      share = { error: { status: code, title, message: mapped.message, passwordRequired: mapped.details.passwordRequired === true, url } };
    }
    return send(reply, { status, title: 'Shared with you · lading', data: { share }, cacheControl: SHARED_CACHING });
  };


  const read = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', SHARED_CACHING);
    reply.header('Vary', 'Accept');
    if (deps.page && wantsPage(request.method, request.url, request.headers.accept)) return sharePage(request, reply, deps.page);
    const { token, path } = sharedTarget(request.url);
    const access = await open(request, token);
    const mode = downloadMode(new URLSearchParams(request.url.split('?')[1] ?? '').get('download') ?? undefined);
    if (mode === 'zip' || mode === 'bag') {
      // NOTE: the bag names where it came from without the link's token, which is a secret.
      return sendArchive(request, reply, deps.archives, {
        format: mode, key: `address:${request.ip}`, open: () => shares.walk(access, path), beforeBytes: () => shares.takeUse(access),
        source: `${deps.urls(request).base}${SHARED}/ (a share link)`,
      });
    }
    const entity = await shares.entry(access, path);
    if (entity.kind === 'dataobject') return sendDownload(request, reply, (plan) => shares.openObject(access, path, plan));
    const { children } = await shares.list(access, path);
    const base = shareUrl(request, token);
    return envelope(children.map((child) => memberRecord(base, access, child)));
  };

  const readSchema = {
    ...holder,
    description: 'A browser (a GET whose Accept prefers text/html to application/json, without download) gets the web app\'s page for the link, with the status below; every other client gets what follows. A read link to a data object answers its bytes (HEAD, Range, If-Range and the conditional headers apply; each answer with bytes is one use). A read link to a collection lists its members, and <link>/<path> downloads or lists any member below it; ?download=zip (or bag) on a collection answers it as one ZIP archive (or a BagIt bag in a ZIP), one use of the link. A drop box answers 403: it cannot list or download. 401 with WWW-Authenticate: Basic when the link needs its password; 404 for an unknown or revoked link, or one that no longer leads anywhere; 410 once it expired or was used up.',
    response: {
      200: {
        description: 'The listing of a collection, or the bytes of a data object, or with download=zip or bag the archive of a collection; to a browser (a GET whose Accept prefers text/html, without download), the web app\'s page showing what the link shares.',
        content: { 'application/json': { schema: SharedListing }, 'application/octet-stream': { schema: Bytes }, 'application/zip': { schema: Bytes }, 'text/html': { schema: SharePage } },
      },
      206: { description: 'The requested range of the data object.', content: { 'application/octet-stream': { schema: Bytes } } },
      304: Type.Null({ description: 'Not modified (If-None-Match or If-Modified-Since).' }),
      ...errorResponses(400, 412, 413, 414, 416),
      ...Object.fromEntries(([401, 403, 404, 410, 429] as const).map((status) => [status, {
        description: 'The error envelope; to a browser, the web app\'s page saying why.',
        content: { 'application/json': { schema: ErrorEnvelope }, 'text/html': { schema: SharePage } },
      }])),
    },
  };

  app.route({
    method: ['GET', 'HEAD'],
    url: `${SHARED}/:token`,
    exposeHeadRoute: false,
    schema: { ...readSchema, operationId: 'getShared', summary: 'Download or list what a share link shares (no account needed)', params: TokenParams },
    handler: (request, reply) => read(request, reply),
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: `${SHARED}/:token/*`,
    exposeHeadRoute: false,
    schema: { ...readSchema, operationId: 'getSharedMember', summary: 'Download or list a member below a shared collection (no account needed)', params: TokenPathParams },
    handler: (request, reply) => read(request, reply),
  });

  const depositSchema = {
    ...holder,
    response: { 201: Deposit, ...errorResponses(401, 403, 404, 409, 410, 413, 414, 415, 429) },
  };

  app.put(`${SHARED}/:token/*`, {
    schema: {
      ...depositSchema,
      operationId: 'putShared',
      summary: 'Deposit a file into a drop box: the raw body, as a new object named by the last segment (no account needed)',
      description: 'The object is created directly inside the drop box\'s collection, owned by the link\'s creator, under the creator\'s rules (PIDs included); an existing name is 409, never overwritten. Content-Digest, Repr-Digest and Content-MD5 are checked. Each file is one use. 413 when the file would pass the drop box\'s max_bytes (all files together), before the body is read when Content-Length says so; nothing is stored.',
      params: TokenPathParams,
      consumes: ['application/octet-stream'],
    },
  }, async (request, reply) => {
    const { token, path } = sharedTarget(request.url);
    const access = await open(request, token);
    const segments = path.split('/').filter((s) => s.length > 0);
    if (segments.length !== 1) {
      throw new LadingError('BAD_REQUEST', 'A drop box takes files directly inside it: PUT /api/shared/<token>/<name>, one name without \'/\'.');
    }
    const length = Number(request.headers['content-length']);
    if (Number.isFinite(length) && length > deps.maxUploadBytes) {
      throw new LadingError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${deps.maxUploadBytes} bytes.`);
    }
    const given = request.headers['content-type'];
    const type = (given ?? '').split(';', 1)[0]!.trim().toLowerCase();
    // NOTE: a body without Content-Type is taken as application/octet-stream (RFC 9110 §8.3).
    if (type !== 'application/octet-stream' && !(given === undefined && hasBody(request.headers))) {
      throw new LadingError('UNSUPPORTED_MEDIA_TYPE', `Deposit the file as the raw body with Content-Type application/octet-stream, or POST a multipart form to the link, not ${given === undefined ? 'without a Content-Type and a body' : `'${type}'`}.`);
    }
    const object = await shares.upload(access, segments[0]!, request.raw, {
      expected: announcedDigests(request.headers), ...(Number.isSafeInteger(length) && length >= 0 ? { length } : {}),
    });
    reply.code(201);
    return envelope(depositRecord(object), 201);
  });

  app.post(`${SHARED}/:token/password`, {
    schema: {
      ...holder,
      security: [{}],
      operationId: 'unlockShared',
      summary: 'A browser gives a password-protected link its password once: the answer sets a cookie that sends it with every request under the link, until the browser closes',
      description: 'For the link\'s page, whose password field posts here (JSON or a form). A wrong password is 401 and counts against shares.max_failed_passwords as a wrong Basic password does; curl and scripts keep sending the password as Basic (-u :password) instead.',
      params: TokenParams,
      body: Type.Object({ password: Type.String({ minLength: 1, maxLength: MAX_SHARE_PASSWORD_LENGTH }) }, { additionalProperties: false }),
      response: { 200: Envelope(Type.Object({ remembered: Type.Boolean({ description: 'Whether a cookie now holds the password (false for a link without one).' }) }), 'The password is right.'), ...errorResponses(400, 401, 403, 404, 410, 414, 415, 429) },
    },
  }, async (request, reply) => {
    const { token } = sharedTarget(request.url);
    const { password } = request.body;
    // NOTE: a wrong password is answered without the Basic challenge, which would make the
    // browser whose page posted it show its own password prompt.
    const access = await shares.open(token, { password, address: request.ip }).catch((err: unknown) => {
      if (err instanceof LadingError && err.details.passwordRequired) throw new LadingError('UNAUTHENTICATED', err.message, { cause: err });
      throw err;
    });
    const remembered = access.passwordProtected;
    if (remembered) reply.header('Set-Cookie', sharePasswordCookie(`${SHARED}/${encodeURIComponent(token)}`, password, secureCookies(deps.urls(request).base)));
    return envelope({ remembered });
  });

  app.post(`${SHARED}/:token`, {
    schema: {
      ...depositSchema,
      operationId: 'postShared',
      summary: 'Deposit a file into a drop box with a browser form: multipart field `file`, stored under the form\'s file name (no account needed)',
      description: 'As PUT: a new object directly inside the drop box\'s collection, owned by the link\'s creator; an existing name is 409 (a force field is ignored); 413 when the file would pass the drop box\'s max_bytes (all files together).',
      params: TokenParams,
      consumes: ['multipart/form-data'],
    },
  }, async (request, reply) => {
    const { token } = sharedTarget(request.url);
    const access = await open(request, token);
    const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type !== 'multipart/form-data') {
      throw new LadingError('UNSUPPORTED_MEDIA_TYPE', 'POST a multipart/form-data form with the file in the field \'file\', or PUT the raw body to <link>/<name>.');
    }
    const form = new UploadForm(request, { force: false, maxFileBytes: deps.maxUploadBytes });
    const object = await form.read((file) => shares.upload(access, file.filename, file.source));
    reply.code(201);
    return envelope(depositRecord(object), 201);
  });
}
