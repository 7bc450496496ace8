/**
 * Authentication routes: local-credential login (`/auth/login`, and `/auth/b2safeproxy` for
 * scripts written against the original service, whose GET checks a token), the proxy's state
 * and its regeneration (`/auth/proxy`) and logout.
 */
import type { FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Backend } from '../core/backend.ts';
import type { SessionService } from '../identity/sessions/sessions.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { envelope } from './envelope.ts';
import { AuthResult, LoginBody, ProxyResult, ProxyStateResult, type TypedApp, ValidatedResult, errorResponses } from './schemas.ts';

interface AuthRouteDeps {
  backend: Backend;
  sessions: SessionService;
  /** Authenticates the request's bearer token and returns it. */
  authenticate: Authenticate;
}

export function registerAuthRoutes(app: TypedApp, deps: AuthRouteDeps): void {
  const login = async (request: FastifyRequest<{ Body: Static<typeof LoginBody> }>) => {
    const { username, password } = request.body;
    const { token, user } = await deps.sessions.login({ username, password, address: request.ip, via: 'api' });
    return envelope({ storage_home: deps.backend.homeOf(user), storage_user: user, token });
  };
  const loginSchema = {
    tags: ['auth'],
    body: LoginBody,
    consumes: ['application/json', 'application/x-www-form-urlencoded'],
    response: { 200: AuthResult, ...errorResponses(401, 413, 415, 429) },
  };
  app.post('/auth/login', { schema: { ...loginSchema, summary: 'Log in with a local user name and password' } }, login);
  app.post('/auth/b2safeproxy', { schema: { ...loginSchema, summary: 'Log in with backend credentials (as the original service\'s b2safeproxy)' } }, login);

  // NOTE: scripts written for the original service check a token this way.
  app.get('/auth/b2safeproxy', {
    schema: { summary: 'Check the bearer token (as the original service\'s b2safeproxy): 200 "validated", 401 when invalid', tags: ['auth'], security: [{ bearer: [] }], response: { 200: ValidatedResult, ...errorResponses(401) } },
  }, async (request) => {
    await deps.authenticate(request);
    return envelope('validated' as const);
  });

  app.post('/auth/proxy', {
    schema: { summary: 'Regenerate the proxy certificate when it has expired', tags: ['auth'], security: [{ bearer: [] }], response: { 200: ProxyResult, ...errorResponses(401, 403) } },
  }, async (request) => {
    const token = await deps.authenticate(request);
    const outcome = await deps.sessions.refresh(token, request.auth!.session.kind);
    return envelope({ Completed: outcome === 'valid' ? 'Current proxy is still valid.' : 'New proxy was generated.' });
  });

  app.get('/auth/proxy', {
    schema: { summary: 'The state of the caller\'s proxy certificate: subject, issuer, validity, time left', tags: ['auth'], security: [{ bearer: [] }], response: { 200: ProxyStateResult, ...errorResponses(401) } },
  }, async (request) => {
    const token = await deps.authenticate(request);
    const { session, status, now } = await deps.sessions.credentialStatus(token, request.auth!.session.kind);
    const left = Math.floor((status.notAfter.getTime() - now.getTime()) / 1000);
    return envelope({
      subject: status.subject,
      issuer: status.issuer ?? null,
      not_before: status.notBefore?.toISOString() ?? null,
      not_after: status.notAfter.toISOString(),
      seconds_left: Math.max(0, left),
      expired: left <= 0,
      storage_user: session.user,
      storage_home: deps.backend.homeOf(session.user),
    });
  });

  app.post('/auth/logout', {
    schema: { summary: 'Revoke the bearer token', tags: ['auth'], security: [{ bearer: [] }], response: { 200: ProxyResult, ...errorResponses(401, 403) } },
  }, async (request) => {
    await deps.sessions.logout(await deps.authenticate(request), viaOf(request, 'api'));
    return envelope({ Completed: 'The token was revoked.' });
  });
}
