/**
 * Builds the X.509 credential stack from the configuration: the master key and sealer, the
 * CA (lading's own, kept in the catalog; or an operator's from files) or the HTTP client of an
 * online CA, the proxy credential manager, the trust anchors and the proxy authority the
 * backend verifies with. Used by `deps.ts` only; it reads the files the configuration names
 * (secrets through `secret-file.ts`) and nothing else, and puts no secret in an error message.
 */
import { join } from 'node:path';
import { ConfigError, type Config } from './config.ts';
import { readSecretFile } from './secret-file.ts';
import type { Authority, Catalog, CertificateIssuer, Clock } from '../core/ports.ts';
import { type CertificateAuthority, loadOrCreateCa } from '../identity/x509/ca.ts';
import { type CaRing, openCaRing } from '../identity/x509/ca-ring.ts';
import { hkdfSync } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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
  /**
   * The CA that signs now: lading's own (from the catalog, see `caRing`) or the operator's
   * (`ca.cert`); null when user certificates come from an online CA elsewhere.
   */
  readonly ca: CertificateAuthority | null;
  /** lading's own CAs as the catalog keeps them; null with `ca.cert` or an online CA. */
  caRing: CaRing | null;
  /**
   * Reads the catalog's CAs again (see `CaRing.refresh`; with `force`, whenever it last read
   * them) and republishes `<data>/ca/ca.pem`; resolves with the signing generation when it
   * changed, else null.
   */
  refreshCa(options?: { force?: boolean }): Promise<number | null>;
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
export async function createCredentialStack(o: { config: Config; dataDir: string; catalog: Catalog; clock: Clock; log?: (message: string) => void }): Promise<CredentialStack> {
  const { config, dataDir } = o;
  const masterKey = await loadMasterKey(config.credentials.key_file ?? join(dataDir, 'keys', 'master.key'), true);
  const sealer = createSealer(masterKey);
  let fileCa: CertificateAuthority | null = null;
  let ring: CaRing | null = null;
  let issuer: CertificateIssuer;
  let caEndpoint: CaEndpoint | null = null;
  const caDir = join(dataDir, 'ca');
  if (config.ca.issuer === 'embedded') {
    if (config.ca.cert || config.ca.key) {
      if (!config.ca.cert || !config.ca.key) throw new ConfigError(`${config.ca.cert ? 'ca.key' : 'ca.cert'}: must be set together with ${config.ca.cert ? 'ca.cert' : 'ca.key'} (an operator's CA is its certificate and its key).`);
      for (const [key, file] of [['ca.cert', config.ca.cert], ['ca.key', config.ca.key]] as const) {
        await readFile(file).catch((err: NodeJS.ErrnoException) => { throw new ConfigError(`${key}: cannot read '${file}' (${err.code ?? err.message})`); });
      }
      fileCa = await loadOrCreateCa({
        dir: caDir, zone: config.zone, sealer, now: o.clock.now(), certFile: config.ca.cert, keyFile: config.ca.key,
      });
    } else {
      // NOTE: a replaced CA stays trusted while what it signed may be valid: a user
      // certificate lives `ca.user_lifetime`, a proxy `proxy.lifetime`.
      ring = await openCaRing({
        catalog: o.catalog, sealer, zone: config.zone, clock: o.clock,
        overlapSeconds: Math.max(config.ca.user_lifetime, config.proxy.lifetime),
        legacyFile: join(caDir, 'ca.json'), log: o.log,
      });
      await publishAnchors(caDir, ring.anchorPems());
    }
    const signing = ring;
    issuer = createLocalIssuer({ ca: signing ? () => signing.active() : fileCa!, clock: o.clock, lifetimeSeconds: config.ca.user_lifetime });
    // NOTE: a node creating the file derives its secret from the master key, so nodes that share
    // only the master key (and the catalog) accept the same issuer credential.
    const secret = await readSecretFile({
      key: 'ca.issuer_secret_file', file: config.ca.issuer_secret_file ?? join(dataDir, 'keys', 'ca-issuer.secret'), create: true,
      initial: Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'lading.ca-issuer-secret', 32)).toString('base64url'),
    });
    const published = fileCa?.certPem ?? '';
    caEndpoint = {
      issuer, secret,
      // NOTE: every CA trusted now, the signing one first, so that a relying party given this
      // file keeps accepting certificates of the previous CA through a rotation.
      get caPem() {
        return signing ? signing.anchorPems().join('') : published;
      },
    };
  } else if (/^https?:\/\//.test(config.ca.issuer)) {
    if (!config.ca.issuer_secret_file) throw new ConfigError('ca.issuer is a URL: set ca.issuer_secret_file to the file holding its credential.');
    issuer = createHttpIssuer({ url: config.ca.issuer, secret: await readSecretFile({ key: 'ca.issuer_secret_file', file: config.ca.issuer_secret_file }) });
  } else {
    throw new ConfigError(`ca.issuer must be 'embedded' or an http(s) URL, got '${config.ca.issuer}'.`);
  }
  // NOTE: with lading's own CAs, `<data>/ca` holds only what this node publishes from the
  // catalog, so it is no trust directory: a file left there would outlive a rotation.
  const trustDir = config.ca.trust_dir ?? (ring ? null : caDir);
  const credentials = createProxyCredentials({ issuer, sealer, catalog: o.catalog, proxyLifetimeSeconds: config.proxy.lifetime });
  // NOTE: the files are read now, so an unreadable trust directory still stops the start, but
  // parsed at the first verification, which is what loads the X.509 library.
  const anchorTexts = trustDir ? await readTrustAnchors(trustDir) : [];
  let parsed: { key: string; anchors: ReturnType<typeof parseTrustAnchors> } | null = null;
  const trustAnchors = (): ReturnType<typeof parseTrustAnchors> => {
    const own = ring ? ring.anchorPems() : [];
    const key = own.join('');
    if (!parsed || parsed.key !== key) parsed = { key, anchors: parseTrustAnchors([...own, ...anchorTexts]) };
    return parsed.anchors;
  };
  const refreshCa = async (options: { force?: boolean } = {}): Promise<number | null> => {
    if (!ring) return null;
    const before = ring.generation();
    if (!(await ring.refresh(options))) return null;
    await publishAnchors(caDir, ring.anchorPems());
    return ring.generation() !== before ? ring.generation() : null;
  };
  const authority = createProxyAuthority({
    trustAnchors, catalog: o.catalog,
    // NOTE: a chain of a CA another node has just begun signing with verifies at once: a
    // refused chain makes this node read the catalog's CAs (at most once a second) and retry.
    refreshAnchors: ring ? async () => (await ring!.refresh()) : undefined,
  });
  const stack: CredentialStack = {
    credentials, authority, caRing: ring, caEndpoint, trustDir: trustDir ?? caDir, masterKey, sealer, refreshCa,
    get ca() {
      return ring ? ring.active() : fileCa;
    },
  };
  return stack;
}

/**
 * Writes the PEM certificates `pems` to `<dir>/ca.pem`, for grid tools on this node (`openssl
 * verify -CAfile`); a copy of what the catalog holds, never read back.
 */
async function publishAnchors(dir: string, pems: string[]): Promise<void> {
  const file = join(dir, 'ca.pem');
  const text = pems.join('');
  if ((await readFile(file, 'utf8').catch(() => null)) === text) return;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o644 });
  await rename(tmp, file);
}
