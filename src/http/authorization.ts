/**
 * The one reader of the `Authorization` header: it extracts a bearer credential (RFC 6750) and
 * authenticates API requests with it, and reads the password of an HTTP Basic header (RFC
 * 7617) for share links. It decides no permission and never logs a credential.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { LadingError } from '../core/errors.ts';
import type { SessionService } from '../identity/sessions/sessions.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** RFC 6750's `b64token` (RFC 9110's `token68`): what lading's and providers' tokens are made of. */
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*$/;

/**
 * The credential of an `Authorization: Bearer <credential>` header (the scheme in any case), or
 * null when the header is absent, names another scheme or holds more than one word. With
 * `syntax` `'token68'` (the default) a credential of other characters is null too; `'any'`
 * accepts any visible characters, for secrets an operator chose.
 */
export function bearerCredential(headers: IncomingHttpHeaders, syntax: 'token68' | 'any' = 'token68'): string | null {
  const credential = BEARER.exec(headers.authorization ?? '')?.[1];
  if (credential === undefined || (syntax === 'token68' && !TOKEN68.test(credential))) return null;
  return credential;
}

/**
 * `bearerCredential` of a request, which must send at most one `Authorization` header: Node
 * keeps only the first of several, and serving a request with one of two credentials would
 * guess what the client meant. Throws `BAD_REQUEST` for two or more.
 */
export function requestCredential(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>, syntax: 'token68' | 'any' = 'token68'): string | null {
  let count = 0;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() === 'authorization') count++;
  }
  if (count > 1) throw new LadingError('BAD_REQUEST', 'Send one Authorization header, not several.');
  return bearerCredential(request.headers, syntax);
}

const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;

/**
 * The password of an `Authorization: Basic` header (RFC 7617; the user name, whatever it is,
 * is ignored, so `curl -u :PASSWORD` works), or null when the request sends no such header
 * or one that is not base64 of UTF-8 `user:password`. A bearer credential is no password:
 * null too. Throws `BAD_REQUEST` for several `Authorization` headers.
 */
export function basicPassword(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | null {
  requestCredential(request);
  const encoded = BASIC.exec(request.headers.authorization ?? '')?.[1];
  if (encoded === undefined) return null;
  let pair: string;
  try {
    pair = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return null;
  }
  const colon = pair.indexOf(':');
  return colon < 0 ? null : pair.slice(colon + 1);
}

/** Authenticates a request: sets `request.auth` and returns the bearer token. */
export type Authenticate = (request: FastifyRequest) => Promise<string>;

/**
 * The `Authenticate` of API routes: the request's bearer token opens its session. Rejects with
 * `UNAUTHENTICATED` when the request sends no bearer token, with `BAD_REQUEST` when it sends
 * several `Authorization` headers, and as `sessions.authenticate` does
 * for a token it does not accept (`UNAUTHENTICATED` with `invalidToken`, `PROXY_EXPIRED`, …).
 */
export function authenticator(sessions: Pick<SessionService, 'authenticate'>): Authenticate {
  return async (request) => {
    const token = requestCredential(request.raw);
    if (token === null) throw new LadingError('UNAUTHENTICATED', 'Send the header Authorization: Bearer <token>; get a token from POST /auth/login or GET /auth/askauth.');
    request.auth = await sessions.authenticate(token);
    return token;
  };
}
