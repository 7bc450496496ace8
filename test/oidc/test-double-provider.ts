/**
 * A test double of an external OpenID Provider, over a real socket: discovery, JWKS, an
 * authorization endpoint that approves at once, and a token endpoint whose ID token each test
 * may bend (other issuer, audience, nonce, expiry, signing key) — the misbehaviour a real
 * provider never shows but an attacker or a broken provider may. Checks PKCE and client
 * authentication, refuses a replayed code, and keeps a revocable set of refresh tokens; with
 * `endSession`, it advertises an end-session endpoint that records each visit and sends the
 * browser back. Also signs access tokens for the bearer-token tests. Test code only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

type Keys = Awaited<ReturnType<typeof generateKeyPair>>;

export interface TestDoubleProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Changes applied to the next ID tokens (claims set to undefined are removed). */
  idTokenChanges: Partial<Record<string, unknown>>;
  /** Sign the next ID tokens with a key the JWKS does not publish. */
  signWithForeignKey: boolean;
  /** Claims of the user the authorization endpoint approves. */
  user: Record<string, unknown>;
  /** Refresh tokens the token endpoint accepts; delete one to revoke it. */
  refreshTokens: Set<string>;
  /** Every visit to the end-session endpoint (advertised only when started with `endSession`), oldest first. */
  endSessions: URLSearchParams[];
  /** The ID tokens the token endpoint issued, oldest first. */
  idTokens: string[];
  /** Signs an access token with the published key (or the foreign one). */
  accessToken(claims: JWTPayload, options?: { foreign?: boolean; typ?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startTestDoubleProvider(options: { clientId?: string; clientSecret?: string; endSession?: boolean } = {}): Promise<TestDoubleProvider> {
  const keys: Keys = await generateKeyPair('RS256', { extractable: true });
  const foreign: Keys = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const pending = new Map<string, { nonce?: string; challenge: string; redirectUri: string; used: boolean }>();
  let issuer = '';
  const sign = (claims: JWTPayload, useForeign: boolean, typ = 'JWT') =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1', typ }).sign(useForeign ? foreign.privateKey : keys.privateKey);

  const double: TestDoubleProvider = {
    issuer: '',
    clientId: options.clientId ?? 'lading-test',
    clientSecret: options.clientSecret ?? 'test-double-secret',
    idTokenChanges: {},
    signWithForeignKey: false,
    user: { sub: 'f3b1c2d4', preferred_username: 'dora', email: 'dora@example.org' },
    refreshTokens: new Set(),
    endSessions: [],
    idTokens: [],
    accessToken: (claims, o = {}) => sign(claims, o.foreign ?? false, o.typ ?? 'at+jwt'),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      try {
        if (url.pathname === '/.well-known/openid-configuration') {
          return json(res, 200, {
            issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`,
            response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
            code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['client_secret_basic'],
            ...(options.endSession ? { end_session_endpoint: `${issuer}/logout` } : {}),
          });
        }
        if (url.pathname === '/logout' && options.endSession) {
          double.endSessions.push(url.searchParams);
          const back = url.searchParams.get('post_logout_redirect_uri');
          res.writeHead(back ? 302 : 200, back ? { location: back } : { 'content-type': 'text/plain' });
          return res.end(back ? undefined : 'signed out');
        }
        if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
        if (url.pathname === '/authorize') {
          const q = url.searchParams;
          const code = randomBytes(16).toString('base64url');
          pending.set(code, { nonce: q.get('nonce') ?? undefined, challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '', used: false });
          const back = new URL(q.get('redirect_uri')!);
          back.searchParams.set('code', code);
          back.searchParams.set('state', q.get('state') ?? '');
          res.writeHead(302, { location: back.href });
          return res.end();
        }
        if (url.pathname === '/token' && req.method === 'POST') {
          // RFC 6749 2.3.1: id and secret are form-urlencoded before the Basic encoding.
          const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
          const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':').map((p) => decodeURIComponent(p.replace(/\+/g, ' ')));
          if (id !== double.clientId || secret !== double.clientSecret) return json(res, 401, { error: 'invalid_client' });
          const form = new URLSearchParams(body);
          const now = Math.floor(Date.now() / 1000);
          if (form.get('grant_type') === 'refresh_token') {
            const rt = form.get('refresh_token') ?? '';
            if (!double.refreshTokens.has(rt)) return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token revoked' });
            double.refreshTokens.delete(rt);
            const next = randomBytes(16).toString('base64url');
            double.refreshTokens.add(next);
            return json(res, 200, { access_token: randomBytes(16).toString('base64url'), token_type: 'Bearer', expires_in: 300, refresh_token: next });
          }
          const grant = pending.get(form.get('code') ?? '');
          if (!grant || grant.used) return json(res, 400, { error: 'invalid_grant', error_description: 'unknown or used code' });
          grant.used = true;
          const challenge = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
          if (challenge !== grant.challenge || form.get('redirect_uri') !== grant.redirectUri) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE or redirect_uri mismatch' });
          const claims: Record<string, unknown> = { iss: issuer, aud: double.clientId, iat: now, exp: now + 300, nonce: grant.nonce, ...double.user, ...double.idTokenChanges };
          for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
          const refresh = randomBytes(16).toString('base64url');
          double.refreshTokens.add(refresh);
          const idToken = await sign(claims as JWTPayload, double.signWithForeignKey);
          double.idTokens.push(idToken);
          return json(res, 200, { access_token: randomBytes(16).toString('base64url'), token_type: 'Bearer', expires_in: 300, refresh_token: refresh, id_token: idToken });
        }
        json(res, 404, { error: 'not_found' });
      } catch (err) {
        json(res, 500, { error: 'server_error', error_description: String(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  double.issuer = issuer;
  return double;
}
