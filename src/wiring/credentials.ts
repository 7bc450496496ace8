/**
 * Builds the X.509 credential stack from the configuration: the master key and sealer, the
 * CA (embedded or configured) or the HTTP client of an online CA, the proxy credential
 * manager, the trust anchors and the proxy authority the backend verifies with. Used by
 * `deps.ts` only; it reads the files the configuration names (secrets through
 * `secret-file.ts`) and nothing else, and puts no secret in an error message.
 */
import { join } from 'node:path';
import { ConfigError, type Config } from './config.ts';
import { readSecretFile } from './secret-file.ts';
import type { Authority, Catalog, CertificateIssuer, Clock } from '../core/ports.ts';
import { type CertificateAuthority, loadOrCreateCa } from '../identity/x509/ca.ts';
import { createProxyAuthority } from '../identity/x509/authority.ts';
import { createHttpIssuer } from '../identity/x509/issuer-http.ts';
import { createLocalIssuer } from '../identity/x509/issuer-local.ts';
import { parseTrustAnchors, readTrustAnchors } from '../identity/x509/verify.ts';
import type { CaEndpoint } from '../http/routes-ca.ts';
import { type ProxyCredentialManager, createProxyCredentials } from '../identity/x509/proxy-credentials.ts';
import { type Sealer, createSealer, loadMasterKey } from '../identity/secrets/sealing.ts';

export interface CredentialStack {
  credentials: ProxyCredentialManager;
  authority: Authority;
  /** lading's own CA, or null when user certificates come from an online CA elsewhere. */
  ca: CertificateAuthority | null;
  /** The online CA endpoint to mount, or null. */
  caEndpoint: CaEndpoint | null;
  trustDir: string;
  /** The master key every sealed secret of this node is sealed under (also the OpenID Provider's). */
  masterKey: Buffer;
  sealer: Sealer;
}

/**
 * Builds the stack from `credentials.*`, `ca.*` and `proxy.lifetime`. Rejects with `ConfigError`
 * for an unusable `ca.issuer` or an unreadable `ca.issuer_secret_file`.
 */
export async function createCredentialStack(o: { config: Config; dataDir: string; catalog: Catalog; clock: Clock }): Promise<CredentialStack> {
  const { config, dataDir } = o;
  const masterKey = await loadMasterKey(config.credentials.key_file ?? join(dataDir, 'keys', 'master.key'), true);
  const sealer = createSealer(masterKey);
  let ca: CertificateAuthority | null = null;
  let issuer: CertificateIssuer;
  let caEndpoint: CaEndpoint | null = null;
  if (config.ca.issuer === 'embedded') {
    ca = await loadOrCreateCa({
      dir: join(dataDir, 'ca'), zone: config.zone, sealer, now: o.clock.now(), certFile: config.ca.cert, keyFile: config.ca.key,
    });
    issuer = createLocalIssuer({ ca, clock: o.clock, lifetimeSeconds: config.ca.user_lifetime });
    const secret = await readSecretFile({
      key: 'ca.issuer_secret_file', file: config.ca.issuer_secret_file ?? join(dataDir, 'keys', 'ca-issuer.secret'), create: true,
    });
    caEndpoint = { issuer, secret, caPem: ca.certPem };
  } else if (/^https?:\/\//.test(config.ca.issuer)) {
    if (!config.ca.issuer_secret_file) throw new ConfigError('ca.issuer is a URL: set ca.issuer_secret_file to the file holding its credential.');
    issuer = createHttpIssuer({ url: config.ca.issuer, secret: await readSecretFile({ key: 'ca.issuer_secret_file', file: config.ca.issuer_secret_file }) });
  } else {
    throw new ConfigError(`ca.issuer must be 'embedded' or an http(s) URL, got '${config.ca.issuer}'.`);
  }
  const trustDir = config.ca.trust_dir ?? join(dataDir, 'ca');
  const credentials = createProxyCredentials({ issuer, sealer, catalog: o.catalog, proxyLifetimeSeconds: config.proxy.lifetime });
  // NOTE: the files are read now, so an unreadable trust directory still stops the start, but
  // parsed at the first verification, which is what loads the X.509 library.
  const anchorTexts = await readTrustAnchors(trustDir);
  const authority = createProxyAuthority({ trustAnchors: () => parseTrustAnchors(anchorTexts), catalog: o.catalog });
  return { credentials, authority, ca, caEndpoint, trustDir, masterKey, sealer };
}
