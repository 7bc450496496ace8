/**
 * The embedded OpenID Provider, on `oidc-provider` (OpenID-certified): discovery, JWKS with key
 * rotation, authorization with lading's own login and consent pages (`interactions.ts`; lading's
 * own app is never asked for consent, the command line is), token,
 * userinfo, introspection and revocation endpoints, for the local accounts of `lading user add`.
 * Its state lives in the catalog (`provider-adapter.ts`), so any node can serve any step.
 * It registers two clients: lading's own relying party, which reaches it over HTTP like any
 * other provider, and the public client of the `lading` command line, which signs in with the
 * device authorization grant (RFC 8628: the user enters a short code at `/oidc/device`; its
 * polling interval and `slow_down` come from `device-polling.ts`). It never opens lading
 * sessions itself.
 */
import { createHmac, generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
// NOTE: `oidc-provider` (and Koa under it) is loaded when the provider is first built, not
// at start-up: most processes never serve a login page (see `#build`).
import type Provider from 'oidc-provider';
import type { Configuration, JWK, KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from 'pino';
import type { Sealer } from '../secrets/sealing.ts';
import type { AccountStore, Clock, OidcStore } from '../../core/ports.ts';
import { catalogAdapterFactory } from './provider-adapter.ts';
import { deviceFlowPages } from './device-pages.ts';
import { devicePolling } from './device-polling.ts';

/** Where the provider is mounted inside lading's HTTP server. */
export const PROVIDER_MOUNT = '/oidc';

const KEY_KIND = 'lading:signing-key';
const KEY_PURPOSE = 'oidc signing key';
/** Seconds a device code of the device authorization grant lives. */
const DEVICE_CODE_TTL = 600;

export interface EmbeddedProviderOptions {
  /** Issuer URL, `<public base>/oidc`. */
  issuer: string;
  catalog: OidcStore & Pick<AccountStore, 'getUser'>;
  clock: Clock;
  sealer: Sealer;
  /** Secret all nodes share (derived from the master key); cookie keys and the client secret come from it. */
  secret: Buffer;
  logger: Logger;
  /** The relying party's client id and redirect URI. */
  clientId: string;
  /** Client id of the command line's public client (device authorization and refresh grants, no secret). */
  cliClientId: string;
  redirectUri: string;
  /** Audience of access tokens for lading's API (what `access-tokens.ts` checks). */
  audience: string;
  /** Resource indicator (RFC 8707, an absolute URI) of lading's API: `<public base>/api`. */
  resource: string;
  /** JWT access tokens (checked locally) or opaque ones (checked by introspection, which only handles those). */
  accessTokenFormat: 'jwt' | 'opaque';
  /** Signing keys are replaced after this many seconds; the previous key stays published for one more period. */
  keyRotationSeconds: number;
  /** Trust X-Forwarded-* (behind a reverse proxy). */
  trustProxy: boolean;
  /**
   * Renders an error the provider answers with (status ≥ 400, message for the user) as a body
   * and its content type, so its errors look like the rest of the server's.
   */
  renderError: (status: number, message: string) => { contentType: string; body: string };
}

/** Derives a named sub-secret; every node derives the same one from the shared secret. */
export function deriveSecret(secret: Buffer, label: string): Buffer {
  return createHmac('sha256', secret).update(label).digest();
}

/** The client secret of lading's own client at the embedded provider. */
export function embeddedClientSecret(secret: Buffer): string {
  return deriveSecret(secret, 'oidc client secret').toString('base64url');
}

/** What scopes the provider knows and which claims each releases (shown on the consent page). */
export const SCOPE_CLAIMS: Record<string, string[]> = {
  openid: ['sub'],
  profile: ['preferred_username'],
  email: ['email', 'email_verified'],
};

/**
 * Returns the signing keys to publish, newest first, creating the key of the current rotation
 * period when it does not exist yet. Two nodes racing create one key: the catalog keeps the first.
 */
async function signingKeys(o: EmbeddedProviderOptions, period: number): Promise<JWK[]> {
  const now = o.clock.now();
  const id = `rs256-${period}`;
  if (!(await o.catalog.oidcGet(KEY_KIND, id, now))) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: id, alg: 'RS256', use: 'sig' };
    await o.catalog.oidcInsert(KEY_KIND, id, {
      payload: o.sealer.seal(JSON.stringify(jwk), KEY_PURPOSE),
      // NOTE: a key stays published one period after it stops signing, so tokens it signed verify until they expire.
      expiresAt: new Date((period + 2) * o.keyRotationSeconds * 1000),
    }, now);
    o.logger.info({ kid: id }, 'oidc: created a signing key');
  }
  const records = await o.catalog.oidcList(KEY_KIND, now);
  return records
    .map((r) => JSON.parse(o.sealer.open(r.payload, KEY_PURPOSE).toString('utf8')) as JWK & { kid: string })
    .filter((k) => Number(k.kid.split('-')[1]) <= period)
    .sort((a, b) => Number(b.kid.split('-')[1]) - Number(a.kid.split('-')[1]));
}

/**
 * The embedded provider. `handle` serves a request under `PROVIDER_MOUNT` (after the caller
 * has taken the response over from Fastify); `provider()` gives the `oidc-provider` instance
 * of the current key period for the interaction pages.
 */
export class EmbeddedProvider {
  readonly options: EmbeddedProviderOptions;
  #current: { period: number; provider: Promise<Provider> } | null = null;

  constructor(options: EmbeddedProviderOptions) {
    this.options = options;
  }

  get issuer(): string {
    return this.options.issuer;
  }

  /** The provider instance; rebuilt when the key rotation period changes. */
  async provider(): Promise<Provider> {
    const period = Math.floor(this.options.clock.now().getTime() / 1000 / this.options.keyRotationSeconds);
    if (this.#current?.period !== period) {
      const provider = this.#build(period);
      this.#current = { period, provider };
      provider.catch(() => {
        if (this.#current?.provider === provider) this.#current = null;
      });
    }
    return this.#current.provider;
  }

  /** Serves one request whose URL starts with the mount path. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const provider = await this.provider();
    const original = req.url ?? '/';
    // NOTE: oidc-provider finds its mount path by comparing `originalUrl` with `url`, as under Express.
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = original;
    req.url = original.slice(PROVIDER_MOUNT.length) || '/';
    await provider.callback()(req, res);
  }

  async #build(period: number): Promise<Provider> {
    const o = this.options;
    const { default: OidcProvider, errors } = await import('oidc-provider');
    const keys = await signingKeys(o, period);
    const cookieKey = deriveSecret(o.secret, 'oidc cookies').toString('base64url');
    const logger = o.logger;
    const configuration: Configuration = {
      adapter: catalogAdapterFactory(o.catalog, o.clock),
      clients: [{
        client_id: o.clientId,
        client_secret: embeddedClientSecret(o.secret),
        client_name: 'lading data staging',
        redirect_uris: [o.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      }, {
        // NOTE: a public client: a secret shipped with a command line is no secret. What
        // protects it is the user entering the code in their own browser (RFC 8628 section 5).
        client_id: o.cliClientId,
        client_name: 'lading command line',
        redirect_uris: [],
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        token_endpoint_auth_method: 'none',
      }],
      jwks: { keys },
      cookies: {
        keys: [cookieKey],
        long: { signed: true, httpOnly: true, sameSite: 'lax' },
        short: { signed: true, httpOnly: true, sameSite: 'lax' },
      },
      claims: SCOPE_CLAIMS,
      scopes: ['openid', 'offline_access', 'profile', 'email'],
      // NOTE: profile claims go into the ID token, so the relying party needs no userinfo call
      // (the access token is for lading's API, not for userinfo).
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      // NOTE: only the authorization code flow (with PKCE) and refresh tokens: the implicit and
      // hybrid response types put tokens in the front channel, which RFC 9700 says not to use.
      responseTypes: ['code'],
      clientBasedCORS: () => false,
      findAccount: async (_ctx, sub) => {
        const user = await o.catalog.getUser(sub);
        if (!user || user.kind === 'group' || user.disabled) return undefined;
        return { accountId: user.name, claims: async () => ({ sub: user.name, preferred_username: user.name }) };
      },
      interactions: { url: async (_ctx, interaction) => `${PROVIDER_MOUNT}/interaction/${interaction.uid}` },
      // NOTE: lading's own app is part of the service the user signs in to: asking them to allow
      // it to read their user name would ask them to consent to what they came for, in every new
      // browser. Its grant covers what it asks for at once; any other client (the command line's
      // device flow) still gets the consent page.
      loadExistingGrant: async (ctx) => {
        const { client, session } = ctx.oidc;
        const grantId = ctx.oidc.result?.consent?.grantId ?? (client ? session?.grantIdFor(client.clientId) : undefined);
        const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
        if (!client || client.clientId !== o.clientId || !session?.accountId) return existing;
        const grant = existing ?? new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
        grant.addOIDCScope([...ctx.oidc.requestParamOIDCScopes].join(' '));
        grant.addOIDCClaims([...ctx.oidc.requestParamClaims]);
        for (const [indicator, server] of Object.entries(ctx.oidc.resourceServers ?? {})) {
          const scopes = [...ctx.oidc.requestParamScopes].filter((scope) => server.scopes.has(scope));
          if (scopes.length > 0) grant.addResourceScope(indicator, scopes.join(' '));
        }
        await grant.save();
        return grant;
      },
      features: {
        devInteractions: { enabled: false },
        deviceFlow: { enabled: true, charset: 'base-20', mask: '****-****', ...deviceFlowPages },
        introspection: { enabled: true, allowedPolicy: async (_ctx, client) => client.clientId === o.clientId },
        revocation: { enabled: true },
        userinfo: { enabled: true },
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => o.resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx, indicator) => {
            if (indicator !== o.resource) throw new errors.InvalidTarget();
            return { scope: 'openid profile email', audience: o.audience, accessTokenFormat: o.accessTokenFormat, accessTokenTTL: 3600, ...(o.accessTokenFormat === 'jwt' ? { jwt: { sign: { alg: 'RS256' as const } } } : {}) };
          },
        },
      },
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 60,
        DeviceCode: DEVICE_CODE_TTL,
        IdToken: 3600,
        Interaction: 3600,
        Grant: 30 * 86400,
        Session: 14 * 86400,
        RefreshToken: 30 * 86400,
      },
      renderError: async (ctx: KoaContextWithOIDC, out) => {
        const status = ctx.status >= 400 ? ctx.status : 400;
        const page = o.renderError(status, String(out.error_description ?? out.error));
        ctx.status = status;
        ctx.type = page.contentType;
        ctx.body = page.body;
      },
    };
    const provider = new OidcProvider(o.issuer, configuration);
    provider.proxy = o.trustProxy;
    provider.use(devicePolling({ catalog: o.catalog, clock: o.clock, deviceCodeTtl: DEVICE_CODE_TTL }));
    const refused = (event: string) => (ctx: KoaContextWithOIDC | Error, err?: Error) => {
      const e = err ?? (ctx as Error);
      logger.warn({ event, error: (e as { error?: string }).error ?? e.name, description: (e as { error_description?: string }).error_description }, 'oidc provider refused a request');
    };
    for (const event of ['authorization.error', 'grant.error', 'introspection.error', 'revocation.error', 'userinfo.error', 'jwks.error', 'discovery.error', 'check_session.error', 'end_session.error', 'backchannel.error']) {
      (provider as unknown as NodeJS.EventEmitter).on(event, refused(event));
    }
    provider.on('server_error', (_ctx: unknown, err: Error) => logger.error({ err }, 'oidc provider failed'));
    return provider;
  }
}
