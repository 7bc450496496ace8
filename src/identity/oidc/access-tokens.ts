/**
 * Checks an identity provider's access token presented directly as a bearer token (for tools
 * such as oidc-agent): a JWT verified with `jose` against the provider's JWKS with issuer,
 * audience and expiry checks, or, where configured, token introspection at the provider. It
 * answers "whose token is this and until when", nothing else; it opens no session.
 */
import type * as Jose from 'jose';
import type { Logger } from 'pino';
import type { Clock } from '../../core/ports.ts';

export interface AccessTokenVerifierOptions {
  issuer: string;
  /** Expected `aud` (JWT) or `aud`/`client_id` (introspection). */
  audience: string;
  /** The provider's JWKS URI, resolved lazily (discovery). */
  jwksUri: () => Promise<URL>;
  /** When set, tokens are checked by introspection instead of locally. */
  introspect?: (token: string) => Promise<Record<string, unknown>>;
  /** Accept only RFC 9068 access tokens (`typ: at+jwt`), as the embedded provider issues. */
  requireAtJwt: boolean;
  clock: Clock;
  logger: Logger;
}

export interface VerifiedAccessToken {
  claims: Record<string, unknown>;
  expiresAt: Date;
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// NOTE: ID tokens carry the client as audience too; these header and payload types mark tokens
// that are not access tokens, so an ID token cannot be replayed as a bearer token.
const ACCESS_TOKEN_TYPES = new Set([undefined, 'JWT', 'at+jwt', 'application/at+jwt']);
const NOT_ACCESS_TOKEN_TYP_CLAIMS = new Set(['ID', 'Refresh', 'Logout']);
const ID_TOKEN_ONLY_CLAIMS = ['nonce', 'at_hash', 'c_hash', 's_hash'];

let loaded: Promise<typeof Jose> | null = null;
/** `jose`, loaded when the first JWT access token is checked rather than at start-up. */
function jose(): Promise<typeof Jose> {
  loaded ??= import('jose');
  return loaded;
}

export class AccessTokenVerifier {
  readonly #o: AccessTokenVerifierOptions;
  #jwks: ReturnType<typeof Jose.createRemoteJWKSet> | null = null;

  constructor(options: AccessTokenVerifierOptions) {
    this.#o = options;
  }

  /**
   * The token's claims and expiry when it is a valid access token of the provider for lading's
   * audience; null otherwise (bad signature, other issuer or audience, expired, inactive, not
   * an access token). Rejects only when the provider cannot be reached (`UNAVAILABLE`).
   */
  async verify(token: string): Promise<VerifiedAccessToken | null> {
    return this.#o.introspect ? this.#introspection(token) : this.#jwt(token);
  }

  async #jwt(token: string): Promise<VerifiedAccessToken | null> {
    if (!JWT.test(token)) return null;
    const o = this.#o;
    const { createRemoteJWKSet, decodeProtectedHeader, errors: joseErrors, jwtVerify } = await jose();
    try {
      const header = decodeProtectedHeader(token);
      if (!ACCESS_TOKEN_TYPES.has(header.typ) || (o.requireAtJwt && !String(header.typ).endsWith('at+jwt'))) return this.#no(`token type ${header.typ}`);
      this.#jwks ??= createRemoteJWKSet(await o.jwksUri());
      const { payload } = await jwtVerify(token, this.#jwks, {
        issuer: o.issuer, audience: o.audience, currentDate: o.clock.now(), requiredClaims: ['exp', 'sub'],
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      });
      if (typeof payload.typ === 'string' && NOT_ACCESS_TOKEN_TYP_CLAIMS.has(payload.typ)) return this.#no(`payload type ${payload.typ}`);
      if (ID_TOKEN_ONLY_CLAIMS.some((c) => payload[c] !== undefined)) return this.#no('an ID token');
      return { claims: { ...payload }, expiresAt: new Date(payload.exp! * 1000) };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return this.#no((err as Error).message);
      throw err;
    }
  }

  async #introspection(token: string): Promise<VerifiedAccessToken | null> {
    const o = this.#o;
    const r = await o.introspect!(token);
    if (r.active !== true) return this.#no('inactive (introspection)');
    if (r.iss !== undefined && r.iss !== o.issuer) return this.#no('other issuer (introspection)');
    const aud = Array.isArray(r.aud) ? r.aud : r.aud === undefined ? [] : [r.aud];
    if (!aud.includes(o.audience) && r.client_id !== o.audience) return this.#no('other audience (introspection)');
    if (typeof r.exp !== 'number' || r.exp * 1000 <= o.clock.now().getTime()) return this.#no('expired (introspection)');
    if (typeof r.token_type === 'string' && r.token_type.toLowerCase() === 'refresh_token') return this.#no('a refresh token');
    return { claims: r, expiresAt: new Date(r.exp * 1000) };
  }

  #no(reason: string): null {
    this.#o.logger.info({ reason }, 'oidc: bearer token is not a valid access token of the provider');
    return null;
  }
}
