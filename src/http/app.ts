/**
 * Builds the Fastify application from already-created dependencies: plugins, the error
 * mapping, OpenAPI, and the routes. Reads no environment and opens no file, so tests build it
 * with temporary drivers and test doubles.
 */
import type { AuditReader } from '../core/audit.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import type { FastifyBaseLogger } from 'fastify';
import type { Backend } from '../core/backend.ts';
import type { AccessControl } from '../core/access-control.ts';
import type { Metadata } from '../core/metadata.ts';
import type { Publishing } from '../core/publishing.ts';
import type { PublicBase } from '../core/public-base.ts';
import type { ShareService } from '../core/shares.ts';
import { LadingError } from '../core/errors.ts';
import type { SessionService, AuthenticatedSession } from '../identity/sessions/sessions.ts';
import { authenticator } from './authorization.ts';
import type { Urls } from './envelope.ts';
import { registerBodyParsers } from './body-parsers.ts';
import { startAnswer } from './caching.ts';
import { registerErrorHandlers, sendError, toLadingError } from './errors.ts';
import { registerMethodRules } from './methods.ts';
import { clientErrorHandler, registerProtocolRules } from './protocol.ts';
import { openapiOptions } from './openapi.ts';
import { registerOpenApi } from './lazy-openapi.ts';
import { lazyCompilers } from './lazy-compilers.ts';
import { registerResponseCheck } from './response-check.ts';
import { registerCompression } from './compression.ts';
import { registerRegisteredRoutes } from './routes-registered.ts';
import { registerUploadRoutes } from './routes-uploads.ts';
import type { ResumableUploads } from '../core/uploads.ts';
import { registerPidRoutes } from './routes-pids.ts';
import { registerTrashRoutes } from './routes-trash.ts';
import { registerArchiveRoutes } from './routes-archive.ts';
import { registerSearchRoutes } from './routes-search.ts';
import { registerQuotaRoutes } from './routes-quota.ts';
import { registerS3KeyRoutes } from './routes-s3-keys.ts';
import type { QuotaService } from '../core/quotas.ts';
import { registerAuditRoutes } from './routes-audit.ts';
import type { S3Keys } from '../core/s3-keys.ts';
import type { Trash } from '../core/trash.ts';
import type { Search } from '../core/search.ts';
import type { Locks } from '../core/locks.ts';
import { registerDav } from '../dav/routes.ts';
import { davAuthenticator } from '../dav/auth.ts';
import { registerAccessRoutes } from './routes-access.ts';
import { registerShareRoutes } from './routes-shares.ts';
import { type ArchiveLimits, ArchiveSlots } from './archive-download.ts';
import type { PidProvider } from '../core/ports.ts';
import { registerAuthRoutes } from './routes-auth.ts';
import { registerSessionRoutes } from './routes-session.ts';
import { type ReadinessCheck, registerStatusRoutes } from './routes-status.ts';
import { type CaEndpoint, registerCaRoutes } from './routes-ca.ts';
import { registerOidcRoutes } from './routes-oidc.ts';
import { logSafeUrl } from './log-safe-url.ts';
import type { OidcLogin } from '../identity/oidc/oidc-login.ts';
import type { WebAssets } from '../web/bundle.ts';
import { registerWebRoutes } from './routes-web.ts';
import { registerRequestScope } from './request-scope.ts';

export interface AppDeps {
  backend: Backend;
  /** Access lists, metadata and publishing over the API (`/api/acl`, `/api/metadata`, `/api/publish`, `/api/public`). */
  accessControl: AccessControl;
  metadata: Metadata;
  publishing: Publishing;
  sessions: SessionService;
  logger: FastifyBaseLogger;
  /** Where links start: the configured public URL, else each request's checked Host. */
  publicBase: PublicBase;
  /** Scheme and host of backend locations, e.g. `lading://storage.example.org`. */
  backendUrl: string;
  maxUploadBytes: number;
  /** Trust X-Forwarded-* from a reverse proxy. */
  trustProxy: boolean;
  version: string;
  /** The online CA endpoint, mounted when lading runs its own CA. */
  ca?: CaEndpoint | null;
  /** OpenID Connect login (`/auth/askauth`, and the embedded provider under `/oidc`). */
  oidc?: OidcLogin | null;
  /** Waits for PID jobs (`pid_await`); absent when no rules are configured. */
  jobs?: { waitFor(ids: readonly string[], timeoutMs: number): Promise<boolean> };
  /** Resumable uploads (`/api/uploads`, tus); not mounted when absent. */
  uploads?: ResumableUploads | null;
  /** Resolves PIDs for `/api/pids` and `/api/handles`. */
  pids?: PidProvider | null;
  /** Longest `pid_await` wait, in ms (default 10 s, spec §8). */
  pidAwaitMs?: number;
  /** How long a request body may send nothing before it is dropped, in ms (default 60 s). */
  bodyIdleTimeoutMs?: number;
  /** Limits of archives of collections (`download=zip`, `download=bag`); defaults as the configuration's. */
  archives?: { maxEntries: number; concurrentPerUser: number };
  /** The trash (`/api/trash`) and PID tombstones; not mounted when absent. */
  trash?: Trash | null;
  /** Search and recent uploads (`/api/search`, `/api/recent`); not mounted when absent. */
  search?: Search | null;
  /** WebDAV locks; the WebDAV front (`/dav`) is mounted when they and the trash are given. */
  locks?: Locks | null;
  /** Share links and drop boxes (`/api/shares`, `/api/shared`); not mounted when absent. */
  shares?: ShareService | null;
  /** Users' S3 access keys (`/api/s3/keys`); not mounted when absent. */
  s3Keys?: S3Keys | null;
  /** Quotas (`/api/quota`, and WebDAV's quota properties); not mounted when absent. */
  quotas?: QuotaService | null;
  /** Reads of the audit trail (`/api/admin/audit`); not mounted when absent. */
  audit?: AuditReader | null;
  /** Fail a JSON answer that its response schema would change (tests; see `response-check.ts`). */
  checkResponses?: boolean;
  /** Compress text answers when the client asks (see `compression.ts`); off when absent. */
  compress?: boolean;
  /** The web app's assets, served at `/` and `/app/`; not mounted when absent. */
  web?: WebAssets | null;
  /** Readiness (`/api/ready`); not mounted when absent. */
  readiness?: ReadinessCheck | null;
  /**
   * Called with the app before any hook or route is added (the metrics count every request
   * through hooks of their own, fronts registered later included).
   */
  instrument?: ((app: FastifyInstance) => void) | null;
  /** The S3 endpoint the session tells clients, from a request's base URL; null or absent when no S3 listener runs. */
  s3Endpoint?: ((base: string) => string | null) | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthenticatedSession | null;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request, written once its answer is sent (instead of Fastify's "incoming
 * request" and "request completed"): method, URL with secrets cut out of the query, status,
 * duration and user in the message, and `req`, `res` and `responseTime` for log collectors.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const user = request.auth?.session.user;
    const line = `${request.method} ${logSafeUrl(request.url)} ${reply.statusCode} in ${Math.round(reply.elapsedTime)} ms${user ? ` (${user})` : ''}`;
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, line);
    else reply.log.info(fields, line);
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const fastify = Fastify({
    loggerInstance: deps.logger,
    logController: new RequestLog(),
    trustProxy: deps.trustProxy,
    // NOTE: uploads can be long; the limits below cap only how long the headers may take and
    // how long a connection may sit idle, never the duration of a transfer.
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 65_000,
    bodyLimit: 1 << 20,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    // NOTE: a route's schemas are compiled when it is first used (see lazy-compilers.ts).
    schemaController: { compilersFactory: lazyCompilers() },
    // NOTE: Node answers a missing Host with a bare 400; `registerProtocolRules` answers it
    // with the envelope instead.
    http: { requireHostHeader: false },
    clientErrorHandler,
    // Errors Fastify raises before routing (e.g. a URL that is not valid percent-encoding)
    // get the same envelope as every other error.
    frameworkErrors: (err, _request, reply) => {
      // NOTE: before routing, so before the onRequest hook below.
      startAnswer(reply);
      const mapped = err.code === 'FST_ERR_BAD_URL'
        ? new LadingError('INVALID_PATH', 'The URL is not valid percent-encoded UTF-8.', { cause: err })
        : toLadingError(err);
      void sendError(reply, mapped);
    },
  });
  // NOTE: the same instance, seen by the routes with request types derived from their schemas.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  deps.instrument?.(fastify);
  app.server.headersTimeout = 60_000;
  app.decorateRequest('auth', null);
  // NOTE: the reply being sent, and once the server is idle the last one sent, stays reachable,
  // and with it its request (`reply.request`). When the server falls idle, the reclaimer collects the heap
  // fully; with no request left alive, the hidden classes of these objects and of what they hold
  // would die too, and V8 would deoptimise the request path compiled against them. The first
  // 2 s of the next burst then cost 30–56% more CPU than after a short pause, against 14–19%
  // with one kept (bench/README.md).
  let lastReply: FastifyReply | null = null;
  registerRequestScope(app);
  // NOTE: synchronous hooks (a throw is the request's error, as a rejection would be) keep a
  // promise and a turn of the microtask queue off every request.
  app.addHook('onRequest', (request, reply, done) => {
    lastReply = reply;
    startAnswer(reply);
    reply.header('X-Request-Id', request.id);
    // NOTE: links in answers are made from the Host when no public URL is configured, so a
    // Host that is not host[:port] must not get that far.
    deps.publicBase.check(request);
    done();
  });

  registerErrorHandlers(app);
  // NOTE: on under test only: the check costs a stringify and two parses of every JSON answer.
  if (deps.checkResponses) registerResponseCheck(app);
  // NOTE: after the response check, which reads the payload this replaces.
  if (deps.compress) registerCompression(app);
  registerMethodRules(app);
  registerProtocolRules(app, { bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs ?? 60_000 });
  registerBodyParsers(app);
  // NOTE: preservePath hands lading the form's file name as sent: busboy would otherwise cut it
  // to its last segment, so `a/b.txt` or `..\\b.txt` would be stored as `b.txt` instead of
  // being refused by the name rule like every other way of naming an entity.
  await app.register(multipart, { throwFileSizeLimit: false, preservePath: true });

  // NOTE: @fastify/swagger and @fastify/swagger-ui, loaded at the first request for the
  // document or the viewer (see lazy-openapi.ts).
  await registerOpenApi(app, openapiOptions(deps.version), { routePrefix: '/api/docs', uiConfig: { url: '/api/specs' } });

  const urls = (request: FastifyRequest): Urls => ({ base: deps.publicBase.forRequest(request), backend: deps.backendUrl });
  const authenticate = authenticator(deps.sessions, deps.publicBase);

  registerStatusRoutes(app, deps.publicBase, deps.readiness ?? null);
  registerAuthRoutes(app, { ...deps, authenticate });
  // NOTE: one count of archives in flight for every endpoint that sends them.
  const archives: ArchiveLimits = {
    slots: new ArchiveSlots(deps.archives?.concurrentPerUser ?? 2), maxEntries: deps.archives?.maxEntries ?? 200_000,
  };
  const web = deps.web ? registerWebRoutes(app, { assets: deps.web }) : null;
  const registered = registerRegisteredRoutes(app, { ...deps, urls, authenticate, archives, pidAwaitMs: deps.pidAwaitMs ?? 10_000 });
  registerAccessRoutes(app, { ...deps, urls, authenticate, archives, page: web?.sendPage ?? null });
  registerArchiveRoutes(app, { backend: deps.backend, authenticate, archives });
  if (deps.pids) {
    registerPidRoutes(app, {
      pids: deps.pids, download: registered.downloadAt, publishing: deps.publishing, urls, trash: deps.trash ?? null,
      // NOTE: the web app's session (or a token) shows the landing page to its user, who is
      // offered the download when they may read the object; without one, the anonymous actor.
      viewerOf: async (request) => {
        const signedIn = await authenticate(request).then(() => true, () => false);
        return signedIn && request.auth ? deps.backend.actorOf(request.auth.credential) : deps.backend.anonymousActor();
      },
      signIn: deps.oidc ? '/auth/signin' : null,
    });
  }
  if (deps.trash) registerTrashRoutes(app, { backend: deps.backend, trash: deps.trash, urls, authenticate });
  if (deps.search) registerSearchRoutes(app, { backend: deps.backend, search: deps.search, urls, authenticate });
  if (deps.s3Keys) registerS3KeyRoutes(app, { backend: deps.backend, s3Keys: deps.s3Keys, authenticate });
  if (deps.quotas) registerQuotaRoutes(app, { backend: deps.backend, quotas: deps.quotas, authenticate });
  if (deps.audit) registerAuditRoutes(app, { backend: deps.backend, audit: deps.audit, authenticate });
  if (deps.shares) registerShareRoutes(app, { shares: deps.shares, backend: deps.backend, authenticate, urls, archives, maxUploadBytes: deps.maxUploadBytes, page: web?.sendPage ?? null });
  if (deps.uploads) registerUploadRoutes(app, { ...deps, uploads: deps.uploads, urls, authenticate, pidAwaitMs: deps.pidAwaitMs ?? 10_000 });
  if (deps.ca) registerCaRoutes(app, deps.ca);
  if (deps.trash && deps.locks) {
    await registerDav(fastify, {
      backend: deps.backend, trash: deps.trash, metadata: deps.metadata, locks: deps.locks, quotas: deps.quotas ?? null,
      authenticate: davAuthenticator(deps.sessions), maxUploadBytes: deps.maxUploadBytes,
    });
  }
  registerSessionRoutes(app, { ...deps, authenticate, provider: deps.oidc?.embedded === false ? 'external' : 'embedded' });
  if (deps.oidc) await registerOidcRoutes(app, { ...deps, oidc: deps.oidc });
  return fastify;
}
