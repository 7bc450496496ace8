/**
 * Configuration: one schema of every key (type, default, meaning), resolved from defaults, then
 * an optional JSON file (`--config`), then `LADING_…` environment variables, then command-line
 * flags. The only module that knows the keys; it reads nothing by itself — callers pass the
 * environment and the file's text in — and only the composition root (`src/wiring/`) imports it.
 */
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { KindGuard, Type } from '../http/typebox.ts';
import type { Static, TLiteral, TSchema, TUnion } from '@sinclair/typebox';
import type { Value as ValueModule } from '@sinclair/typebox/value';
import { type Path, parsePath } from '../core/path.ts';
import { OperatorError } from './operator-error.ts';

/** A configuration mistake (exit code 2); its message names the key (and the file or variable) and never a secret. */
export class ConfigError extends OperatorError {
  override name = 'ConfigError';
  override readonly exitCode = 2;
}

// Leaf constructors: each takes its default typed as the value, so a default of the wrong type
// is a compile error, and carries the meaning the configuration reference (docs/operators.md) shows.
const text = (def: string, doc: string) => Type.String({ default: def, description: doc });
const optionalText = (doc: string) => Type.Union([Type.String(), Type.Null()], { default: null, description: doc });
const amount = (def: number, doc: string) => Type.Number({ minimum: 0, default: def, description: doc });
const flag = (def: boolean, doc: string) => Type.Boolean({ default: def, description: doc });
function choice<const T extends string>(values: readonly [T, ...T[]], def: NoInfer<T>, doc: string): TUnion<TLiteral<T>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)), { default: def, description: doc });
}

/** The largest `resource.inline_max`: a body is held in memory up to that size while it is told apart. */
const INLINE_MAX = 1024 * 1024;

/** Every key with its type, default and meaning. Adding a key is one edit here (and its row in docs/operators.md). */
export const CONFIG_SCHEMA = Type.Object({
  listen: text('127.0.0.1:8080', 'Address and port to listen on (host:port).'),
  data: text('./lading-data', 'Directory holding the catalog, the stored bytes and the keys.'),
  zone: text('lading', 'Zone name: the first segment of every path (/<zone>/home/<user>).'),
  public_url: optionalText('Base URL of links, e.g. https://staging.example.org: `link` fields, PID records and the embedded login issuer. Unset, answers\' links follow each request\'s (checked) Host header, and PID records and the issuer name the address lading listens on.'),
  backend_url: text(`lading://${hostname()}`, 'Scheme and host used in `location` fields.'),
  trust_proxy: flag(false, 'Trust X-Forwarded-For/-Proto/-Host from a reverse proxy.'),
  compress: flag(true, 'Compress text answers (JSON, HTML, JavaScript, CSS, XML) of 1 KiB or more when the client\'s Accept-Encoding asks for it: gzip at level 1 (Brotli at quality 1 for a client that takes only Brotli), and the web app\'s script and style with Brotli\'s best, once; listings are compressed as they stream. The bytes of data objects and archives are never compressed. false sends every answer as it is (for a reverse proxy that compresses).'),
  log: Type.Object({
    level: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', 'pino log level: fatal, error, warn, info, debug, trace or silent.'),
    format: choice(['auto', 'json', 'pretty'], 'auto', 'Log lines as JSON (one object a line, for log collectors) or pretty (readable lines, local times); auto: pretty when standard output is a terminal, else JSON.'),
  }),
  limits: Type.Object({
    upload_bytes: amount(1024 ** 4, 'Largest accepted upload, in bytes (larger ones get 413).'),
    copy_bytes: amount(1024 ** 4, 'Most bytes one copy (POST /api/registered/… with copy_to) may copy, all its data objects together; a larger copy is refused with 413 before it starts.'),
    copy_entries: amount(100_000, 'Most collections and data objects one copy of a collection may create; a larger copy is refused with 413 before it starts.'),
    body_idle_timeout: amount(60, 'Seconds a request body may send nothing before the request is dropped (408) and its temporary data removed; no limit on how long a moving transfer takes.'),
  }),
  auth: Type.Object({
    token_ttl: amount(86400, 'Lifetime of a bearer token, in seconds.'),
    token_ttl_max: amount(7_776_000, 'Longest lifetime, in seconds, a user may choose for an API token they make (POST /auth/tokens with lifetime, the web app\'s API access page); at least auth.token_ttl. Default 90 days.'),
  }),
  web: Type.Object({
    session_idle: amount(7200, 'Seconds a browser session (signed in at /auth/signin) lasts without a request; at least 60. Use is recorded to the minute.'),
    session_max: amount(43200, 'Seconds a browser session lasts at most after sign-in, however busy; at least web.session_idle.'),
  }),
  proxy: Type.Object({
    lifetime: amount(43200, 'Lifetime of the RFC 3820 proxy certificate the backend sees, in seconds (spec: typically 12 h).'),
  }),
  credentials: Type.Object({
    key_file: optionalText('File holding the 32-byte master key (base64) that encrypts private keys at rest; default <data>/keys/master.key, created with mode 0600.'),
  }),
  ca: Type.Object({
    cert: optionalText('PEM certificate of an existing CA to issue user certificates with (together with ca.key); by default lading creates its own CA in the catalog, shared by every node.'),
    key: optionalText('PEM private key (unencrypted, mode 0600) of the CA named by ca.cert.'),
    trust_dir: optionalText('Directory of trusted CA certificates (PEM files, as /etc/grid-security/certificates) the backend verifies proxies against, besides lading\'s own CAs in the catalog; with ca.cert, default <data>/ca.'),
    issuer: text('embedded', 'Where user certificates come from: embedded (lading\'s CA, in process) or the URL of an online CA endpoint taking a CSR (such as lading\'s POST /ca/certificate).'),
    issuer_secret_file: optionalText('File holding the bearer credential for the online CA endpoint; with the embedded CA, the credential its POST /ca/certificate endpoint accepts (default <data>/keys/ca-issuer.secret, created with mode 0600 from the master key, so nodes sharing it accept the same credential).'),
    user_lifetime: amount(604800, 'Lifetime of the end-entity user certificates the embedded CA issues, in seconds.'),
    refresh: amount(60, 'Seconds between a node\'s reads of the CAs in the catalog: after lading ca rotate, each node signs with the new CA within this time (it verifies certificates of the new CA at once).'),
  }),
  oidc: Type.Object({
    issuer: optionalText('Issuer URL of an external OpenID Connect provider (Keycloak realm, EGI Check-in, B2ACCESS), found by discovery; empty runs the embedded provider at <public_url>/oidc on the local accounts.'),
    client_id: text('lading', 'Client id of lading at the identity provider.'),
    client_secret_file: optionalText('File holding the client secret at an external provider (first line). Not needed for the embedded provider.'),
    client_secret: optionalText('The client secret itself, for deployments that pass secrets in the environment: set LADING_OIDC_CLIENT_SECRET, never a command-line flag. oidc.client_secret_file wins when both are set.'),
    scopes: text('openid profile email', 'Scopes lading requests at login (space-separated).'),
    user_claim: text('preferred_username', 'Claim naming the lading user; `sub` is used when the claim is absent. A value that is not a valid user name is refused, not rewritten.'),
    audience: optionalText('Audience (`aud`) an access token must carry to be accepted directly as a bearer token; default the client id.'),
    introspection: flag(false, 'Check access tokens presented as bearer tokens by token introspection at the provider instead of verifying them as JWTs against its JWKS.'),
    max_failed_logins: amount(5, 'Failed password logins allowed per 15 minutes for one account from one client address, counted together for POST /auth/login, /auth/b2safeproxy and the embedded provider\'s sign-in page; the account from every address together gets four times as many, and one address over every account twenty times as many. Further attempts get 429, with the right password too.'),
    cli_client_id: text('lading-cli', 'Client id of the `lading` command line at the identity provider: a public client (no secret) allowed the device authorization grant (RFC 8628) and refresh tokens. The embedded provider registers it itself; at an external provider, register it there. Published at GET /auth/clients/cli.'),
    cli_scopes: text('openid profile offline_access', 'Scopes the command line requests at the identity provider (space-separated); offline_access asks for a refresh token, so a login can be renewed without the browser.'),
    key_rotation: amount(30 * 86400, 'Period, in seconds, after which the embedded provider signs with a new key; the previous key stays published for one more period.'),
  }),
  catalog: Type.Object({
    driver: choice(['sqlite', 'postgres'], 'sqlite', 'Catalog engine: sqlite (embedded, one node: <data>/catalog.sqlite) or postgres (shared by several nodes; needs catalog.url).'),
    url: optionalText('PostgreSQL connection string, e.g. postgresql://lading@db.example.org/lading. One with a password belongs in catalog.url_file or LADING_CATALOG_URL, never on a command line.'),
    url_file: optionalText('File holding the PostgreSQL connection string (first line); wins over catalog.url.'),
    schema: text('public', 'PostgreSQL schema holding the catalog\'s tables (created when missing), so one database can hold several deployments.'),
  }),
  resource: Type.Object({
    fsync: flag(true, 'Flush every upload\'s bytes, and its name in the directory, to disk before it becomes visible. (The SQLite catalog always answers a change only once it is on disk, sharing one flush among concurrent requests.)'),
    inline_max: amount(65536, 'With the SQLite catalog, objects of at most this many bytes are stored in the catalog\'s database instead of the resource: a small upload then shares the catalog\'s log flush instead of flushing a file and its directory. 0 stores every object in the resource; at most 1048576 (a body is held in memory up to this size until its end shows it is small). Ignored with the PostgreSQL catalog.'),
    driver: choice(['fs', 's3'], 'fs', 'Where the bytes go: fs (a directory, local or a POSIX mount shared by all nodes) or s3 (an S3-compatible object store).'),
    path: optionalText('Directory of the fs resource; default <data>/resource. With several nodes, a shared mount with atomic renames (NFSv4, CephFS, GPFS, Lustre).'),
    s3: Type.Object({
      endpoint: optionalText('Base URL of the S3 store, e.g. https://s3.example.org (requests are path-style).'),
      bucket: optionalText('Bucket holding the objects; it must exist.'),
      region: text('us-east-1', 'Region requests are signed for (us-east-1 for most stores that are not AWS).'),
      prefix: text('', 'Prefix of every object key, e.g. lading/, so several deployments can share a bucket.'),
      payload_signing: choice(['auto', 'always', 'never'], 'auto', 'Whether each request to the store signs a SHA-256 of its body: auto signs over http only (over https TLS already guards the bytes), always, or never (a store on a network you trust). Signing costs one more pass of SHA-256 over every byte uploaded.'),
      access_key_id: optionalText('S3 access key id.'),
      secret_access_key_file: optionalText('File holding the S3 secret access key (first line); wins over resource.s3.secret_access_key.'),
      secret_access_key: optionalText('The S3 secret access key itself, for deployments that pass secrets in the environment: set LADING_RESOURCE_S3_SECRET_ACCESS_KEY, never a command-line flag.'),
    }),
  }),
  recovery: Type.Object({
    grace: amount(86400, 'How long, in seconds, replaced contents are kept for downloads still reading them where the store cannot delete them at once (S3), and, with the PostgreSQL catalog, the age after which leftovers no node owns are removed. An unfinished upload of a node is removed only once that node has stopped beating (recovery.heartbeat); with SQLite every leftover is removed at start.'),
    heartbeat: amount(10, 'Seconds between a node\'s heartbeats in the catalog; a node silent for six of them counts as dead, and only then are its unfinished uploads removed (by the sweeper, or by another node sharing the catalog).'),
  }),
  pid: Type.Object({
    rules: optionalText('Rules file binding backend events to PID actions (see "PIDs" in docs/researchers.md); empty: no rules, every PID stays null.'),
    provider: choice(['embedded', 'handle'], 'embedded', 'Where PIDs are registered: embedded (handle records in the catalog) or handle (a Handle.net server\'s REST API, pid.handle_url).'),
    prefix: text('21.T99999', 'Handle prefix of new PIDs; the suffix is the entity\'s UUID.'),
    handle_url: optionalText('Base URL of the Handle.net server (handle server v9 REST API), e.g. https://hdl.example.org:8000.'),
    handle_user: optionalText('Admin identity at the Handle server, e.g. 300:21.T12345/ADMIN.'),
    handle_password_file: optionalText('File holding that admin\'s password (first line); or LADING_PID_HANDLE_PASSWORD.'),
    handle_password: optionalText('The Handle admin password itself, from the environment (LADING_PID_HANDLE_PASSWORD), never a command-line flag.'),
    await_timeout: amount(10, 'Longest wait, in seconds, of an upload with pid_await=true for its PID (the spec\'s 10 s).'),
  }),
  uploads: Type.Object({
    max_open: amount(50, 'Unfinished uploads a user may have at once: resumable uploads (/api/uploads) and S3 multipart uploads together, each counting once whatever its parts; one more is refused with 429 (S3: SlowDown) until one finishes, is terminated or expires.'),
    expiry: amount(7 * 86400, 'Seconds an unfinished resumable upload is kept after its last activity before its bytes are removed (a finished one\'s record, after it finished).'),
    checkpoint_bytes: amount(16 * 1024 * 1024, 'Bytes of a resumable upload request between two checkpoints (flushed and recorded, so acknowledged); a crash loses at most this much of a request in flight. On S3 a checkpoint falls on a completed part.'),
    lease: amount(60, 'Seconds a request appending to a resumable upload holds it without renewing (it renews while bytes flow); another request may take over an upload whose holder died only after this.'),
  }),
  jobs: Type.Object({
    lease: amount(60, 'Seconds a node holds a claimed job (PID registration) before other nodes may take it over; a job of a node that died runs again after this.'),
    retention: amount(604800, 'Seconds a done job stays listed by `lading jobs --state done` before the periodic sweep (on any node) removes it; pending, running and failed jobs stay. 0 keeps every job. Default 7 days.'),
  }),
  shares: Type.Object({
    max_active_per_user: amount(200, 'Share links one user may hold that are neither expired nor used up; creating one more gets 429 (0: nobody may create links, 403).'),
    request_window: amount(60, 'Length, in seconds, of the fixed window in which requests to share links are counted (shares.requests_per_link, shares.requests_per_address), by every node together.'),
    requests_per_link: amount(12000, 'Requests one share link may receive per window, from all addresses together (downloads, ranges, listings, uploads); further ones get 429. A genome viewer reading by ranges sends a few hundred a minute.'),
    requests_per_address: amount(3000, 'Requests one client address may send to /api/shared per window, to any link or to unknown tokens; further ones get 429.'),
    max_failed_passwords: amount(10, 'Wrong passwords a password-protected share link accepts from one client address per shares.password_window; further attempts from that address get 429, with the right password too. From every address together the link accepts five times as many before refusing everyone.'),
    password_window: amount(900, 'Length, in seconds, of the window in which wrong share-link passwords are counted.'),
    drop_max_bytes: amount(10 * 1024 ** 3, 'Bytes a drop box (an upload share link) takes in all, every file together, unless its creator gives max_bytes; a deposit that would pass its bound gets 413 and stores nothing. Also the bound of drop boxes made before links had one. At least 1.'),
    expired_retention: amount(2592000, 'Seconds an expired share link is kept, answering 410 Gone and listed to its creator as expired, before it is removed (then its token answers 404, as one that never existed). Removal runs every 10 minutes.'),
  }),
  archives: Type.Object({
    max_entries: amount(200000, 'Files and collections one archive of a collection (download=zip or download=bag) may hold; a larger collection is refused with 413 before anything is sent. The node holds about 200 bytes a member while it writes an archive (its ZIP directory and, for a bag, its manifest lines).'),
    concurrent_per_user: amount(2, 'Archives of collections (download=zip or download=bag) one user, or one client address for share links and published data, may download at once from one node; one more gets 429 with Retry-After.'),
  }),
  audit: Type.Object({
    retention: amount(31536000, 'Seconds an audit record is kept before the periodic sweep (on any node) removes it; the oldest record kept anchors the hash chain `lading audit verify` checks. 0 keeps every record. Default 365 days.'),
  }),
  trash: Type.Object({
    retention: amount(2592000, 'Seconds a trashed data object or collection keeps its bytes before the periodic sweep (on any node) purges them; its PID keeps resolving to a tombstone. Default 30 days.'),
  }),
  fixity: Type.Object({
    rate: amount(50 * 1024 * 1024, 'Bytes a second the background fixity audit reads at most on each node, checking stored objects against their checksums (default 50 MiB/s); 0 turns the audit off on that node. The catalog gives each object to one node at a time.'),
    interval: amount(30 * 86400, 'Seconds after its last check (or its upload) an object is checked again by the background audit (default 30 days). Every object is checked once per interval as long as fixity.rate times the interval, over all nodes, covers the stored bytes.'),
  }),
  s3: Type.Object({
    listen: optionalText('Address and port (host:port) of the S3-compatible listener (path-style: http://host:port/<user>/<key>, signed with keys from `lading s3 key create`); unset, no S3 listener runs.'),
    public_url: optionalText('Base URL S3 clients are told to use (the web app\'s API access page shows it), e.g. https://s3.example.org behind a reverse proxy; unset, http:// with the host name the browser used and the S3 listener\'s port.'),
    region: text('us-east-1', 'Region S3 clients sign their requests for, and GetBucketLocation answers.'),
    buckets: optionalText('Further buckets, each a name bound to a collection: name=/zone/path, several separated by commas (e.g. genomes=/lading/projects/genomes,raw=/lading/instruments/raw). A named bucket wins over a user\'s home of the same name; the collection\'s access rules apply, and ListBuckets lists those the caller may read.'),
    domain: optionalText('Base domain of virtual-hosted-style addressing, e.g. s3.example.org: a request to Host alice.s3.example.org names the bucket alice (point a wildcard DNS name *.s3.example.org at the listener). Path-style requests keep working; unset, every request is path-style.'),
  }),
  metrics: Type.Object({
    listen: optionalText('Address and port (host:port) of a listener of its own serving Prometheus metrics at /metrics and readiness at /ready, never on the public port; unset: no metrics are kept. It takes no credential: bind it to an address only the monitoring network reaches, e.g. 127.0.0.1:9464.'),
  }),
  shutdown: Type.Object({
    grace: amount(30, 'Seconds `lading serve` lets requests in flight finish after SIGTERM or SIGINT before it cuts them off (a cut-off upload never becomes visible); a second signal cuts them off at once.'),
  }),
}, { additionalProperties: false });

/** The resolved configuration, computed from the schema. */
export type Config = Static<typeof CONFIG_SCHEMA>;

/** The dotted names of the configuration's keys (`listen`, `pid.rules`, `resource.s3.bucket`, …). */
export type ConfigKey = DottedKeys<Config>;
type DottedKeys<T, P extends string = ''> = {
  [K in keyof T & string]: T[K] extends string | number | boolean | null ? `${P}${K}` : DottedKeys<T[K], `${P}${K}.`>;
}[keyof T & string];

export interface ConfigKeyInfo {
  key: ConfigKey;
  /** `LADING_<KEY>`. */
  env: string;
  default: string | number | boolean | null;
  doc: string;
  schema: TSchema;
}

export function envName(key: string): string {
  return 'LADING_' + key.replace(/\./g, '_').toUpperCase();
}

function leaves(schema: TSchema, prefix: string): ConfigKeyInfo[] {
  return Object.entries(KindGuard.IsObject(schema) ? schema.properties : {}).flatMap(([name, s]) => {
    const key = prefix + name;
    if (KindGuard.IsObject(s)) return leaves(s, key + '.');
    return [{ key: key as ConfigKey, env: envName(key), default: s.default as ConfigKeyInfo['default'], doc: String(s.description), schema: s }];
  });
}

/** Every key with its variable, default and meaning, in schema order; the configuration reference in docs/operators.md lists them. */
export const CONFIG_KEYS: readonly ConfigKeyInfo[] = leaves(CONFIG_SCHEMA, '');

/** The values a key of this schema may take, when it is a choice (`catalog.driver`, …). */
function choicesOf(schema: TSchema): string[] | null {
  if (!KindGuard.IsUnion(schema) || !schema.anyOf.every((s) => KindGuard.IsLiteral(s))) return null;
  return schema.anyOf.map((s) => String(s.const));
}

/**
 * Turns a value from the file, the environment or a flag into the key's type. `current` is the
 * value so far, kept when `value` is absent, or empty for a text key. `ConfigError` naming the
 * key and `source` when the value does not fit.
 */
function coerce(info: ConfigKeyInfo, value: unknown, current: unknown, source: string): unknown {
  const { key, schema } = info;
  if (value === undefined) return current;
  if (KindGuard.IsNumber(schema)) {
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${source}: '${key}' must be a non-negative number, got ${JSON.stringify(value)}.`);
    return n;
  }
  if (KindGuard.IsBoolean(schema)) {
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(`${source}: '${key}' must be true or false, got ${JSON.stringify(value)}.`);
  }
  if (value === null || value === '') return current;
  if (typeof value !== 'string') throw new ConfigError(`${source}: '${key}' must be a string.`);
  const choices = choicesOf(schema);
  if (choices && !choices.includes(value)) {
    throw new ConfigError(`${source}: ${key}: expected ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}, got '${value}'.`);
  }
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

export interface ConfigSources {
  /** The process environment; only `LADING_…` variables are read. */
  env: Record<string, string | undefined>;
  /** The text of the `--config` file (JSON). */
  fileText?: string;
  /** Its name, for messages. */
  fileName?: string;
  /** Command-line overrides by dotted key (`data`, `listen`, `log.level`, …). */
  flags?: Partial<Record<ConfigKey, unknown>>;
}

/**
 * Resolves the configuration. Throws `ConfigError` naming the key for unknown keys (in the file
 * or among the flags), malformed values, an unknown driver and a driver without what it needs.
 */
export function loadConfig(input: ConfigSources): Config {
  const fileName = input.fileName ?? 'config';
  const known = new Set<string>(CONFIG_KEYS.map((k) => k.key));
  let file: Record<string, unknown> = {};
  if (input.fileText !== undefined) {
    try {
      file = JSON.parse(input.fileText) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`${fileName}: not valid JSON (${(err as Error).message}).`);
    }
    const walk = (o: Record<string, unknown>, prefix: string): void => {
      for (const [k, v] of Object.entries(o)) {
        const key = prefix + k;
        if (v && typeof v === 'object' && !Array.isArray(v) && !known.has(key)) walk(v as Record<string, unknown>, key + '.');
        else if (!known.has(key)) throw new ConfigError(`${fileName}: unknown key '${key}'.`);
      }
    };
    walk(file, '');
  }
  for (const key of Object.keys(input.flags ?? {})) {
    if (!known.has(key)) throw new ConfigError(`--${key}: unknown key '${key}'.`);
  }
  const out: Record<string, unknown> = {};
  for (const info of CONFIG_KEYS) {
    let value = coerce(info, lookup(file, info.key), info.default, fileName);
    value = coerce(info, input.env[info.env], value, info.env);
    value = coerce(info, input.flags?.[info.key], value, `--${info.key}`);
    assign(out, info.key, value);
  }
  // NOTE: coercion already gave every key its type; the check makes that a proven `Config`.
  if (!isConfig(out)) {
    // NOTE: TypeBox's own checker (some 50 modules, hence not loaded to say yes) says what is wrong.
    const { Value } = createRequire(import.meta.url)('@sinclair/typebox/value') as { Value: typeof ValueModule };
    const first = Value.Errors(CONFIG_SCHEMA, out).First();
    throw new ConfigError(`${first?.path.slice(1).replace(/\//g, '.') ?? 'config'}: ${first?.message ?? 'invalid'}.`);
  }
  checkRules(out);
  if (out.public_url !== null) out.public_url = out.public_url.replace(/\/+$/, '');
  return out;
}

/** Whether `value` is a whole configuration: `Value.Check(CONFIG_SCHEMA, value)` of TypeBox, without loading its checker. */
export function isConfig(value: unknown): value is Config {
  return conforms(CONFIG_SCHEMA, value);
}

/**
 * Whether `value` is what `schema` describes, as TypeBox's `Value.Check` decides it, for the
 * kinds of schema the configuration is made of (a key of another kind throws, so that adding
 * one cannot go unchecked).
 */
function conforms<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  if (KindGuard.IsObject(schema)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    const keys = Object.getOwnPropertyNames(schema.properties);
    if (!keys.every((key) => key in record && conforms(schema.properties[key]!, record[key]))) return false;
    return schema.additionalProperties !== false || Object.getOwnPropertyNames(record).every((key) => keys.includes(key));
  }
  if (KindGuard.IsUnion(schema)) return schema.anyOf.some((s) => conforms(s, value));
  if (KindGuard.IsLiteral(schema)) return value === schema.const;
  if (KindGuard.IsString(schema)) return typeof value === 'string';
  if (KindGuard.IsNumber(schema)) return Number.isFinite(value) && (schema.minimum === undefined || (value as number) >= schema.minimum);
  if (KindGuard.IsBoolean(schema)) return typeof value === 'boolean';
  if (KindGuard.IsNull(schema)) return value === null;
  throw new Error(`config: no check for a key of kind ${String(schema[Symbol.for('TypeBox.Kind') as never])}`);
}

/** Splits `host:port` (IPv6 in brackets). `ConfigError` naming `key` when malformed or the port is over 65535. */
export function parseListen(listen: string, key = 'listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new ConfigError(`${key}: expected host:port, got '${listen}'.`);
  const port = Number(m[3]);
  if (port > 65535) throw new ConfigError(`${key}: port ${m[3]} is out of range (0 to 65535) in '${listen}'.`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** Edit distance between two strings (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known key an unknown `LADING_…` variable most likely meant: the one whose variable is
 * nearest by spelling (at most a third of the name wrong), else the one sharing most words
 * with it (`LADING_DATA_DIR` → `data`), else the first whose meaning mentions one of its words
 * (`LADING_PORT` → `listen`, "Address and port …"). Null when nothing is close.
 */
function nearestKey(variable: string): ConfigKeyInfo | null {
  const name = variable.slice('LADING_'.length).toLowerCase();
  const keys = CONFIG_KEYS.map((info) => ({ info, name: info.env.slice('LADING_'.length).toLowerCase() }));
  const spelt = keys.map((k) => ({ ...k, d: distance(name, k.name) })).sort((a, b) => a.d - b.d)[0];
  if (spelt && spelt.d <= Math.max(1, Math.floor(name.length / 3))) return spelt.info;
  const words = name.split('_').filter((w) => w.length >= 3);
  const shared = keys.map((k) => ({ ...k, n: words.filter((w) => k.name.split('_').includes(w)).length })).sort((a, b) => b.n - a.n)[0];
  if (shared && shared.n > 0) return shared.info;
  return CONFIG_KEYS.find((info) => words.some((w) => new RegExp(`\\b${w}\\b`, 'i').test(info.doc))) ?? null;
}

/**
 * One warning for each `LADING_…` variable of `env` that is no configuration key's, naming
 * the nearest known one: a misspelt variable is otherwise ignored without a word.
 * `LADING_TEST_…` and `LADING_CI_…` variables belong to the test suite and CI (`.ci/`), which
 * name their services with them, never to lading.
 */
export function unknownVariables(env: Record<string, string | undefined>): string[] {
  const known = new Set(CONFIG_KEYS.map((k) => k.env));
  return Object.keys(env)
    .filter((v) => v.startsWith('LADING_') && !/^LADING_(TEST|CI)_/.test(v) && !known.has(v))
    .sort()
    .map((v) => {
      const near = nearestKey(v);
      return `${v} is not a configuration variable and is ignored${near ? `; did you mean ${near.env} (${near.key})?` : '.'}`;
    });
}

/** A bucket name S3 clients accept in a Host and a path: 3–63 lower-case letters, digits, dots and hyphens. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * The buckets `s3.buckets` binds to collections, by name. `ConfigError` naming the entry for a
 * malformed one, a bad name or path, a path outside the zone, or a name given twice.
 */
export function s3Buckets(config: Config): Map<string, Path> {
  const out = new Map<string, Path>();
  const text = config.s3.buckets;
  if (text === null) return out;
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const at = entry.indexOf('=');
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    const raw = at < 0 ? '' : entry.slice(at + 1).trim();
    if (at < 0 || !BUCKET_NAME.test(name)) {
      throw new ConfigError(`s3.buckets: '${entry}' is not name=/${config.zone}/path with a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens.`);
    }
    let path: Path;
    try {
      path = parsePath(raw);
    } catch {
      throw new ConfigError(`s3.buckets: '${raw}' (bucket ${name}) is not a valid path.`);
    }
    if (!path.startsWith(`/${config.zone}/`)) throw new ConfigError(`s3.buckets: '${raw}' (bucket ${name}) is not below the zone /${config.zone}.`);
    if (out.has(name)) throw new ConfigError(`s3.buckets: the bucket ${name} is named twice.`);
    out.set(name, path);
  }
  return out;
}

/**
 * The rules between keys and within a value that the types do not say: a usable listen
 * address, a lease of at least a second, and the settings each catalog and resource driver
 * needs (all the missing ones named at once). Driver options are validated again, by each
 * driver, when it is created.
 */
function checkRules(config: Config): void {
  parseListen(config.listen);
  if (config.s3.listen !== null) parseListen(config.s3.listen, 's3.listen');
  s3Buckets(config);
  if (config.s3.public_url !== null && !/^https?:\/\/[^/?#\s]+\/?$/.test(config.s3.public_url)) {
    throw new ConfigError(`s3.public_url: must be an http(s) URL with no path, such as https://s3.example.org, got '${config.s3.public_url}'.`);
  }
  if (config.s3.domain !== null && !/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(config.s3.domain)) {
    throw new ConfigError(`s3.domain: must be a lower-case DNS name such as s3.example.org (no scheme, port or trailing dot), got '${config.s3.domain}'.`);
  }
  if (config.metrics.listen !== null) parseListen(config.metrics.listen, 'metrics.listen');
  // NOTE: a lease shorter than a job's run would hand running jobs to other workers at once.
  if (config.jobs.lease < 1) throw new ConfigError(`jobs.lease: must be at least 1 second, got ${config.jobs.lease}.`);
  if (!(Number.isSafeInteger(config.shares.drop_max_bytes) && config.shares.drop_max_bytes >= 1)) {
    throw new ConfigError(`shares.drop_max_bytes: must be a whole number of bytes, at least 1, got ${config.shares.drop_max_bytes}.`);
  }
  for (const key of ['request_window', 'password_window'] as const) {
    if (config.shares[key] < 1) throw new ConfigError(`shares.${key}: must be at least 1 second, got ${config.shares[key]}.`);
  }
  // NOTE: use is recorded at most once a minute per session, so a shorter idle timeout would
  // end sessions that are in use.
  if (config.auth.token_ttl_max < config.auth.token_ttl) {
    throw new ConfigError(`auth.token_ttl_max: must be at least auth.token_ttl (${config.auth.token_ttl}), got ${config.auth.token_ttl_max}.`);
  }
  if (config.web.session_idle < 60) throw new ConfigError(`web.session_idle: must be at least 60 seconds, got ${config.web.session_idle}.`);
  if (config.web.session_max < config.web.session_idle) {
    throw new ConfigError(`web.session_max: must be at least web.session_idle (${config.web.session_idle}), got ${config.web.session_max}.`);
  }
  const inline = config.resource.inline_max;
  if (!Number.isInteger(inline) || inline > INLINE_MAX) {
    throw new ConfigError(`resource.inline_max: must be a whole number of bytes from 0 to ${INLINE_MAX}, got ${inline}.`);
  }
  if (config.recovery.heartbeat < 1) throw new ConfigError(`recovery.heartbeat: must be at least 1 second, got ${config.recovery.heartbeat}.`);
  if (config.catalog.driver === 'postgres' && !config.catalog.url && !config.catalog.url_file) {
    throw new ConfigError('catalog.driver is postgres: set catalog.url_file or LADING_CATALOG_URL to the PostgreSQL connection string.');
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
