/**
 * lading as an OpenID Connect relying party, on `openid-client`: discovery from the issuer URL,
 * the authorization-code flow with PKCE (S256), `state` and `nonce`, the code exchange and ID
 * token validation (signature against the provider's JWKS, `iss`, `aud`, `exp`, `nonce`), the
 * refresh grant and token introspection. It talks to every provider, the embedded one included,
 * over HTTP. The login state lives in the catalog (so the callback may reach another node) and
 * is bound to the browser by a cookie. It maps no users and opens no sessions.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type * as OpenidClient from 'openid-client';
import type { Logger } from 'pino';
import { LadingError } from '../../core/errors.ts';
import type { Clock, OidcStore } from '../../core/ports.ts';

const STATE_KIND = 'lading:rp-state';

let loaded: Promise<typeof OpenidClient> | null = null;
/** `openid-client`, loaded on the first login rather than at start-up. */
function openidClient(): Promise<typeof OpenidClient> {
  loaded ??= import('openid-client');
  return loaded;
}
/** How long a browser may take between `/auth/askauth` and the callback. */
export const LOGIN_STATE_SECONDS = 600;

export interface RelyingPartyOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The callback URL registered at the provider, `<public base>/auth/callback`. */
  redirectUri: string;
  /** Space-separated scopes to request. */
  scopes: string;
  catalog: OidcStore;
  clock: Clock;
  logger: Logger;
  /** Allow plain-HTTP provider URLs (the embedded provider, loopback test providers). */
  allowHttp: boolean;
}

export interface LoginStart {
  /** Where to send the browser. */
  url: string;
  /** Value of the browser-binding cookie to set. */
  binding: string;
}

export interface LoginResult {
  claims: Record<string, unknown>;
  /** What `start` was given to remember for the callback ({} when nothing). */
  context: Record<string, string>;
  accessToken: string;
  refreshToken: string | null;
  /** The ID token as the provider sent it (for `id_token_hint` at its end-session endpoint). */
  idToken: string | null;
}

/**
 * Why a login was refused, in `details.refusal` of the `UNAUTHENTICATED` error, for callers that
 * explain it in their own words: the response had no state, or one unknown or expired; it was
 * used before; it reached another browser than the one that started the login; the user
 * refused at the provider (`access_denied`); the provider reported another error (its code in
 * `details.providerError`); or its answer (code, ID token) could not be accepted. Refusals
 * made once the response is known to reach the browser that started the login also carry the
 * login's context in `details.context`.
 */
export type LoginRefusal = 'no-state' | 'unknown-state' | 'replayed' | 'other-browser' | 'denied' | 'provider-error' | 'invalid-answer';

/** The word a login's `state` starts with (see `RelyingParty.start`), or null when it carries none. */
export function loginKindOf(state: string | null | undefined): string | null {
  return /^([a-z]{1,16})\./.exec(state ?? '')?.[1] ?? null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** A login refused for a reason the user or an attacker caused: 401 with a message, and a log line. */
function refused(logger: Logger, reason: string, message: string, refusal: LoginRefusal, cause?: unknown, details: Record<string, unknown> = {}): LadingError {
  logger.warn({ reason, err: cause instanceof Error ? { message: cause.message, code: (cause as { code?: string }).code } : undefined }, `oidc login refused: ${reason}`);
  return new LadingError('UNAUTHENTICATED', message, { cause, details: { ...details, refusal } });
}

export class RelyingParty {
  readonly #o: RelyingPartyOptions;
  #config: Promise<OpenidClient.Configuration> | null = null;

  constructor(options: RelyingPartyOptions) {
    this.#o = options;
  }

  get issuer(): string {
    return this.#o.issuer;
  }

  /** The provider's configuration, discovered once; `UNAVAILABLE` when the provider cannot be reached. */
  async configuration(): Promise<OpenidClient.Configuration> {
    if (!this.#config) {
      const o = this.#o;
      const attempt = (async () => {
        const client = await openidClient();
        try {
          const config = await client.discovery(
            new URL(o.issuer), o.clientId, { client_secret: o.clientSecret }, client.ClientSecretBasic(o.clientSecret),
            o.allowHttp ? { execute: [client.allowInsecureRequests], timeout: 10 } : { timeout: 10 },
          );
          // NOTE: without this, ID tokens from the token endpoint are trusted on TLS alone; the
          // signature is checked against the provider's JWKS as the issue demands.
          client.enableNonRepudiationChecks(config);
          return config;
        } catch (cause) {
          o.logger.error({ err: cause }, 'oidc: provider discovery failed');
          throw new LadingError('UNAVAILABLE', 'The identity provider cannot be reached; try again later.', { cause });
        }
      })();
      this.#config = attempt;
      attempt.catch(() => {
        if (this.#config === attempt) this.#config = null;
      });
    }
    return this.#config;
  }

  /** The provider's JWKS URI (from discovery). */
  async jwksUri(): Promise<URL> {
    const uri = (await this.configuration()).serverMetadata().jwks_uri;
    if (!uri) throw new LadingError('UNAVAILABLE', 'The identity provider publishes no JWKS.');
    return new URL(uri);
  }

  /**
   * Starts a login: stores the state, verifier and nonce, and `context` (what the callback
   * should do once logged in: it stays on the server, bound to the state), and returns the
   * authorization URL. `kind` (1 to 16 lowercase letters), when given, starts the state as
   * `<kind>.`: a public word, unlike `context`, that tells the callback what kind of login a
   * response belongs to even when its state is unknown, expired or spent (`loginKindOf`).
   */
  async start(context: Record<string, string> = {}, kind?: string): Promise<LoginStart> {
    const config = await this.configuration();
    if (kind !== undefined && !/^[a-z]{1,16}$/.test(kind)) throw new TypeError(`login kind '${kind}' is not 1 to 16 lowercase letters`);
    const client = await openidClient();
    const state = kind === undefined ? client.randomState() : `${kind}.${client.randomState()}`;
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    const binding = randomBytes(32).toString('base64url');
    const now = this.#o.clock.now();
    await this.#o.catalog.oidcPut(STATE_KIND, state, {
      payload: JSON.stringify({ verifier, nonce, binding: sha256(binding).toString('base64url'), context }),
      expiresAt: new Date(now.getTime() + LOGIN_STATE_SECONDS * 1000),
    });
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#o.redirectUri,
      scope: this.#o.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, binding };
  }

  /**
   * Completes a login from the callback's query string and the browser-binding cookie. Rejects
   * with `UNAUTHENTICATED` for a missing, unknown, expired, replayed or foreign `state`, a
   * provider error, a refused or replayed code, and an ID token that fails validation
   * (signature, issuer, audience, expiry, nonce); `UNAVAILABLE` when the provider is down.
   */
  async finish(query: URLSearchParams, binding: string | undefined): Promise<LoginResult> {
    const client = await openidClient();
    const { logger, catalog, clock } = this.#o;
    const state = query.get('state');
    if (!state) throw refused(logger, 'no state', 'The login response carries no state; start again from /auth/askauth.', 'no-state');
    const now = clock.now();
    const record = await catalog.oidcGet(STATE_KIND, state, now);
    if (!record) throw refused(logger, 'unknown or expired state', 'The login state is unknown or has expired; start again from /auth/askauth.', 'unknown-state');
    if (record.consumedAt) throw refused(logger, 'replayed state', 'This login response was already used; start again from /auth/askauth.', 'replayed');
    const stored = JSON.parse(record.payload) as { verifier: string; nonce: string; binding: string; context?: Record<string, string> };
    const expected = Buffer.from(stored.binding, 'base64url');
    const given = sha256(binding ?? '');
    if (!binding || !timingSafeEqual(expected, given)) {
      throw refused(logger, 'state not bound to this browser', 'The login was started in another browser (or its cookie was lost); start again from /auth/askauth.', 'other-browser');
    }
    // NOTE: refusals from here on, in the browser that started the login, carry its context, so
    // the caller can start it again alike; no other browser learns it.
    const context = { context: stored.context ?? {} };
    if (!(await catalog.oidcConsume(STATE_KIND, state, now))) {
      throw refused(logger, 'replayed state', 'This login response was already used; start again from /auth/askauth.', 'replayed', undefined, context);
    }
    const error = query.get('error');
    if (error) {
      const description = query.get('error_description');
      throw refused(logger, `provider error ${error}`, `The identity provider did not log you in (${error}${description ? `: ${description}` : ''}).`,
        error === 'access_denied' ? 'denied' : 'provider-error', undefined, { ...context, providerError: error });
    }
    const config = await this.configuration();
    const currentUrl = new URL(this.#o.redirectUri);
    currentUrl.search = query.toString();
    let tokens: Awaited<ReturnType<typeof OpenidClient.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: stored.verifier, expectedState: state, expectedNonce: stored.nonce, idTokenExpected: true,
      });
    } catch (cause) {
      throw this.#classify(cause, 'code exchange or ID token validation failed', 'The identity provider\'s answer could not be accepted', context);
    }
    const claims = tokens.claims() as Record<string, unknown> | undefined;
    if (!claims) throw refused(logger, 'no ID token', 'The identity provider returned no ID token.', 'invalid-answer', undefined, context);
    return {
      claims: { ...claims }, context: stored.context ?? {}, accessToken: tokens.access_token, refreshToken: tokens.refresh_token ?? null, idToken: tokens.id_token ?? null,
    };
  }

  /**
   * Where to send a browser to end its login at the provider (RP-initiated logout): the
   * provider's end-session endpoint with `id_token_hint` (the login's ID token) and
   * `post_logout_redirect_uri`, where the provider sends the browser back (it must be registered
   * there). Null when the provider advertises no end-session endpoint. `UNAVAILABLE`.
   */
  async endSessionUrl(idToken: string, postLogoutRedirectUri: string): Promise<string | null> {
    const config = await this.configuration();
    if (typeof config.serverMetadata().end_session_endpoint !== 'string') return null;
    const client = await openidClient();
    return client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: postLogoutRedirectUri }).href;
  }

  /** Claims from the userinfo endpoint, for providers that keep them out of the ID token; {} when it fails. */
  async userinfo(accessToken: string, subject: string): Promise<Record<string, unknown>> {
    const client = await openidClient();
    try {
      return { ...(await client.fetchUserInfo(await this.configuration(), accessToken, subject)) };
    } catch (err) {
      this.#o.logger.info({ err: { message: (err as Error).message } }, 'oidc: userinfo not available');
      return {};
    }
  }

  /**
   * Uses a refresh token; returns the rotated one (or the same when the provider does not
   * rotate). Rejects with `UNAUTHENTICATED` when the provider refuses it, `UNAVAILABLE` when it
   * cannot be reached.
   */
  async refresh(refreshToken: string): Promise<string> {
    const config = await this.configuration();
    const client = await openidClient();
    try {
      const tokens = await client.refreshTokenGrant(config, refreshToken);
      return tokens.refresh_token ?? refreshToken;
    } catch (cause) {
      throw this.#classify(cause, 'refresh token refused', 'The identity provider no longer accepts this login');
    }
  }

  /** Token introspection (RFC 7662) at the provider, authenticated as lading's client. */
  async introspect(token: string): Promise<Record<string, unknown>> {
    const client = await openidClient();
    try {
      return { ...(await client.tokenIntrospection(await this.configuration(), token)) };
    } catch (cause) {
      throw this.#classify(cause, 'introspection failed', 'The identity provider could not check the token');
    }
  }

  #classify(cause: unknown, reason: string, message: string, details: Record<string, unknown> = {}): LadingError {
    if (cause instanceof LadingError) return cause;
    const e = cause as { code?: string; error?: string; name?: string; message?: string };
    const network = e.name === 'TypeError' || e.name === 'AbortError' || e.name === 'TimeoutError' || e.code === 'ECONNREFUSED';
    if (network || (e.code === 'OAUTH_RESPONSE_BODY_ERROR' && e.error === 'server_error')) {
      this.#o.logger.error({ err: cause }, `oidc: ${reason}`);
      return new LadingError('UNAVAILABLE', 'The identity provider cannot be reached; try again later.', { cause, details });
    }
    // NOTE: openid-client wraps the precise reason (e.g. 'unexpected JWT "aud" (audience) claim value') as the cause.
    const inner = (cause as { cause?: unknown }).cause;
    const text = inner instanceof Error ? inner.message : e.message;
    const detail = e.error ? `${e.error}` : text ? text.replace(/\s+/g, ' ').slice(0, 200) : 'unknown reason';
    return refused(this.#o.logger, `${reason}: ${detail}`, `${message} (${detail}); log in again via /auth/askauth.`, 'invalid-answer', cause, details);
  }
}
