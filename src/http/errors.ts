/**
 * The one mapping from error codes to HTTP statuses and envelope titles, and the Fastify error
 * handler that uses it. A code without a status is a compile error. Nothing outside
 * `src/http` turns an error into HTTP words: this module and the routes do.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, LadingError, isLadingError } from '../core/errors.ts';
import { type Envelope, errorEnvelope } from './envelope.ts';

export interface ErrorMapping {
  status: number;
  title: string;
  /** What a client should do about it, for the error table of docs/api.md. */
  advice: string;
}

/**
 * Codes to statuses and titles. Where several codes share a status, the first listed is the
 * general one, whose title an error known only by that status gets (`titleOfStatus`).
 */
export const STATUS_BY_CODE = {
  BAD_REQUEST: { status: 400, title: 'Bad request', advice: 'Fix the named parameter and retry.' },
  INVALID_PATH: { status: 400, title: 'Invalid path', advice: 'Use an absolute path of valid names (no ., .., control, bidirectional or invisible format characters; the message names the one refused).' },
  IS_A_COLLECTION: { status: 400, title: 'Is a collection', advice: 'Download data objects one by one; list the collection to see them.' },
  NOT_A_COLLECTION: { status: 400, title: 'Not a collection', advice: 'The path names a data object where a collection is needed.' },
  DIGEST_MISMATCH: { status: 400, title: 'Digest mismatch', advice: 'The body was corrupted in transit; upload it again.' },
  INCOMPLETE_BODY: { status: 400, title: 'Incomplete body', advice: 'The body ended early; upload it again.' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthorized', advice: 'Log in (POST /auth/login or GET /auth/askauth) and send Authorization: Bearer <token>.' },
  INVALID_CREDENTIAL: { status: 401, title: 'Invalid credential', advice: 'Log in again to obtain a new credential.' },
  FORBIDDEN: { status: 403, title: 'Forbidden', advice: 'Ask the owner for access.' },
  NOT_FOUND: { status: 404, title: 'Not found', advice: 'Check the path; list the parent collection.' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', advice: 'See the Allow header.' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request timeout', advice: 'The request body stalled; upload it again.' },
  CONFLICT: { status: 409, title: 'Conflict', advice: 'Choose another name, or add force=true to overwrite; for an access list, a publication or a resumable upload, do first what the message says.' },
  GONE: { status: 410, title: 'Gone', advice: 'The link expired or was used up (ask its owner for a new one), or the data were withdrawn (the PID\'s landing page says when and why).' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed', advice: 'The object changed; fetch it again.' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', advice: 'The body exceeds the configured limit.' },
  URI_TOO_LONG: { status: 414, title: 'URI too long', advice: 'Shorten the path segment or the query.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', advice: 'Send application/octet-stream, multipart/form-data or JSON as documented.' },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range not satisfiable', advice: 'Ask for a range inside the object (see Content-Range).' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too many requests', advice: 'Wait for Retry-After seconds.' },
  HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large', advice: 'Shorten the URL or the headers (at most 16 KiB together).' },
  INTERNAL: { status: 500, title: 'Internal server error', advice: 'Retry; report the X-Request-Id if it persists.' },
  OBJECT_DAMAGED: { status: 500, title: 'Object damaged', advice: 'The stored bytes of this data object no longer match its checksum (or are missing), so lading will not serve them: ask the operators to restore them (lading fsck lists what is damaged), or upload the object again.' },
  PROXY_EXPIRED: { status: 500, title: 'Expired proxy credential', advice: "Make 'POST' on '/auth/proxy', then retry." },
  NOT_IMPLEMENTED: { status: 501, title: 'Not implemented', advice: 'Send the body without a transfer coding other than chunked; lading is not a proxy (no CONNECT).' },
  HTTP_VERSION_NOT_SUPPORTED: { status: 505, title: 'HTTP version not supported', advice: 'Speak HTTP/1.1 (or HTTP/1.0).' },
  STORAGE_FULL: { status: 507, title: 'Insufficient storage', advice: 'The storage is full; retry later or contact the operators.' },
  QUOTA_EXCEEDED: { status: 507, title: 'Quota exceeded', advice: 'The write would pass a quota (the message names it, its limit and its usage); nothing was kept. Free space (empty the trash: what it holds counts) or ask the operators for more.' },
  CHECKSUM_MISMATCH: { status: 460, title: 'Checksum mismatch', advice: 'The bytes of this resumable-upload request do not match the digest it announced and were not kept: send them again from the upload\'s offset, or start a new upload where the message says so.' },
  LOCKED: { status: 423, title: 'Locked', advice: 'A WebDAV lock held by someone else, or whose token the request did not send, covers the resource: send its token in an If header, or wait for it to be unlocked or to expire.' },
  UNAVAILABLE: { status: 503, title: 'Service unavailable', advice: 'A dependency (the catalog database, the object store, the identity provider) is down or restarting; retry after Retry-After seconds.' },
} as const satisfies Record<ErrorCode, ErrorMapping>;

/**
 * Seconds a `503` asks the client to wait (`Retry-After`) unless the error says otherwise: a
 * dependency that restarts (PostgreSQL, the S3 store, the identity provider) is usually back
 * within a few seconds, and a client retrying sooner only adds load.
 */
export const UNAVAILABLE_RETRY_AFTER = 5;

/**
 * The `Retry-After` an answer carrying `err` sends, or null: the seconds the error names for
 * `TOO_MANY_REQUESTS`, and for `UNAVAILABLE` those it names or `UNAVAILABLE_RETRY_AFTER`.
 */
export function retryAfterOf(err: LadingError): string | null {
  const named = typeof err.details.retryAfter === 'number' ? String(err.details.retryAfter) : null;
  // NOTE: a refusal that ends by itself says when: too many requests (429), an upload another
  // request holds (409, the seconds left on its lease).
  if (err.code === 'TOO_MANY_REQUESTS' || err.code === 'CONFLICT') return named;
  if (err.code === 'UNAVAILABLE') return named ?? String(UNAVAILABLE_RETRY_AFTER);
  return null;
}

/** The content type of every envelope. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The title of an error known only by its status (one a library reports, such as the embedded
 * OpenID Provider): the general code's title for that status; 'Internal server error' for a
 * status no code has.
 */
export function titleOfStatus(status: number): string {
  return Object.values(STATUS_BY_CODE).find((m) => m.status === status)?.title ?? STATUS_BY_CODE.INTERNAL.title;
}

/** The status and the error envelope `err` is sent as. */
export function errorEnvelopeOf(err: LadingError): { status: number; body: Envelope<null> } {
  const { status, title } = STATUS_BY_CODE[err.code];
  return { status, body: errorEnvelope(status, [{ [title]: err.message }]) };
}

/**
 * An error page of the embedded OpenID Provider (which reports its errors by status and
 * message): lading's error envelope, titled as `titleOfStatus`, with its content type.
 */
export function errorPage(status: number, message: string): { contentType: string; body: string } {
  return { contentType: JSON_TYPE, body: JSON.stringify(errorEnvelope(status, [{ [titleOfStatus(status)]: message }])) };
}

/** Turns any thrown value into a `LadingError`, classifying Fastify's own errors. */
export function toLadingError(err: unknown): LadingError {
  if (isLadingError(err)) return err;
  const fe = err as FastifyError & { validation?: unknown; validationContext?: string };
  if (fe && fe.validation) {
    return new LadingError('BAD_REQUEST', `Invalid ${fe.validationContext ?? 'request'}: ${fe.message.replace(/^(body|querystring|params|headers)\/?/, '')}`, { cause: err });
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new LadingError('UNSUPPORTED_MEDIA_TYPE', `Unsupported Content-Type.`, { cause: err });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new LadingError('PAYLOAD_TOO_LARGE', 'The request body is too large.', { cause: err });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new LadingError('BAD_REQUEST', 'The JSON body is empty.', { cause: err });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new LadingError('BAD_REQUEST', 'Content-Length does not match the body.', { cause: err });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new LadingError('URI_TOO_LONG', 'A segment of the URL is longer than this endpoint accepts.', { cause: err });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new LadingError('UNSUPPORTED_MEDIA_TYPE', 'Expected a multipart/form-data body.', { cause: err });
    default:
  }
  if (fe instanceof SyntaxError || fe?.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new LadingError('BAD_REQUEST', 'The body is not valid JSON.', { cause: err });
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new LadingError('BAD_REQUEST', fe.message, { cause: err });
  }
  return new LadingError('INTERNAL', 'An unexpected error occurred.', { cause: err });
}

/** Sends `err` as the envelope with its status and the headers the status calls for. */
export function sendError(reply: FastifyReply, err: LadingError): FastifyReply {
  const { status, body } = errorEnvelopeOf(err);
  if (status === 401) {
    // NOTE: a share link's password travels as HTTP Basic; every other 401 asks for a bearer token.
    reply.header('WWW-Authenticate', err.details.passwordRequired ? 'Basic realm="lading share link", charset="UTF-8"'
      : err.details.invalidToken ? 'Bearer realm="lading", error="invalid_token"' : 'Bearer realm="lading"');
  }
  if (err.code === 'METHOD_NOT_ALLOWED') reply.header('Allow', String(err.details.allow ?? 'GET, HEAD, PUT, POST, PATCH'));
  if (err.code === 'RANGE_NOT_SATISFIABLE' && typeof err.details.size === 'number') reply.header('Content-Range', `bytes */${err.details.size}`);
  const retryAfter = retryAfterOf(err);
  if (retryAfter !== null) reply.header('Retry-After', retryAfter);
  // NOTE: when the request body was not read to its end, keeping the connection would make
  // the next request start in the middle of the old body.
  if (!reply.request.raw.complete) reply.header('Connection', 'close');
  return reply.code(status).type(JSON_TYPE).send(body);
}

/** Codes with a 5xx status that say what the client sent or holds, not that lading failed. */
const CLIENT_FAULTS = new Set<ErrorCode>(['PROXY_EXPIRED', 'NOT_IMPLEMENTED', 'HTTP_VERSION_NOT_SUPPORTED']);

/** Codes that say a dependency (catalog, store, disk, identity provider, CA) failed, not lading's code. */
const DEPENDENCY_FAULTS = new Set<ErrorCode>(['UNAVAILABLE', 'STORAGE_FULL']);

/** The message of the error that caused `err` (what the dependency said), or null. */
function causeOf(err: LadingError): string | null {
  const cause = err.cause;
  if (cause instanceof Error) return `${(cause as { code?: unknown }).code ?? cause.name}: ${cause.message}`;
  return cause === undefined ? null : String(cause);
}

/**
 * What the server does with an error a route threw: logs it (an error for lading's own 5xx, a
 * refusal otherwise), then answers with `send` (the error envelope unless told otherwise), or
 * cuts the connection when the answer had started.
 */
export function handleError(
  err: unknown, request: FastifyRequest, reply: FastifyReply,
  send: (reply: FastifyReply, err: LadingError) => FastifyReply = sendError,
): FastifyReply | undefined {
  const mapped = toLadingError(err);
  const { status } = STATUS_BY_CODE[mapped.code];
  if (DEPENDENCY_FAULTS.has(mapped.code)) {
    // NOTE: a dependency that is down fails every request until it is back (thousands a minute
    // in an outage): one warning line each, with what the dependency said, and no stack.
    request.log.warn({ code: mapped.code, reason: mapped.message, cause: causeOf(mapped) }, 'dependency failed');
  } else if (status >= 500 && !CLIENT_FAULTS.has(mapped.code)) request.log.error({ err }, 'request failed');
  else request.log.info({ code: mapped.code, reason: mapped.message }, 'request refused');
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return undefined;
  }
  return send(reply, mapped);
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => handleError(err, request, reply));
}
