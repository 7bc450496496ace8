/**
 * The browser session and the user's API tokens: `GET /auth/session` (who is signed in, the
 * session's CSRF token and deadlines), `POST /auth/signout`, and `/auth/tokens` to list, make
 * and revoke API tokens (the "API access" page). Sign-in itself is `/auth/signin` (in
 * `routes-oidc.ts`). Credentials are read by `authorization.ts` only; `SessionService` decides.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from './typebox.ts';
import type { Backend } from '../core/backend.ts';
import { isLadingError } from '../core/errors.ts';
import type { PublicBase } from '../core/public-base.ts';
import type { SessionRecord } from '../core/types.ts';
import type { OidcLogin } from '../identity/oidc/oidc-login.ts';
import { type SessionService, TOKEN_LABEL_MAX, TOKEN_LIFETIME_MIN, csrfTokenOf } from '../identity/sessions/sessions.ts';
import { type Authenticate, secureCookies, sessionCookie, viaOf } from './authorization.ts';
import { envelope } from './envelope.ts';
import { Envelope, Flag, type TypedApp, errorResponses, isSet } from './schemas.ts';

interface SessionRouteDeps {
  backend: Backend;
  sessions: SessionService;
  authenticate: Authenticate;
  publicBase: PublicBase;
  /** Which provider signs browsers in: the embedded one or an external one. */
  provider: 'embedded' | 'external';
  /** The login through the identity provider, whose own login session sign-out ends too; absent without one. */
  oidc?: Pick<OidcLogin, 'endProviderLogin'> | null;
  /** The S3 endpoint to tell clients, from the base URL of a request's links; null or absent when no S3 listener runs. */
  s3Endpoint?: ((base: string) => string | null) | null;
}

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

const SessionFields = Type.Object({
  user: Type.String({ description: 'The signed-in user.' }),
  home: Type.String({ description: 'The user\'s home collection.' }),
  csrf_token: Type.Union([Type.String(), Type.Null()], { description: 'Send it as X-CSRF-Token on every request that changes something (anything but GET, HEAD, OPTIONS) made with the cookie; null for a bearer token, which needs none.' }),
  expires_at: DateTime('When the session ends whatever happens (web.session_max after sign-in; a bearer token: its expiry).'),
  idle_expires_at: Type.Union([DateTime('When the session ends unless used before (web.session_idle after its last use, to the minute).'), Type.Null()]),
  provider: Type.Union([Type.Literal('embedded'), Type.Literal('external')], { description: 'Whether sign-in goes through lading\'s embedded identity provider or an external one.' }),
  token_lifetime: Type.Object({
    default: Type.Integer({ description: 'Seconds an API token made without a lifetime lasts (auth.token_ttl).' }),
    max: Type.Integer({ description: 'The longest lifetime, in seconds, POST /auth/tokens accepts (auth.token_ttl_max).' }),
  }, { description: 'The lifetimes API tokens may be given here.' }),
  s3_endpoint: Type.Union([Type.String(), Type.Null()], { description: 'The base URL of this server\'s S3-compatible listener, for S3 clients (`--endpoint-url`); null when it serves no S3.' }),
}, {
  examples: [{
    user: 'alice', home: '/lading/home/alice', csrf_token: 'm1Yx…', expires_at: '2026-11-23T23:00:00.000Z',
    idle_expires_at: '2026-11-23T13:00:00.000Z', provider: 'embedded', token_lifetime: { default: 86400, max: 7776000 },
    s3_endpoint: 'http://staging.example.org:9000',
  }],
});

const SessionInfo = Envelope(Type.Union([SessionFields, Type.Object({
  signed_in: Type.Literal(false, { description: 'Only with optional=true, when the request has no session: nobody is signed in.' }),
}, { examples: [{ signed_in: false }] })]), 'The session the request is authenticated by (with optional=true and no session: signed_in false).');

const SessionQuery = Type.Object({
  // NOTE: true: a request without a (live) session answers 200 with {signed_in: false} instead of 401.
  optional: Type.Optional(Flag),
});

const Completed = Envelope(Type.Object({ Completed: Type.String() }), 'Done.');

const SignedOut = Envelope(Type.Object({
  Completed: Type.String(),
  next: Type.String({ description: 'Where the browser should go now (assign it to location): the identity provider\'s end-session page, which ends the login there too and comes back to /, when the provider is an external one that has one; else /.' }),
}, {
  examples: [
    { Completed: 'Signed out.', next: '/' },
    { Completed: 'Signed out.', next: 'https://idp.example.org/logout?id_token_hint=eyJ…&post_logout_redirect_uri=https%3A%2F%2Fstaging.example.org%2F&client_id=lading' },
  ],
}), 'Signed out.');

const TokenRecord = Type.Object({
  id: Type.String({ description: 'Names the token in DELETE /auth/tokens/{id}; it is not the token.' }),
  label: Type.Union([Type.String(), Type.Null()], { description: 'What it was called when made here; null for a token from a login (POST /auth/login, /auth/askauth).' }),
  created_at: DateTime('When it was made.'),
  expires_at: DateTime('When it stops working (auth.token_ttl after it was made).'),
  last_used_at: Type.Union([DateTime('When it was last used, to the minute.'), Type.Null()]),
  current: Type.Boolean({ description: 'The request was authenticated by this token.' }),
});

const TOKEN_EXAMPLE = {
  id: 'Hq3d0e3Vx5f2QK8z', label: 'laptop sync', created_at: '2026-11-23T12:00:00.000Z',
  expires_at: '2026-11-24T12:00:00.000Z', last_used_at: '2026-11-23T12:41:00.000Z', current: false,
};

const TokenList = Envelope(Type.Array(TokenRecord, { examples: [[TOKEN_EXAMPLE]] }), 'The caller\'s live API tokens, oldest first (the tokens themselves are never shown again).');

const CreatedToken = Envelope(Type.Object({
  ...TokenRecord.properties,
  token: Type.String({ description: 'The bearer token: shown only here (lading keeps only its SHA-256).' }),
}, { examples: [{ ...TOKEN_EXAMPLE, last_used_at: '2026-11-23T12:00:00.000Z', token: 'q6V1…' }] }), 'The new API token.');

const CreateTokenBody = Type.Object({
  label: Type.String({ minLength: 1, maxLength: TOKEN_LABEL_MAX, description: `What the token is for, to recognise it in the list: 1 to ${TOKEN_LABEL_MAX} characters.` }),
  lifetime: Type.Optional(Type.Integer({ minimum: TOKEN_LIFETIME_MIN, description: 'Seconds the token lasts, at most auth.token_ttl_max (GET /auth/session says it as token_lifetime.max); default auth.token_ttl.' })),
}, { additionalProperties: false, examples: [{ label: 'nightly sync', lifetime: 2592000 }] });

const TokenIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });

function tokenRecord(session: SessionRecord, current: SessionRecord | undefined) {
  return {
    id: session.id,
    label: session.label,
    created_at: session.createdAt.toISOString(),
    expires_at: session.expiresAt.toISOString(),
    last_used_at: session.lastUsedAt?.toISOString() ?? null,
    current: current?.tokenHash === session.tokenHash,
  };
}

export function registerSessionRoutes(app: TypedApp, deps: SessionRouteDeps): void {
  const { sessions } = deps;
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const preHandler = async (request: FastifyRequest) => {
    await deps.authenticate(request);
  };

  app.get('/auth/session', {
    schema: {
      summary: 'The session: who is signed in, its CSRF token and when it ends',
      description: 'With the browser session cookie (set by /auth/signin) or a bearer token. 401 when not signed in; with optional=true, 200 with {signed_in: false} instead (for a page that asks whether anyone is signed in at all).',
      tags: ['auth'], security, querystring: SessionQuery, response: { 200: SessionInfo, ...errorResponses(401) },
    },
  }, async (request) => {
    let token: string;
    try {
      token = await deps.authenticate(request);
    } catch (err) {
      // NOTE: the web app asks this way on every load, so a signed-out visit is not an error
      // in the browser's console; every other client keeps its 401.
      if (isSet(request.query.optional) && isLadingError(err, 'UNAUTHENTICATED')) return envelope({ signed_in: false as const });
      throw err;
    }
    const { session } = request.auth!;
    return envelope({
      user: session.user,
      home: deps.backend.homeOf(session.user) as string,
      csrf_token: session.kind === 'browser' ? csrfTokenOf(token) : null,
      expires_at: session.expiresAt.toISOString(),
      idle_expires_at: session.idleExpiresAt?.toISOString() ?? null,
      provider: deps.provider,
      token_lifetime: deps.sessions.tokenLifetimes,
      s3_endpoint: deps.s3Endpoint?.(deps.publicBase.forRequest(request)) ?? null,
    });
  });

  app.post('/auth/signout', {
    schema: {
      summary: 'Sign out: ends the session on the server (on every node at once), clears the cookie, and ends the login at the identity provider',
      description: 'With the cookie, send X-CSRF-Token. With a bearer token, revokes it as POST /auth/logout does. The next sign-in asks for the password again: the embedded provider\'s login session of this browser ends here and now; with an external provider, the browser must visit `next` (its end-session page, which comes back to /), so navigate to `next` once signed out.',
      tags: ['auth'], security, response: { 200: SignedOut, ...errorResponses(401, 403) },
    },
  }, async (request, reply) => {
    const clear = sessionCookie(null, secureCookies(deps.publicBase.forRequest(request)));
    let token: string;
    try {
      token = await deps.authenticate(request);
    } catch (err) {
      // NOTE: a cookie whose session has ended is of no use, so it goes; one refused for want
      // of the CSRF token stays, or any site could sign the browser out.
      if (isLadingError(err, 'UNAUTHENTICATED')) reply.header('set-cookie', clear);
      throw err;
    }
    await sessions.logout(token, viaOf(request, 'web'));
    reply.header('set-cookie', clear);
    request.log.info({ user: request.auth!.session.user }, 'signed out');
    const next = (await deps.oidc?.endProviderLogin(token, request.raw)) ?? '/';
    return envelope({ Completed: 'Signed out.', next });
  });

  app.get('/auth/tokens', {
    schema: {
      summary: 'List your API tokens (not the tokens themselves)',
      tags: ['auth'], security, response: { 200: TokenList, ...errorResponses(401) },
    },
    preHandler,
  }, async (request) => {
    const { session } = request.auth!;
    return envelope((await sessions.listTokens(session.user)).map((t) => tokenRecord(t, session)));
  });

  app.post('/auth/tokens', {
    schema: {
      summary: 'Make an API token (shown once) for scripts and the command line',
      description: 'The token works as Authorization: Bearer <token> until expires_at, with its own proxy certificate; revoke it with DELETE /auth/tokens/{id}. With the cookie, send X-CSRF-Token.',
      tags: ['auth'], security, body: CreateTokenBody,
      response: { 201: CreatedToken, ...errorResponses(401, 403, 413, 415) },
    },
    links: { 201: { Revoke: { operationId: 'revokeToken', parameters: { id: '$response.body#/Response/data/id' }, description: 'Revoke the token.' } } },
    preHandler,
  }, async (request, reply) => {
    const { session } = request.auth!;
    const made = await sessions.createToken(session.user, request.body.label, request.body.lifetime, viaOf(request));
    request.log.info({ user: session.user, token: made.session.id }, 'API token made');
    reply.code(201);
    return envelope({ ...tokenRecord(made.session, session), token: made.token }, 201);
  });

  app.delete('/auth/tokens/:id', {
    schema: {
      operationId: 'revokeToken',
      summary: 'Revoke one of your API tokens: refused from the next request on, on every node',
      description: 'With the cookie, send X-CSRF-Token. 404 when you have no live token with this id.',
      tags: ['auth'], security, params: TokenIdParams,
      response: { 200: Completed, ...errorResponses(401, 403, 404) },
    },
    preHandler,
  }, async (request) => {
    const { session } = request.auth!;
    await sessions.revokeToken(session.user, request.params.id, viaOf(request));
    request.log.info({ user: session.user, token: request.params.id }, 'API token revoked');
    return envelope({ Completed: 'The token was revoked.' });
  });
}
