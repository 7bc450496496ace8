/**
 * The one reader of request credentials: it extracts a bearer credential (RFC 6750) from the
 * `Authorization` header, or else the browser session cookie, and authenticates API requests
 * with it, guarding cookie-authenticated state changes against cross-site request forgery; and
 * it reads the password of an HTTP Basic header (RFC 7617) for share links. It decides no
 * permission and never logs a credential.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AuditDoor, AuditVia } from '../core/audit.ts';
import { LadingError } from '../core/errors.ts';
import type { PublicBase } from '../core/public-base.ts';
import { type SessionService, csrfTokenMatches } from '../identity/sessions/sessions.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** RFC 6750's `b64token` (RFC 9110's `token68`): what lading's and providers' tokens are made of. */
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*$/;

/**
 * The credential of an `Authorization: Bearer <credential>` header (the scheme in any case), or
 * null when the header is absent, names another scheme or holds more than one word. With
 * `syntax` `'token68'` (the default) a credential of other characters is null too; `'any'`
 * accepts any visible characters, for secrets an operator chose.
 */
/**
 * Where `request` came from, for the audit trail: `door` when given (a front of its own), else
 * `web` for a browser session's request and `api` for the rest; the address is the client's
 * as Fastify gives it (`trust_proxy` decides whether a forwarded one counts).
 */
export function viaOf(request: FastifyRequest, door?: AuditDoor): AuditVia {
  return { door: door ?? (request.auth?.session.kind === 'browser' ? 'web' : 'api'), address: request.ip };
}

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
 * The user name and password of an `Authorization: Basic` header (RFC 7617), or null when the
 * request sends no such header or one that is not base64 of UTF-8 `user:password`. A bearer
 * credential is none: null too. Throws `BAD_REQUEST` for several `Authorization` headers.
 */
export function basicCredentials(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): { user: string; password: string } | null {
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
  return colon < 0 ? null : { user: pair.slice(0, colon), password: pair.slice(colon + 1) };
}

/**
 * The password of an `Authorization: Basic` header (the user name, whatever it is, is ignored,
 * so `curl -u :PASSWORD` works), as `basicCredentials` reads it; null when there is none.
 */
export function basicPassword(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | null {
  return basicCredentials(request)?.password ?? null;
}

/** The browser session cookie's name on an http public base. */
export const SESSION_COOKIE = 'lading_session';
/** Its name on an https public base: the `__Host-` prefix makes browsers refuse it unless Secure, on Path=/ and without Domain. */
export const SECURE_SESSION_COOKIE = '__Host-lading_session';
/** The header an unsafe request authenticated by the cookie must carry its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** Methods that change nothing (RFC 9110 safe methods): no CSRF token needed. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the session cookie of a request to `base` (a public base URL) is the Secure, `__Host-` one. */
export function secureCookies(base: string): boolean {
  return base.startsWith('https:');
}

/**
 * The `Set-Cookie` value of the browser session cookie holding `token` (null: one that clears
 * it): HttpOnly, SameSite=Lax (a link followed from another site still signs the browser in
 * for GET; no cross-site POST carries it), Path=/, and Secure with the `__Host-` name when
 * `secure`. No Max-Age: the browser forgets it when it closes, and the server ends the
 * session at its idle or absolute timeout whatever the browser keeps.
 */
export function sessionCookie(token: string | null, secure: boolean): string {
  const name = secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  return `${name}=${token ?? ''}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}${token === null ? '; Max-Age=0' : ''}`;
}

/** The cookie that remembers a share link's password in a browser: sent only under that link's path. */
export const SHARE_PASSWORD_COOKIE = 'lading_share_password';

/**
 * The `Set-Cookie` value remembering `password` for the link at `linkPath` (`/api/shared/<token>`)
 * until the browser closes: HttpOnly, SameSite=Lax, Secure on https.
 */
export function sharePasswordCookie(linkPath: string, password: string, secure: boolean): string {
  return `${SHARE_PASSWORD_COOKIE}=${encodeURIComponent(password)}; Path=${linkPath}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The share-link password a request's cookie remembers, or null. */
export function sharePasswordOf(headers: IncomingHttpHeaders): string | null {
  const value = cookieValue(headers, SHARE_PASSWORD_COOKIE);
  if (value === undefined) return null;
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** The first value of the cookie `name` a request sends, or undefined. */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The token of a request's browser session cookie (by the name its public base gives it), or null. */
export function sessionCookieToken(request: FastifyRequest, publicBase: Pick<PublicBase, 'forRequest'>): string | null {
  const name = secureCookies(publicBase.forRequest(request)) ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  const value = cookieValue(request.headers, name);
  return value && TOKEN68.test(value) ? value : null;
}

/**
 * The `csrf_token` field of an HTML form's body (`application/x-www-form-urlencoded`, parsed
 * before the route authenticates): a form cannot send a header, and its token is the same
 * secret. Undefined for any other body.
 */
function formCsrfToken(request: FastifyRequest): unknown {
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  const body: unknown = request.body;
  if (type !== 'application/x-www-form-urlencoded' || typeof body !== 'object' || body === null || !('csrf_token' in body)) return undefined;
  return body.csrf_token;
}

/**
 * Refuses an unsafe request authenticated by the session cookie unless it is same-origin and
 * carries the session's CSRF token: `FORBIDDEN` when `Origin` is sent and is not the public
 * base's origin, when `Sec-Fetch-Site` is sent and is not `same-origin`, or when the
 * `X-CSRF-Token` header (or without it, a form's `csrf_token` field) is missing, repeated or
 * wrong (compared in constant time).
 */
function checkCrossSite(request: FastifyRequest, token: string, publicBase: Pick<PublicBase, 'forRequest'>): void {
  if (SAFE_METHODS.has(request.method)) return;
  const { origin } = request.headers;
  if (origin !== undefined && origin !== new URL(publicBase.forRequest(request)).origin) {
    throw new LadingError('FORBIDDEN', 'Cross-origin requests may not use the session cookie; send a bearer token instead.');
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    throw new LadingError('FORBIDDEN', 'Cross-site requests may not use the session cookie; send a bearer token instead.');
  }
  const header = request.headers[CSRF_HEADER];
  const given = header === undefined ? formCsrfToken(request) : header;
  if (!csrfTokenMatches(token, typeof given === 'string' ? given : undefined)) {
    throw new LadingError('FORBIDDEN', 'This request needs the header X-CSRF-Token with the csrf_token of GET /auth/session.');
  }
}

/** Authenticates a request: sets `request.auth` and returns the session's token (bearer or cookie). */
export type Authenticate = (request: FastifyRequest) => Promise<string>;

/**
 * The `Authenticate` of API routes: the request's bearer token opens its session; a request
 * with no `Authorization` header is authenticated by the browser session cookie instead,
 * which for unsafe methods also needs what `checkCrossSite` asks for (else `FORBIDDEN`).
 * Rejects with `UNAUTHENTICATED` when the request sends neither, with `BAD_REQUEST` when it
 * sends several `Authorization` headers, and as `sessions.authenticate` does for a token it
 * does not accept (`UNAUTHENTICATED` with `invalidToken`, `PROXY_EXPIRED`, …).
 */
export function authenticator(sessions: Pick<SessionService, 'authenticate'>, publicBase: Pick<PublicBase, 'forRequest'>): Authenticate {
  return async (request) => {
    const token = requestCredential(request.raw);
    if (token !== null) {
      request.auth = await sessions.authenticate(token, 'api');
      return token;
    }
    const cookie = request.headers.authorization === undefined ? sessionCookieToken(request, publicBase) : null;
    if (cookie === null) throw new LadingError('UNAUTHENTICATED', 'Send the header Authorization: Bearer <token>; get a token from POST /auth/login or GET /auth/askauth.');
    checkCrossSite(request, cookie, publicBase);
    request.auth = await sessions.authenticate(cookie, 'browser');
    return cookie;
  };
}
