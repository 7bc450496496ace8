/**
 * OpenID Connect login for lading, put together: the relying party, the embedded provider
 * (when no external issuer is configured), the mapping from an identity to a backend user,
 * the sealed refresh token that makes a token's lifetime follow the provider, and provider
 * access tokens accepted as bearer tokens. The issuer and callback URLs start with the public
 * base URL, known once the server listens, so everything is created on first use. It never issues
 * backend credentials itself: sessions do, through their credential manager.
 */
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Sealer } from '../secrets/sealing.ts';
import { hashToken } from '../sessions/sessions.ts';
import { type Backend, parseUserName } from '../../core/backend.ts';
import { LadingError, isLadingError } from '../../core/errors.ts';
import type { Catalog, Clock } from '../../core/ports.ts';
import type { PublicBase } from '../../core/public-base.ts';
import type { SessionRecord } from '../../core/types.ts';
import { AccessTokenVerifier } from './access-tokens.ts';
import { Interactions } from './interactions.ts';
import { EmbeddedProvider, type EmbeddedProviderOptions, PROVIDER_MOUNT, embeddedClientSecret } from './provider.ts';
import { RelyingParty } from './relying-party.ts';
import type { LoginService } from '../sessions/login.ts';

/** The shared secret of the OIDC layer, derived from the master key so every node agrees on it. */
export function oidcSecret(masterKey: Buffer): Buffer {
  return createHmac('sha256', masterKey).update('lading oidc').digest();
}

// NOTE: from the module object rather than an ES import, which would load undici (see http/protocol.ts).
const { ServerResponse } = process.getBuiltinModule('node:http');

const GRANT_KIND = 'lading:session-grant';
const GRANT_PURPOSE = 'oidc refresh token';
const ID_TOKEN_KIND = 'lading:session-id-token';
const ID_TOKEN_PURPOSE = 'oidc id token';
/** Path of the relying party's callback, registered at the provider as `<public base>/auth/callback`. */
export const CALLBACK_PATH = '/auth/callback';

export interface OidcSettings {
  /** External issuer URL; null runs the embedded provider. */
  issuer: string | null;
  clientId: string;
  /** Client secret at an external provider (the embedded one derives its own). */
  clientSecret: string | null;
  scopes: string;
  userClaim: string;
  /** Expected audience of access tokens; null means the client id. */
  audience: string | null;
  /** Check bearer access tokens by introspection instead of locally. */
  introspection: boolean;
  /** Signing-key rotation period of the embedded provider, in seconds. */
  keyRotationSeconds: number;
  /** Client id of the `lading` command line (a public client using the device authorization grant). */
  cliClientId: string;
  /** Scopes the command line requests. */
  cliScopes: string;
}

/** How the command line logs in at the provider (`GET /auth/clients/cli`). */
export interface CliClientInfo {
  issuer: string;
  /** Null when the provider offers no device authorization grant. */
  device_authorization_endpoint: string | null;
  token_endpoint: string;
  revocation_endpoint: string | null;
  client_id: string;
  scopes: string;
  /** Lifetime of the lading tokens `POST /auth/exchange` issues, in seconds. */
  token_ttl: number;
  /** Whether the provider is the embedded one, whose accounts are lading's local accounts (password login works too). */
  local_accounts: boolean;
}

export interface OidcLoginOptions {
  settings: OidcSettings;
  /** Where the issuer and callback URLs start (its base for links made outside a request). */
  publicBase: PublicBase;
  catalog: Catalog;
  backend: Backend;
  clock: Clock;
  sealer: Sealer;
  /** Checks passwords on the embedded provider's sign-in page. */
  login: LoginService;
  /** Shared secret (derived from the master key) for the embedded provider. */
  secret: Buffer;
  logger: Logger;
  /** Lifetime of lading's bearer tokens, in seconds. */
  tokenTtlSeconds: number;
  trustProxy: boolean;
  /** Renders the embedded provider's error responses (see `EmbeddedProviderOptions`). */
  renderError: EmbeddedProviderOptions['renderError'];
}

interface Parts {
  base: string;
  rp: RelyingParty;
  provider: EmbeddedProvider | null;
  interactions: Interactions | null;
  accessTokens: AccessTokenVerifier;
}

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname) || url.hostname.endsWith('.localhost');
}

export class OidcLogin {
  readonly #o: OidcLoginOptions;
  #parts: Parts | null = null;
  #lastPurge = 0;

  constructor(options: OidcLoginOptions) {
    if (options.settings.issuer !== null && !options.settings.clientSecret) {
      throw new Error('oidc: an external issuer needs a client secret (oidc.client_secret_file or LADING_OIDC_CLIENT_SECRET)');
    }
    this.#o = options;
  }

  get embedded(): boolean {
    return this.#o.settings.issuer === null;
  }

  /** The issuer URL in use. `UNAVAILABLE` before the base URL is known. */
  get issuer(): string {
    return this.parts().rp.issuer;
  }

  /** The pieces, created on first use. `UNAVAILABLE` before the base URL is known. */
  parts(): Parts {
    if (this.#parts) return this.#parts;
    const o = this.#o;
    const base = o.publicBase.outside();
    const s = o.settings;
    const issuer = s.issuer ?? `${base}${PROVIDER_MOUNT}`;
    const redirectUri = `${base}${CALLBACK_PATH}`;
    const audience = s.audience ?? s.clientId;
    const issuerUrl = new URL(issuer);
    if (issuerUrl.protocol === 'http:' && !isLoopback(issuerUrl) && s.issuer !== null) {
      o.logger.warn({ issuer }, 'oidc: the identity provider is reached over plain HTTP');
    }
    const rp = new RelyingParty({
      issuer, clientId: s.clientId, clientSecret: s.clientSecret ?? embeddedClientSecret(o.secret), redirectUri, scopes: s.scopes,
      catalog: o.catalog, clock: o.clock, logger: o.logger,
      allowHttp: issuerUrl.protocol === 'http:' && (s.issuer === null || isLoopback(issuerUrl)),
    });
    const provider = s.issuer === null
      ? new EmbeddedProvider({
        issuer, catalog: o.catalog, clock: o.clock, sealer: o.sealer, secret: o.secret, logger: o.logger,
        clientId: s.clientId, cliClientId: s.cliClientId, redirectUri, audience, resource: `${base}/api`, accessTokenFormat: s.introspection ? 'opaque' : 'jwt', keyRotationSeconds: s.keyRotationSeconds, trustProxy: o.trustProxy,
        renderError: o.renderError,
      })
      : null;
    const interactions = provider
      ? new Interactions({ catalog: o.catalog, clock: o.clock, logger: o.logger, origin: issuerUrl.origin, login: o.login })
      : null;
    const accessTokens = new AccessTokenVerifier({
      issuer, audience, jwksUri: () => rp.jwksUri(), clock: o.clock, logger: o.logger, requireAtJwt: s.issuer === null,
      introspect: s.introspection ? (token) => rp.introspect(token) : undefined,
    });
    this.#parts = { base, rp, provider, interactions, accessTokens };
    return this.#parts;
  }

  /**
   * The backend user for a set of claims: the configured claim, else `sub`. Rejects with
   * `FORBIDDEN` when the value is not a valid lading user name (it is refused, not rewritten:
   * rewriting could make two identities share one account) or names a group. Creates the user
   * and its home collection on first login.
   */
  async userFor(claims: Record<string, unknown>): Promise<string> {
    const claim = this.#o.settings.userClaim;
    const raw = claims[claim] ?? claims.sub;
    const source = claims[claim] !== undefined ? claim : 'sub';
    const value = typeof raw === 'string' ? raw : '';
    try {
      parseUserName(value);
    } catch {
      this.#o.logger.warn({ claim: source }, 'oidc: the identity does not map to a valid user name');
      throw new LadingError('FORBIDDEN', `The identity provider's '${source}' claim is not a valid lading user name (1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit); ask the operators to set oidc.user_claim to a claim holding such a name.`);
    }
    try {
      await this.#o.backend.addUser(value, { passwordHash: null });
      this.#o.logger.info({ user: value }, 'oidc: created a user on first login');
    } catch (err) {
      if (!isLadingError(err, 'CONFLICT')) throw err;
      const existing = await this.#o.catalog.getUser(value);
      if (existing?.kind === 'group') throw new LadingError('FORBIDDEN', `'${value}' is a group, not a user; it cannot log in.`);
      if (existing?.disabled) throw new LadingError('FORBIDDEN', `The account '${value}' is disabled; ask the operators of this service.`);
    }
    return value;
  }

  /**
   * Completes a login at the callback (see `RelyingParty.finish` for the refusals) and maps it
   * to a user (see `userFor`), reading userinfo when the ID token lacks the user claim.
   */
  async finishLogin(query: URLSearchParams, binding: string | undefined): Promise<{ user: string; refreshToken: string | null; idToken: string | null; context: Record<string, string> }> {
    const { rp } = this.parts();
    this.#purgeExpired();
    const login = await rp.finish(query, binding);
    let claims = login.claims;
    if (claims[this.#o.settings.userClaim] === undefined && typeof claims.sub === 'string') {
      claims = { ...(await rp.userinfo(login.accessToken, claims.sub)), ...claims };
    }
    return { user: await this.userFor(claims), refreshToken: login.refreshToken, idToken: login.idToken, context: login.context };
  }

  // NOTE: expired records are invisible anyway; deleting them only keeps the catalog small, so
  // once per ten minutes per process, riding on logins, is enough.
  #purgeExpired(): void {
    const now = this.#o.clock.now();
    if (now.getTime() - this.#lastPurge < 600_000) return;
    this.#lastPurge = now.getTime();
    this.#o.catalog.oidcDeleteExpired(now).then(
      (n) => n > 0 && this.#o.logger.debug({ removed: n }, 'oidc: removed expired records'),
      (err: unknown) => this.#o.logger.warn({ err }, 'oidc: removing expired records failed'),
    );
  }

  /**
   * Keeps the provider's refresh token, sealed, for the session behind `token`, until `until`
   * (default: a bearer token's lifetime from now).
   */
  async keepRefreshToken(token: string, refreshToken: string, until?: Date): Promise<void> {
    const now = this.#o.clock.now();
    await this.#o.catalog.oidcPut(GRANT_KIND, hashToken(token), {
      payload: this.#o.sealer.seal(refreshToken, GRANT_PURPOSE),
      expiresAt: until ?? new Date(now.getTime() + this.#o.tokenTtlSeconds * 1000),
    });
  }

  /**
   * Keeps the ID token of the login behind the browser session `token`, sealed, until `until`,
   * for the end-session endpoint of an external provider (`endProviderLogin`). With the
   * embedded provider it keeps nothing: its login is ended without one.
   */
  async keepIdToken(token: string, idToken: string, until: Date): Promise<void> {
    if (this.embedded) return;
    await this.#o.catalog.oidcPut(ID_TOKEN_KIND, hashToken(token), { payload: this.#o.sealer.seal(idToken, ID_TOKEN_PURPOSE), expiresAt: until });
  }

  /**
   * Ends the login at the identity provider behind a session being signed out (`token`, from
   * the browser of `req`), so that the next sign-in there asks the user again. Answers where the
   * browser should go next, or null for nowhere in particular.
   *
   * With the embedded provider, deletes the provider's login session of that browser (named by
   * its cookie, which `req` carries when it comes from that browser) in the catalog, for every
   * node at once, and answers null. What the provider bound to that login session ends with it:
   * refresh tokens issued without `offline_access`, such as that of a /auth/askauth login in the
   * same browser, whose token is then refused when its proxy is next renewed; grants are not
   * revoked, so the command line's device login (`offline_access`) and API tokens made at
   * /auth/tokens keep working. With an external provider, answers its
   * end-session URL (RP-initiated logout, with the login's ID token and `<public base>/` to come
   * back to) when it advertises one and the session kept an ID token; null otherwise. Never
   * rejects: a failure is logged, and the sign-out at lading stands.
   */
  async endProviderLogin(token: string, req: IncomingMessage): Promise<string | null> {
    const { catalog, clock, sealer, logger } = this.#o;
    try {
      const { provider, rp, base } = this.parts();
      if (provider) {
        const op = await provider.provider();
        // NOTE: a detached response: reading the provider's signed cookie must write nothing
        // into the answer being prepared.
        const session = await op.Session.get(op.createContext(req, new ServerResponse(req)));
        if (!session.accountId) return null;
        await session.destroy();
        logger.info({ user: session.accountId }, 'oidc: ended the embedded provider\'s login session at sign-out');
        return null;
      }
      const tokenHash = hashToken(token);
      const record = await catalog.oidcGet(ID_TOKEN_KIND, tokenHash, clock.now());
      if (!record) return null;
      await catalog.oidcDelete(ID_TOKEN_KIND, tokenHash);
      return await rp.endSessionUrl(sealer.open(record.payload, ID_TOKEN_PURPOSE).toString('utf8'), `${base}/`);
    } catch (err) {
      logger.warn({ err }, 'oidc: the login at the identity provider could not be ended at sign-out');
      return null;
    }
  }

  /**
   * The `reauthorize` hook of sessions: before a new credential is issued, asks the provider
   * whether the login still stands by using the refresh token. A session without one (local
   * password, direct access token) is left alone. Rejects with `UNAUTHENTICATED`
   * (`invalidToken`) and ends the session when the provider refuses.
   */
  reauthorize = async (session: SessionRecord): Promise<void> => {
    const { catalog, clock, sealer, logger } = this.#o;
    const record = await catalog.oidcGet(GRANT_KIND, session.tokenHash, clock.now());
    if (!record) return;
    const refreshToken = sealer.open(record.payload, GRANT_PURPOSE).toString('utf8');
    let rotated: string;
    try {
      rotated = await this.parts().rp.refresh(refreshToken);
    } catch (err) {
      if (!isLadingError(err, 'UNAUTHENTICATED')) throw err;
      await catalog.oidcDelete(GRANT_KIND, session.tokenHash);
      await catalog.deleteSession(session.tokenHash);
      logger.info({ user: session.user }, 'oidc: the provider refused the refresh token; session ended');
      throw new LadingError('UNAUTHENTICATED', 'The identity provider no longer accepts your login; log in again via /auth/askauth.', { cause: err, details: { invalidToken: true } });
    }
    if (rotated !== refreshToken) {
      await catalog.oidcPut(GRANT_KIND, session.tokenHash, { payload: sealer.seal(rotated, GRANT_PURPOSE), expiresAt: record.expiresAt });
    }
  };

  /**
   * Where and as which client the command line logs in, from the provider's discovery
   * document. `UNAVAILABLE` when the provider cannot be reached.
   */
  async cliClient(): Promise<CliClientInfo> {
    const { rp } = this.parts();
    const meta = (await rp.configuration()).serverMetadata();
    const s = this.#o.settings;
    if (!meta.token_endpoint) throw new LadingError('UNAVAILABLE', 'The identity provider publishes no token endpoint.');
    return {
      issuer: rp.issuer,
      device_authorization_endpoint: typeof meta.device_authorization_endpoint === 'string' ? meta.device_authorization_endpoint : null,
      token_endpoint: meta.token_endpoint,
      revocation_endpoint: typeof meta.revocation_endpoint === 'string' ? meta.revocation_endpoint : null,
      client_id: s.cliClientId,
      scopes: s.cliScopes,
      token_ttl: this.#o.tokenTtlSeconds,
      local_accounts: this.embedded,
    };
  }

  /**
   * The user an access token of the provider proves, checked exactly as a bearer access token
   * is (`externalBearer`), for `POST /auth/exchange`. Rejects with `UNAUTHENTICATED` when it is
   * not a valid access token for lading, `FORBIDDEN` as `userFor` does.
   */
  async userOfAccessToken(token: string): Promise<string> {
    const verified = await this.parts().accessTokens.verify(token);
    if (!verified) throw new LadingError('UNAUTHENTICATED', 'The access token is not a valid access token of this server\'s identity provider for lading (wrong issuer or audience, expired, or not an access token).');
    return this.userFor(verified.claims);
  }

  /**
   * The `externalBearer` hook of sessions: when `token` is a valid access token of the
   * provider, the user it maps to (created on first use) and when the token expires; else null.
   */
  externalBearer = async (token: string): Promise<{ user: string; expiresAt: Date } | null> => {
    if (!this.#o.publicBase.known) return null;
    const verified = await this.parts().accessTokens.verify(token);
    if (!verified) return null;
    const user = await this.userFor(verified.claims);
    const limit = this.#o.clock.now().getTime() + this.#o.tokenTtlSeconds * 1000;
    this.#o.logger.info({ user }, 'oidc: session opened from a provider access token');
    return { user, expiresAt: new Date(Math.min(verified.expiresAt.getTime(), limit)) };
  };
}
