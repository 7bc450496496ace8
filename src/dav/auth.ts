/**
 * Who a WebDAV request is: HTTP Basic with the user name and an API token as the password (the
 * way for every account, also those of an identity provider, which have no password), a bearer
 * token, or Basic with a local account's password through the one login service (with its
 * failed-attempt limiter). Never the browser cookie: WebDAV has no CSRF token to send.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { BoundedCache } from '../core/bounded-cache.ts';
import { LadingError, isLadingError } from '../core/errors.ts';
import type { SessionService } from '../identity/sessions/sessions.ts';
import { basicCredentials, requestCredential } from '../http/authorization.ts';

/** What lading's API tokens look like: 43 characters of base64url (32 random bytes). */
const API_TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** How long the session opened by a password is reused for the same user name and password. */
const PASSWORD_SESSION_MS = 5 * 60_000;

/**
 * The authenticator of the WebDAV front: sets `request.auth` or rejects with `UNAUTHENTICATED`
 * (`details.dav` set, so the answer carries the Basic challenge where that is safe), as the
 * login service does for a password (`TOO_MANY_REQUESTS` after too many failures), or with
 * `BAD_REQUEST` for several `Authorization` headers.
 */
export function davAuthenticator(sessions: Pick<SessionService, 'authenticate' | 'login'>): (request: FastifyRequest) => Promise<void> {
  // NOTE: a password opens a session through the login service (scrypt, the limiter, an audit
  // line); WebDAV clients send it with every request, so the session is reused for a while,
  // keyed by a hash of the pair (the pair itself is not kept).
  const byPassword = new BoundedCache<string, { token: string; until: number }>(1000);
  return async (request) => {
    const bearer = requestCredential(request.raw);
    if (bearer !== null) {
      request.auth = await sessions.authenticate(bearer, 'api');
      return;
    }
    const basic = basicCredentials(request.raw);
    if (basic === null) throw new LadingError('UNAUTHENTICATED', 'Send HTTP Basic with your user name and an API token as the password (the web app\'s API access page makes one), or a bearer token.', { details: { dav: true } });
    if (API_TOKEN.test(basic.password)) {
      try {
        const auth = await sessions.authenticate(basic.password, 'api');
        if (basic.user !== '' && basic.user !== auth.session.user) throw new LadingError('UNAUTHENTICATED', 'This token is not one of this user\'s.', { details: { dav: true } });
        request.auth = auth;
        return;
      } catch (err) {
        if (!isLadingError(err, 'UNAUTHENTICATED') || (err.details.dav as boolean | undefined)) throw err;
        // Not a live token: it may be a password that happens to look like one.
      }
    }
    const key = createHash('sha256').update(basic.user).update('\0').update(basic.password).digest('base64');
    const known = byPassword.get(key);
    if (known && known.until > Date.now()) {
      try {
        request.auth = await sessions.authenticate(known.token, 'api');
        return;
      } catch {
        byPassword.delete(key);
      }
    }
    try {
      const { token } = await sessions.login({ username: basic.user, password: basic.password, address: request.ip, via: 'api', door: 'dav' });
      byPassword.set(key, { token, until: Date.now() + PASSWORD_SESSION_MS });
      request.auth = await sessions.authenticate(token, 'api');
    } catch (err) {
      if (isLadingError(err, 'UNAUTHENTICATED')) throw new LadingError('UNAUTHENTICATED', 'The user name and API token (or password) are not accepted.', { cause: err, details: { dav: true } });
      throw err;
    }
  };
}
