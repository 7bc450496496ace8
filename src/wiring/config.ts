/**
 * Configuration: defaults, then an optional JSON file (`--config`), then `LADING_…`
 * environment variables, then command-line flags. The only module that knows the keys; it
 * reads nothing by itself — callers pass the environment and the file's text in.
 */
import { hostname } from 'node:os';

export interface Config {
  listen: string;
  data: string;
  zone: string;
  public_url: string | null;
  backend_url: string;
  trust_proxy: boolean;
  log: { level: string };
  limits: { upload_bytes: number };
  auth: { token_ttl: number };
  resource: {
    fsync: boolean;
    driver: 'fs' | 's3';
    path: string | null;
    s3: {
      endpoint: string | null;
      bucket: string | null;
      region: string;
      prefix: string;
      access_key_id: string | null;
      secret_access_key_file: string | null;
      secret_access_key: string | null;
    };
  };
  catalog: { driver: 'sqlite' | 'postgres'; url: string | null; url_file: string | null; schema: string };
  recovery: { grace: number };
  pid: {
    rules: string | null;
    provider: 'embedded' | 'handle';
    prefix: string;
    handle_url: string | null;
    handle_user: string | null;
    handle_password_file: string | null;
    handle_password: string | null;
    await_timeout: number;
  };
  oidc: {
    issuer: string | null;
    client_id: string;
    client_secret_file: string | null;
    client_secret: string | null;
    scopes: string;
    user_claim: string;
    audience: string | null;
    introspection: boolean;
    max_failed_logins: number;
    key_rotation: number;
  };
  proxy: { lifetime: number };
  jobs: { lease: number };
  credentials: { key_file: string | null };
  ca: {
    cert: string | null;
    key: string | null;
    trust_dir: string | null;
    issuer: string;
    issuer_secret_file: string | null;
    user_lifetime: number;
  };
}

/** Every key with its default and meaning; the README's configuration table is generated from this. */
export const CONFIG_KEYS = [
  { key: 'listen', default: '127.0.0.1:8080', doc: 'Address and port to listen on (host:port).' },
  { key: 'data', default: './lading-data', doc: 'Directory holding the catalog, the stored bytes and the keys.' },
  { key: 'zone', default: 'lading', doc: 'Zone name: the first segment of every path (/<zone>/home/<user>).' },
  { key: 'public_url', default: null, doc: 'Base URL used in `link` fields, e.g. https://staging.example.org; by default taken from each request\'s Host header.' },
  { key: 'backend_url', default: `lading://${hostname()}`, doc: 'Scheme and host used in `location` fields.' },
  { key: 'trust_proxy', default: false, doc: 'Trust X-Forwarded-For/-Proto/-Host from a reverse proxy.' },
  { key: 'log.level', default: 'info', doc: 'pino log level: fatal, error, warn, info, debug, trace or silent.' },
  { key: 'limits.upload_bytes', default: 1024 ** 4, doc: 'Largest accepted upload, in bytes (larger ones get 413).' },
  { key: 'auth.token_ttl', default: 86400, doc: 'Lifetime of a bearer token, in seconds.' },
  { key: 'resource.fsync', default: true, doc: 'Flush every upload to disk before it becomes visible.' },
  { key: 'proxy.lifetime', default: 43200, doc: 'Lifetime of the RFC 3820 proxy certificate the backend sees, in seconds (spec: typically 12 h).' },
  { key: 'credentials.key_file', default: null, doc: 'File holding the 32-byte master key (base64) that encrypts private keys at rest; default <data>/keys/master.key, created with mode 0600.' },
  { key: 'ca.cert', default: null, doc: 'PEM certificate of an existing CA to issue user certificates with (together with ca.key); by default lading creates its own CA in <data>/ca.' },
  { key: 'ca.key', default: null, doc: 'PEM private key (unencrypted, mode 0600) of the CA named by ca.cert.' },
  { key: 'ca.trust_dir', default: null, doc: 'Directory of trusted CA certificates (PEM files, as /etc/grid-security/certificates) the backend verifies proxies against; default <data>/ca.' },
  { key: 'ca.issuer', default: 'embedded', doc: 'Where user certificates come from: embedded (lading\'s CA, in process) or the URL of an online CA endpoint taking a CSR (such as lading\'s POST /ca/certificate).' },
  { key: 'ca.issuer_secret_file', default: null, doc: 'File holding the bearer credential for the online CA endpoint; with the embedded CA, the credential its POST /ca/certificate endpoint accepts (default <data>/keys/ca-issuer.secret, created with mode 0600).' },
  { key: 'ca.user_lifetime', default: 604800, doc: 'Lifetime of the end-entity user certificates the embedded CA issues, in seconds.' },
  { key: 'oidc.issuer', default: null, doc: 'Issuer URL of an external OpenID Connect provider (Keycloak realm, EGI Check-in, B2ACCESS), found by discovery; empty runs the embedded provider at <public_url>/oidc on the local accounts.' },
  { key: 'oidc.client_id', default: 'lading', doc: 'Client id of lading at the identity provider.' },
  { key: 'oidc.client_secret_file', default: null, doc: 'File holding the client secret at an external provider (first line). Not needed for the embedded provider.' },
  { key: 'oidc.client_secret', default: null, doc: 'The client secret itself, for deployments that pass secrets in the environment: set LADING_OIDC_CLIENT_SECRET, never a command-line flag. oidc.client_secret_file wins when both are set.' },
  { key: 'oidc.scopes', default: 'openid profile email', doc: 'Scopes lading requests at login (space-separated).' },
  { key: 'oidc.user_claim', default: 'preferred_username', doc: 'Claim naming the lading user; `sub` is used when the claim is absent. A value that is not a valid user name is refused, not rewritten.' },
  { key: 'oidc.audience', default: null, doc: 'Audience (`aud`) an access token must carry to be accepted directly as a bearer token; default the client id.' },
  { key: 'oidc.introspection', default: false, doc: 'Check access tokens presented as bearer tokens by token introspection at the provider instead of verifying them as JWTs against its JWKS.' },
  { key: 'oidc.max_failed_logins', default: 5, doc: 'Failed sign-ins allowed per account per 15 minutes at the embedded provider; an address gets four times as many. Further attempts get 429.' },
  { key: 'oidc.key_rotation', default: 30 * 86400, doc: 'Period, in seconds, after which the embedded provider signs with a new key; the previous key stays published for one more period.' },
  { key: 'catalog.driver', default: 'sqlite', doc: 'Catalog engine: sqlite (embedded, one node: <data>/catalog.sqlite) or postgres (shared by several nodes; needs catalog.url).' },
  { key: 'catalog.url', default: null, doc: 'PostgreSQL connection string, e.g. postgresql://lading@db.example.org/lading. One with a password belongs in catalog.url_file or LADING_CATALOG_URL, never on a command line.' },
  { key: 'catalog.url_file', default: null, doc: 'File holding the PostgreSQL connection string (first line); wins over catalog.url.' },
  { key: 'catalog.schema', default: 'public', doc: 'PostgreSQL schema holding the catalog\'s tables (created when missing), so one database can hold several deployments.' },
  { key: 'resource.driver', default: 'fs', doc: 'Where the bytes go: fs (a directory, local or a POSIX mount shared by all nodes) or s3 (an S3-compatible object store).' },
  { key: 'resource.path', default: null, doc: 'Directory of the fs resource; default <data>/resource. With several nodes, a shared mount with atomic renames (NFSv4, CephFS, GPFS, Lustre).' },
  { key: 'resource.s3.endpoint', default: null, doc: 'Base URL of the S3 store, e.g. https://s3.example.org (requests are path-style).' },
  { key: 'resource.s3.bucket', default: null, doc: 'Bucket holding the objects; it must exist.' },
  { key: 'resource.s3.region', default: 'us-east-1', doc: 'Region requests are signed for (us-east-1 for most stores that are not AWS).' },
  { key: 'resource.s3.prefix', default: '', doc: 'Prefix of every object key, e.g. lading/, so several deployments can share a bucket.' },
  { key: 'resource.s3.access_key_id', default: null, doc: 'S3 access key id.' },
  { key: 'resource.s3.secret_access_key_file', default: null, doc: 'File holding the S3 secret access key (first line); wins over resource.s3.secret_access_key.' },
  { key: 'resource.s3.secret_access_key', default: null, doc: 'The S3 secret access key itself, for deployments that pass secrets in the environment: set LADING_RESOURCE_S3_SECRET_ACCESS_KEY, never a command-line flag.' },
  { key: 'recovery.grace', default: 86400, doc: 'With the PostgreSQL catalog, the age in seconds after which an unfinished upload is taken as abandoned and removed at start-up (other nodes may still be writing younger ones). With SQLite every leftover is removed. Also how long replaced contents are kept for downloads still reading them where the store cannot delete them at once (S3).' },
  { key: 'pid.rules', default: null, doc: 'Rules file binding backend events to PID actions (see "PIDs" in the README); empty: no rules, every PID stays null.' },
  { key: 'pid.provider', default: 'embedded', doc: 'Where PIDs are registered: embedded (handle records in the catalog) or handle (a Handle.net server\'s REST API, pid.handle_url).' },
  { key: 'pid.prefix', default: '21.T99999', doc: 'Handle prefix of new PIDs; the suffix is the entity\'s UUID.' },
  { key: 'pid.handle_url', default: null, doc: 'Base URL of the Handle.net server (handle server v9 REST API), e.g. https://hdl.example.org:8000.' },
  { key: 'pid.handle_user', default: null, doc: 'Admin identity at the Handle server, e.g. 300:21.T12345/ADMIN.' },
  { key: 'pid.handle_password_file', default: null, doc: 'File holding that admin\'s password (first line); or LADING_PID_HANDLE_PASSWORD.' },
  { key: 'pid.handle_password', default: null, doc: 'The Handle admin password itself, from the environment (LADING_PID_HANDLE_PASSWORD), never a command-line flag.' },
  { key: 'pid.await_timeout', default: 10, doc: 'Longest wait, in seconds, of an upload with pid_await=true for its PID (the spec\'s 10 s).' },
  { key: 'jobs.lease', default: 60, doc: 'Seconds a node holds a claimed job (PID registration) before other nodes may take it over; a job of a node that died runs again after this.' },
] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function envName(key: string): string {
  return 'LADING_' + key.replace(/\./g, '_').toUpperCase();
}

function coerce(key: string, value: unknown, def: unknown, source: string): unknown {
  if (value === undefined) return def;
  if (typeof def === 'number') {
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${source}: '${key}' must be a non-negative number, got ${JSON.stringify(value)}.`);
    return n;
  }
  if (typeof def === 'boolean') {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(`${source}: '${key}' must be true or false, got ${JSON.stringify(value)}.`);
  }
  if (value === null || value === '') return def === null ? null : def;
  if (typeof value !== 'string') throw new ConfigError(`${source}: '${key}' must be a string.`);
  return value;
}

function lookup(obj: Record<string, unknown>, key: string): unknown {
  let cur: unknown = obj;
  for (const part of key.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function assign(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) cur = (cur[part] ??= {}) as Record<string, unknown>;
  cur[parts.at(-1)!] = value;
}

/**
 * Resolves the configuration. `fileText` is the content of the `--config` file (JSON), `env`
 * the process environment, `flags` the command-line overrides. Unknown keys in the file and
 * malformed values throw `ConfigError` naming the key.
 */
export function loadConfig(input: { env: Record<string, string | undefined>; fileText?: string; fileName?: string; flags?: Partial<Record<string, unknown>> }): Config {
  let file: Record<string, unknown> = {};
  if (input.fileText !== undefined) {
    try {
      file = JSON.parse(input.fileText) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`${input.fileName ?? 'config'}: not valid JSON (${(err as Error).message}).`);
    }
    const known = new Set<string>(CONFIG_KEYS.map((k) => k.key));
    const walk = (o: Record<string, unknown>, prefix: string): void => {
      for (const [k, v] of Object.entries(o)) {
        const key = prefix + k;
        if (v && typeof v === 'object' && !Array.isArray(v) && !known.has(key)) walk(v as Record<string, unknown>, key + '.');
        else if (!known.has(key)) throw new ConfigError(`${input.fileName ?? 'config'}: unknown key '${key}'.`);
      }
    };
    walk(file, '');
  }
  const out: Record<string, unknown> = {};
  for (const { key, default: def } of CONFIG_KEYS) {
    let value = coerce(key, lookup(file, key), def, input.fileName ?? 'config');
    const env = input.env[envName(key)];
    if (env !== undefined) value = coerce(key, env, value, envName(key));
    const flag = input.flags?.[key];
    if (flag !== undefined) value = coerce(key, flag, value, `--${key}`);
    assign(out, key, value);
  }
  const config = out as unknown as Config;
  parseListen(config.listen);
  // NOTE: a lease shorter than a job's run would hand running jobs to other workers at once.
  if (config.jobs.lease < 1) throw new ConfigError(`jobs.lease: must be at least 1 second, got ${config.jobs.lease}.`);
  checkDrivers(config);
  if (config.public_url !== null) config.public_url = config.public_url.replace(/\/+$/, '');
  return config;
}

/** Splits `host:port` (IPv6 in brackets). `ConfigError` when malformed. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new ConfigError(`listen: expected host:port, got '${listen}'.`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** Rejects unknown driver names and a driver without what it needs, naming the key. */
function checkDrivers(config: Config): void {
  if (config.catalog.driver !== 'sqlite' && config.catalog.driver !== 'postgres') {
    throw new ConfigError(`catalog.driver: expected sqlite or postgres, got '${String(config.catalog.driver)}'.`);
  }
  if (config.catalog.driver === 'postgres' && !config.catalog.url && !config.catalog.url_file) {
    throw new ConfigError('catalog.driver is postgres: set catalog.url_file or LADING_CATALOG_URL to the PostgreSQL connection string.');
  }
  if (config.resource.driver !== 'fs' && config.resource.driver !== 's3') {
    throw new ConfigError(`resource.driver: expected fs or s3, got '${String(config.resource.driver)}'.`);
  }
  if (config.resource.driver === 's3') {
    const s3 = config.resource.s3;
    const missing = [
      ['resource.s3.endpoint', s3.endpoint], ['resource.s3.bucket', s3.bucket], ['resource.s3.access_key_id', s3.access_key_id],
      ['resource.s3.secret_access_key_file or LADING_RESOURCE_S3_SECRET_ACCESS_KEY', s3.secret_access_key_file ?? s3.secret_access_key],
    ].filter(([, v]) => !v).map(([k]) => k);
    if (missing.length > 0) throw new ConfigError(`resource.driver is s3: set ${missing.join(', ')}.`);
  }
}
