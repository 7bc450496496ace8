/**
 * The X.509 proxy `CredentialManager`: at login (and on `POST /auth/proxy`) it makes a key
 * pair, obtains an end-entity user certificate for it from a `CertificateIssuer`, maps the
 * certificate's subject DN to the user in the catalog, derives an RFC 3820 proxy with its own
 * key pair, and stores all four, sealed under the master key. Only the public chain ever
 * leaves it (`open`); private keys are never logged, returned or stored unsealed.
 */
import { createHash } from 'node:crypto';
import { BoundedCache } from '../../core/bounded-cache.ts';
import { LadingError } from '../../core/errors.ts';
import type { AccountStore, BackendCredential, CertificateIssuer } from '../../core/ports.ts';
import { issuerDn, subjectDn } from './ca.ts';
import { OID_CN, encodeName } from './dn.ts';
import { PROXY_CREDENTIAL_KIND } from './authority.ts';
import { createProxy } from './proxy.ts';
import { SIGNING_ALGORITHM, certificatePem, exportPrivateKeyPem, generateKeyPair, parseCertificate, x509 } from './x509.ts';
import type { CredentialManager } from '../../core/ports.ts';
import type { Sealer } from '../secrets/sealing.ts';

export interface ProxyCredentialsOptions {
  issuer: CertificateIssuer;
  sealer: Sealer;
  catalog: Pick<AccountStore, 'mapSubject'>;
  /** Proxy lifetime in seconds (`proxy.lifetime`). */
  proxyLifetimeSeconds: number;
  /** How many opened credentials to remember (default 1024). */
  cacheSize?: number;
}

/** What a stored credential holds once unsealed. */
export interface ProxyBundle {
  v: 1;
  proxy: string;
  proxyKey: string;
  user: string;
  userKey: string;
}

const SEAL_PURPOSE = 'lading.proxy-credential';

export interface ProxyCredentialManager extends CredentialManager {
  /** The whole bundle of a stored credential, private keys included: for interoperability checks only. */
  unseal(stored: string): ProxyBundle;
}

export function createProxyCredentials(o: ProxyCredentialsOptions): ProxyCredentialManager {
  if (!(o.proxyLifetimeSeconds > 0)) throw new Error('proxy credentials: proxyLifetimeSeconds must be positive');
  const unseal = (stored: string): ProxyBundle => {
    const bundle = JSON.parse(o.sealer.open(stored, SEAL_PURPOSE).toString('utf8')) as ProxyBundle;
    if (bundle.v !== 1) throw new LadingError('INTERNAL', 'A stored credential has an unknown format.');
    return bundle;
  };
  // NOTE: every request of a session opens the same stored credential; unsealing it (AES-GCM
  // and a JSON parse of some 6 KB) each time cost a sixth of a metadata GET. Only the public
  // chain is remembered, keyed by a digest of the sealed value, never the private keys.
  const opened = new BoundedCache<string, BackendCredential>(o.cacheSize ?? 1024);
  return {
    unseal,
    /**
     * Rejects with whatever the issuer rejects with (`UNAVAILABLE` when the CA is down), and
     * `INTERNAL` when the CA returns a certificate for another key.
     */
    async issue(user, now) {
      const keys = await generateKeyPair();
      const csr = await x509.Pkcs10CertificateRequestGenerator.create({
        name: new x509.Name(encodeName([[OID_CN, user]])),
        keys,
        signingAlgorithm: SIGNING_ALGORITHM,
      });
      const userCert = parseCertificate(await o.issuer.issue(csr.toString('pem')));
      if (!Buffer.from(userCert.publicKey.rawData).equals(Buffer.from(csr.publicKey.rawData))) {
        throw new LadingError('INTERNAL', 'The certificate authority returned a certificate for another key.');
      }
      await o.catalog.mapSubject(subjectDn(userCert), user);
      const proxy = await createProxy({ issuer: userCert, issuerKey: keys.privateKey, now, lifetimeSeconds: o.proxyLifetimeSeconds });
      const bundle: ProxyBundle = {
        v: 1,
        proxy: certificatePem(proxy.cert),
        proxyKey: await exportPrivateKeyPem(proxy.keys.privateKey),
        user: certificatePem(userCert),
        userKey: await exportPrivateKeyPem(keys.privateKey),
      };
      return o.sealer.seal(JSON.stringify(bundle), SEAL_PURPOSE);
    },
    async open(stored): Promise<BackendCredential> {
      const key = createHash('sha256').update(stored).digest('base64');
      const known = opened.get(key);
      if (known) return known;
      const { proxy, user } = unseal(stored);
      const credential: BackendCredential = Object.freeze({ kind: PROXY_CREDENTIAL_KIND, chain: Object.freeze([proxy, user]) });
      opened.set(key, credential);
      return credential;
    },
    async inspect(stored) {
      const { proxy, user } = unseal(stored);
      const p = parseCertificate(proxy);
      const u = parseCertificate(user);
      // NOTE: the credential is over when either certificate ends, so that POST /auth/proxy
      // regenerates both rather than reporting a proxy of an expired certificate as valid.
      return { notAfter: new Date(Math.min(p.notAfter.getTime(), u.notAfter.getTime())), notBefore: p.notBefore, subject: subjectDn(p), issuer: issuerDn(p) };
    },
  };
}
