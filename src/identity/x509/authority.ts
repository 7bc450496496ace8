/**
 * The backend's trust boundary for X.509 proxy credentials: an `Authority` that verifies the
 * proxy chain a request carries on every call (see `verify.ts`) and maps the end-entity subject
 * DN to a backend user through the catalog's DN mapping. It trusts nothing the HTTP layer says
 * about who the caller is, and never sees a bearer token.
 */
import { LadingError } from '../../core/errors.ts';
import type { Authority, Catalog } from '../../core/ports.ts';
import { verifyProxyChain } from './verify.ts';
import type { x509 } from './x509.ts';

export const PROXY_CREDENTIAL_KIND = 'x509-proxy';

export interface ProxyAuthorityOptions {
  /** Trusted CA certificates (see `loadTrustAnchors`). */
  trustAnchors: readonly x509.X509Certificate[];
  catalog: Pick<Catalog, 'userForSubject'>;
}

/**
 * `resolve` accepts `{ kind: 'x509-proxy', chain: [proxyPem, …, endEntityPem] }` and resolves
 * with the mapped user. Rejects with `PROXY_EXPIRED` (spec section 7 message) when a proxy in
 * an otherwise valid chain has expired, and `INVALID_CREDENTIAL` for any other kind of
 * credential, any verification failure, or a DN with no mapping.
 */
export function createProxyAuthority(o: ProxyAuthorityOptions): Authority {
  const anchors = [...o.trustAnchors];
  return {
    async resolve(credential, now) {
      const chain = credential.chain;
      if (credential.kind !== PROXY_CREDENTIAL_KIND || !Array.isArray(chain) || !chain.every((c) => typeof c === 'string')) {
        throw new LadingError('INVALID_CREDENTIAL', 'The backend accepts only X.509 proxy credentials.');
      }
      const verified = await verifyProxyChain(chain as string[], anchors, now);
      const user = await o.catalog.userForSubject(verified.identity);
      if (!user) throw new LadingError('INVALID_CREDENTIAL', `The certificate subject '${verified.identity}' is not mapped to a backend user.`);
      return user;
    },
  };
}
