/**
 * The backend's trust boundary for X.509 proxy credentials: an `Authority` that verifies the
 * proxy chain a request carries on every call (see `verify.ts`) and maps the end-entity subject
 * DN to a backend user through the catalog's DN mapping. It trusts nothing the HTTP layer says
 * about who the caller is, and never sees a bearer token.
 */
import { createHash } from 'node:crypto';
import { BoundedCache } from '../../core/bounded-cache.ts';
import { LadingError, isLadingError } from '../../core/errors.ts';
import type { AccountStore, Authority } from '../../core/ports.ts';
import { type VerifiedChain, verifyProxyChain } from './verify.ts';
import type { x509 } from './x509.ts';

export const PROXY_CREDENTIAL_KIND = 'x509-proxy';

export interface ProxyAuthorityOptions {
  /**
   * Trusted CA certificates (see `loadTrustAnchors`), or a function that gives them, called
   * at each verification (first when the first chain is verified): it should answer from
   * memory, and the anchors it gives may change (a CA rotation).
   */
  trustAnchors: readonly x509.X509Certificate[] | (() => readonly x509.X509Certificate[]);
  /**
   * Called when a chain is refused as `INVALID_CREDENTIAL`: resolves true when the trust
   * anchors may have changed since, and the chain is then verified once more (a CA another node
   * began signing with). Absent: a refusal is final.
   */
  refreshAnchors?: () => Promise<boolean>;
  catalog: Pick<AccountStore, 'userForSubject'>;
  /** How many verified chains to remember (default 4096). */
  cacheSize?: number;
  /** The chain verifier; `verifyProxyChain` unless a test counts its calls. */
  verify?: typeof verifyProxyChain;
}

/**
 * `resolve` accepts `{ kind: 'x509-proxy', chain: [proxyPem, …, endEntityPem] }` and resolves
 * with the mapped user. Rejects with `PROXY_EXPIRED` (spec section 7 message) when a proxy in
 * an otherwise valid chain has expired, and `INVALID_CREDENTIAL` for any other kind of
 * credential, any verification failure, or a DN with no mapping.
 *
 * A chain that verified is remembered, keyed by the SHA-256 of its certificates, for as long
 * as every certificate in it and its trust anchor are valid (`VerifiedChain.validFrom` to
 * `validUntil`): a later request with the same chain skips the signature checks, and the first
 * request after the earliest `notAfter` verifies again and gets `PROXY_EXPIRED`. Refusals are
 * never remembered. The DN-to-user mapping is looked up on every call, so unmapping a DN or
 * removing a user takes effect at once, on every node; `subjectOf` leaves it to the caller,
 * who looks it up on every call too.
 */
export function createProxyAuthority(o: ProxyAuthorityOptions): Authority {
  const given = o.trustAnchors;
  const fixed: readonly x509.X509Certificate[] | null = typeof given === 'function' ? null : [...given];
  const anchors = (): readonly x509.X509Certificate[] => fixed ?? (given as () => readonly x509.X509Certificate[])();
  const verify = o.verify ?? verifyProxyChain;
  const verdicts = new BoundedCache<string, VerifiedChain>(o.cacheSize ?? 4096);
  // NOTE: an opened credential is one frozen object for as long as it is remembered, so its
  // chain array finds its verdict without hashing the certificates again.
  const byChain = new WeakMap<readonly string[], VerifiedChain>();
  const validAt = (v: VerifiedChain | undefined, now: Date): v is VerifiedChain =>
    v !== undefined && v.validFrom.getTime() <= now.getTime() && now.getTime() <= v.validUntil.getTime();
  const verified = async (chain: string[], now: Date): Promise<VerifiedChain> => {
    const seen = byChain.get(chain);
    if (validAt(seen, now)) return seen;
    const fresh = await verifiedByKey(chain, now);
    if (Object.isFrozen(chain)) byChain.set(chain, fresh);
    return fresh;
  };
  const verifiedByKey = async (chain: string[], now: Date): Promise<VerifiedChain> => {
    const key = chain.reduce((h, pem) => h.update(pem).update('\0'), createHash('sha256')).digest('base64');
    const known = verdicts.get(key);
    if (validAt(known, now)) return known;
    verdicts.delete(key);
    let fresh: VerifiedChain;
    try {
      fresh = await verify(chain, anchors(), now);
    } catch (err) {
      if (!o.refreshAnchors || !isLadingError(err, 'INVALID_CREDENTIAL') || !(await o.refreshAnchors())) throw err;
      fresh = await verify(chain, anchors(), now);
    }
    verdicts.set(key, fresh);
    return fresh;
  };
  const subjectOf = async (credential: Parameters<Authority['resolve']>[0], now: Date): Promise<string> => {
    const chain = credential.chain;
    if (credential.kind !== PROXY_CREDENTIAL_KIND || !Array.isArray(chain) || !chain.every((c) => typeof c === 'string')) {
      throw new LadingError('INVALID_CREDENTIAL', 'The backend accepts only X.509 proxy credentials.');
    }
    return (await verified(chain as string[], now)).identity;
  };
  return {
    subjectOf,
    async resolve(credential, now) {
      const identity = await subjectOf(credential, now);
      const user = await o.catalog.userForSubject(identity);
      if (!user) throw new LadingError('INVALID_CREDENTIAL', `The certificate subject '${identity}' is not mapped to a backend user.`);
      return user;
    },
  };
}
