/**
 * OpenID Connect routes: `GET /auth/askauth` (spec 4.8) sends the browser to the identity
 * provider, `GET /auth/callback` completes the login and answers with the authentication result
 * of spec 2.6; `GET /auth/signin` starts the same login for a browser session, which the
 * callback then opens (the session cookie) before sending the browser on to a local page, or,
 * when that sign-in fails, answers the browser with a page saying why (`signin-page.ts`); with
 * no external issuer configured, the embedded provider is mounted under `/oidc` with its login
 * and consent pages. Wiring only: the decisions are in `src/identity/oidc/`.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from './typebox.ts';
import type { Static } from '@sinclair/typebox';
import type { Backend } from '../core/backend.ts';
import { LadingError, isLadingError } from '../core/errors.ts';
import type { SessionService } from '../identity/sessions/sessions.ts';
import type { PublicBase } from '../core/public-base.ts';
import { CALLBACK_PATH, type OidcLogin } from '../identity/oidc/oidc-login.ts';
import { PAGE_HEADERS, type Finish, type Page } from '../identity/oidc/interactions.ts';
import { PROVIDER_MOUNT } from '../identity/oidc/provider.ts';
import { LOGIN_STATE_SECONDS, loginKindOf } from '../identity/oidc/relying-party.ts';
import { envelope } from './envelope.ts';
import { errorEnvelopeOf, handleError, retryAfterOf, sendError, toLadingError } from './errors.ts';
import { sessionCookie, secureCookies, viaOf } from './authorization.ts';
import { preferredType } from './negotiation.ts';
import { AuthResult, CliClientResult, ExchangeBody, type TypedApp, envelopeOrPage, errorResponses } from './schemas.ts';
import { signinFailurePage } from './signin-page.ts';
import { PRIVATE_NO_STORE } from './caching.ts';

// NOTE: in its own module, which the logger imports without the routes (and their schemas).
export { logSafeUrl } from './log-safe-url.ts';

interface OidcRouteDeps {
  oidc: OidcLogin;
  backend: Backend;
  sessions: SessionService;
  /** Where links start; the login's issuer and callback use its base for links made outside a request. */
  publicBase: PublicBase;
}

const STATE_COOKIE = 'lading_login';

/** What the login state remembers of a login started by `/auth/signin`. */
const BROWSER_PURPOSE = 'browser-session';
/** The word the state of a login started by `/auth/signin` starts with (see `RelyingParty.start`). */
const SIGNIN_KIND = 'signin';

/**
 * `next` of `/auth/signin` when it is a local path: starts with one '/' (not '//', which a
 * browser reads as another host), no backslash and no control character, and stays on this
 * origin once resolved. Null otherwise.
 */
export function localPath(next: string): string | null {
  if (!next.startsWith('/') || next.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(next)) return null;
  const probe = new URL(next, 'http://lading.invalid');
  if (probe.origin !== 'http://lading.invalid') return null;
  return probe.pathname + probe.search + probe.hash;
}

function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

function stateCookie(value: string, maxAge: number, secure: boolean): string {
  // NOTE: SameSite=Lax, not Strict: the callback is a top-level navigation coming from the
  // provider's site, on which a Strict cookie would not be sent.
  return `${STATE_COOKIE}=${value}; Path=${CALLBACK_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Writes an error envelope on a response taken over from Fastify. */
function writeError(res: ServerResponse, err: LadingError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body } = errorEnvelopeOf(err);
  const retryAfter = retryAfterOf(err);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8', 'cache-control': PRIVATE_NO_STORE, ...(retryAfter === null ? {} : { 'retry-after': retryAfter }),
  });
  res.end(JSON.stringify(body));
}

function writePage(res: ServerResponse, page: Page): void {
  res.writeHead(page.status, { ...PAGE_HEADERS, ...page.headers });
  res.end(page.html);
}

/** The query string of a request as sent, whether or not its schema accepted it. */
function queryOf(request: FastifyRequest): URLSearchParams {
  const q = request.url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : request.url.slice(q + 1));
}

/**
 * The error handler of a browser sign-in's routes: a failure of a sign-in (`isSignin`) answers a
 * client that prefers HTML (a browser) with the page of a failed sign-in, in place of the
 * envelope, which every other client (and every other failure) still gets. `nextOf` says where
 * the failed sign-in was headed, for the page's link to start again.
 */
function signinErrors(isSignin: (request: FastifyRequest) => boolean, nextOf: (request: FastifyRequest, err: LadingError) => string | null) {
  return (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    handleError(err, request, reply, (r, mapped) => {
      r.header('Vary', 'Accept');
      if (!isSignin(request) || preferredType(request.headers.accept, ['application/json', 'text/html']) !== 'text/html') return sendError(r, mapped);
      const page = signinFailurePage(mapped, nextOf(request, mapped));
      return r.code(page.status).headers(page.headers ?? {}).send(page.html);
    });
  };
}

export async function registerOidcRoutes(app: TypedApp, deps: OidcRouteDeps): Promise<void> {
  const { oidc } = deps;

  app.get('/auth/askauth', {
    schema: {
      summary: 'Start the login through the identity provider (opens in a browser)',
      description: 'Redirects the browser to the identity provider. After login and consent, the provider sends the browser to /auth/callback, which answers with the token. Takes no parameters: no redirect target can be injected.',
      tags: ['auth'],
      querystring: Type.Object({}, { additionalProperties: false }),
      response: { 302: Type.Null({ description: 'Redirect to the identity provider.' }), ...errorResponses() },
    },
  }, async (request, reply) => {
    const parts = oidc.parts();
    const base = new URL(parts.base);
    if (deps.publicBase.configured === null && request.host !== base.host) {
      // NOTE: the state cookie must be set on the origin the callback will reach (e.g. a
      // browser that opened localhost while the server names itself 127.0.0.1).
      return reply.redirect(`${parts.base}/auth/askauth`, 302);
    }
    const { url, binding } = await parts.rp.start();
    reply.header('set-cookie', stateCookie(binding, LOGIN_STATE_SECONDS, parts.base.startsWith('https:')));
    return reply.redirect(url, 302);
  });

  app.get('/auth/signin', {
    schema: {
      summary: 'Sign a browser in: the same login as /auth/askauth, ending in a session cookie',
      description: 'Redirects the browser to the identity provider, as /auth/askauth does. After login and consent, /auth/callback opens a browser session (the HttpOnly cookie `lading_session`, `__Host-lading_session` on https) and redirects (303) to `next`. See GET /auth/session for the session and its CSRF token.',
      tags: ['auth'],
      querystring: Type.Object({
        next: Type.Optional(Type.String({ maxLength: 2048, description: 'Local path to land on once signed in (starting with one \'/\'); default /.', examples: ['/browse'] })),
      }, { additionalProperties: false }),
      response: {
        302: Type.Null({ description: 'Redirect to the identity provider.' }),
        ...errorResponses(),
        400: envelopeOrPage('Not a local next: the error envelope, or to a browser the page of a failed sign-in.'),
        '5xx': envelopeOrPage('The identity provider cannot be reached (503): the error envelope, or to a browser the page of a failed sign-in.'),
      },
    },
    errorHandler: signinErrors(() => true, (request) => localPath(queryOf(request).get('next') ?? '/')),
  }, async (request, reply) => {
    const next = localPath(request.query.next ?? '/');
    if (next === null) throw new LadingError('BAD_REQUEST', 'next must be a local path starting with one \'/\'.');
    const parts = oidc.parts();
    const base = new URL(parts.base);
    if (deps.publicBase.configured === null && request.host !== base.host) {
      // NOTE: as for /auth/askauth: the cookies must be set on the origin the callback reaches.
      return reply.redirect(`${parts.base}/auth/signin?${new URLSearchParams({ next }).toString()}`, 302);
    }
    const { url, binding } = await parts.rp.start({ purpose: BROWSER_PURPOSE, next }, SIGNIN_KIND);
    reply.header('set-cookie', stateCookie(binding, LOGIN_STATE_SECONDS, parts.base.startsWith('https:')));
    return reply.redirect(url, 302);
  });

  app.get(CALLBACK_PATH, {
    schema: {
      summary: 'Where the identity provider sends the browser back; answers with the token',
      description: 'Completes the login. Started by /auth/askauth: answers with the token (JSON). Started by /auth/signin: sets the session cookie and redirects (303) to the `next` it was given; when such a sign-in fails (refused at the provider, expired or already used, a disabled account), a browser gets an HTML page saying so, with a link to sign in again, and the same status as the envelope would have.',
      tags: ['auth'],
      querystring: Type.Object({
        code: Type.Optional(Type.String()),
        state: Type.Optional(Type.String()),
        iss: Type.Optional(Type.String()),
        error: Type.Optional(Type.String()),
        error_description: Type.Optional(Type.String()),
      }, { additionalProperties: true }),
      response: {
        200: AuthResult,
        303: Type.Null({ description: 'Signed in (login started by /auth/signin): the session cookie is set; on to `next`.' }),
        ...errorResponses(401, 403),
        400: envelopeOrPage('A malformed callback: the error envelope, or to a browser signing in the page of a failed sign-in.'),
        401: envelopeOrPage('The login was refused (at the provider, or its state is unknown, expired, spent or from another browser): the error envelope, or to a browser signing in the page of a failed sign-in.'),
        403: envelopeOrPage('The identity is not one that may sign in (a disabled account, a group, an unusable user name): the error envelope, or to a browser signing in the page of a failed sign-in.'),
        '5xx': envelopeOrPage('The identity provider cannot be reached (503): the error envelope, or to a browser signing in the page of a failed sign-in.'),
      },
    },
    errorHandler: signinErrors(
      (request) => loginKindOf(queryOf(request).get('state')) === SIGNIN_KIND,
      (_request, err) => {
        const context = err.details.context as Record<string, string> | undefined;
        return typeof context?.next === 'string' ? localPath(context.next) : null;
      },
    ),
  }, async (request, reply) => {
    const parts = oidc.parts();
    // NOTE: the state cookie is single-use whatever the outcome.
    reply.header('set-cookie', stateCookie('', 0, parts.base.startsWith('https:')));
    const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
    const { user, refreshToken, idToken, context } = await oidc.finishLogin(query, cookie(request, STATE_COOKIE));
    if (context.purpose === BROWSER_PURPOSE) {
      const { token, session } = await deps.sessions.openBrowser(user, viaOf(request, 'web'));
      if (refreshToken) await oidc.keepRefreshToken(token, refreshToken, session.expiresAt);
      if (idToken) await oidc.keepIdToken(token, idToken, session.expiresAt);
      request.log.info({ user, issuer: parts.rp.issuer }, 'browser signed in through the identity provider');
      reply.header('set-cookie', sessionCookie(token, secureCookies(deps.publicBase.forRequest(request))));
      return reply.redirect(localPath(context.next ?? '/') ?? '/', 303);
    }
    const token = await deps.sessions.open(user, viaOf(request, 'api'));
    if (refreshToken) await oidc.keepRefreshToken(token, refreshToken);
    request.log.info({ user, issuer: parts.rp.issuer }, 'login through the identity provider');
    return envelope({ storage_home: deps.backend.homeOf(user), storage_user: user, token });
  });

  app.get('/auth/clients/cli', {
    schema: {
      summary: 'How the lading command line logs in: the identity provider\'s device authorization and token endpoints and the public client id',
      description: 'The command line runs the OAuth 2.0 device authorization grant (RFC 8628) with these, then exchanges the access token at POST /auth/exchange. Configured by oidc.cli_client_id and oidc.cli_scopes.',
      tags: ['auth'],
      response: { 200: CliClientResult, ...errorResponses() },
    },
  }, async () => envelope(await oidc.cliClient()));

  app.post('/auth/exchange', {
    schema: {
      summary: 'Exchange an access token of the server\'s identity provider for a lading token',
      description: 'The access token is checked as one presented as a bearer token is (issuer, audience, expiry, signature or introspection); the answer is that of POST /auth/login. To renew, refresh the access token at the provider and exchange again.',
      tags: ['auth'],
      body: ExchangeBody,
      response: { 200: AuthResult, ...errorResponses(401, 403, 413, 415) },
    },
  }, async (request) => {
    const user = await oidc.userOfAccessToken(request.body.access_token);
    const token = await deps.sessions.open(user, viaOf(request, 'api'));
    request.log.info({ user, issuer: oidc.issuer }, 'login by exchanging a provider access token');
    return envelope({ storage_home: deps.backend.homeOf(user), storage_user: user, token });
  });

  if (!oidc.embedded) return;

  const provider = async () => {
    const embedded = oidc.parts().provider;
    if (!embedded) throw new LadingError('NOT_FOUND', 'No embedded identity provider runs here.');
    return embedded;
  };

  await app.register(async (scope) => {
    // NOTE: the provider reads request bodies itself, so nothing here may consume them.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      try {
        await (await provider()).handle(request.raw, reply.raw);
      } catch (err) {
        const mapped = toLadingError(err);
        request.log.error({ err }, 'oidc provider request failed');
        writeError(reply.raw, mapped);
      }
    };
    scope.all(PROVIDER_MOUNT, { schema: { hide: true } }, handler);
    scope.all(`${PROVIDER_MOUNT}/*`, { schema: { hide: true } }, handler);
  });

  const Uid = Type.Object({ uid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
  const Form = Type.Record(Type.String(), Type.String());

  app.get(`${PROVIDER_MOUNT}/interaction/:uid`, { schema: { hide: true, params: Uid } }, async (request, reply) => {
    const embedded = await provider();
    const page = await oidc.parts().interactions!.show(await embedded.provider(), request.raw, reply.raw);
    return reply.code(page.status).headers({ ...PAGE_HEADERS, ...page.headers }).send(page.html);
  });

  const step = (name: 'login' | 'confirm' | 'abort') => async (request: FastifyRequest<{ Body: Static<typeof Form> }>, reply: FastifyReply) => {
    const op = await (await provider()).provider();
    const interactions = oidc.parts().interactions!;
    const form = request.body;
    const outcome: Page | Finish = name === 'login'
      ? await interactions.login(op, request.raw, reply.raw, form, request.ip)
      : await interactions[name](op, request.raw, reply.raw, form);
    if ('html' in outcome) return reply.code(outcome.status).headers({ ...PAGE_HEADERS, ...outcome.headers }).send(outcome.html);
    reply.hijack();
    try {
      await op.interactionFinished(request.raw, reply.raw, outcome.result, { mergeWithLastSubmission: outcome.merge });
    } catch (err) {
      const mapped = isLadingError(err) ? err : new LadingError('BAD_REQUEST', 'This sign-in attempt has expired; start again from /auth/askauth.', { cause: err });
      request.log.warn({ code: mapped.code }, 'oidc interaction could not be finished');
      writeError(reply.raw, mapped);
    }
  };
  for (const name of ['login', 'confirm', 'abort'] as const) {
    app.post(`${PROVIDER_MOUNT}/interaction/:uid/${name}`, {
      schema: { hide: true, params: Uid, body: Form, consumes: ['application/x-www-form-urlencoded'] },
    }, step(name));
  }
}
