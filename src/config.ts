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
  resource: { fsync: boolean };
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
