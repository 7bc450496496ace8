/**
 * The servers the client remembers, in `$XDG_CONFIG_HOME/lading/config.json` (else
 * `~/.config/lading/config.json`): written atomically with mode 0600 in a directory of mode
 * 0700, since it holds tokens. And which server and token a command uses: `--server`, else
 * LADING_URL/LADING_TOKEN from the environment (batch jobs), else the default server.
 */
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ServerTarget } from './api.ts';
import { ClientError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { refreshLogin } from './device.ts';

/** One remembered server. */
export interface ServerEntry {
  /** Base URL, no trailing slash. */
  url: string;
  /** lading bearer token. */
  token: string;
  /** The identity provider's refresh token (device login), used to get a new lading token. */
  refreshToken?: string;
  /** When `token` stops working (ISO 8601), when known. */
  expiresAt?: string;
  /** The user the token belongs to. */
  user: string;
  /** That user's home collection. */
  home?: string;
}

export interface ClientConfig {
  /** Name of the server used when none is given. */
  default?: string;
  servers: Record<string, ServerEntry>;
}

/** A refresh is attempted this long before the token expires. */
const REFRESH_AHEAD_MS = 5 * 60_000;

/** Where the configuration file is. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'lading', 'config.json');
}

/** The configuration; empty when the file does not exist. `ClientError` when it cannot be read. */
export async function loadConfig(path = configPath()): Promise<ClientConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw new ClientError(`cannot read ${path}: ${(err as Error).message}`, EXIT.FAILED, { cause: err });
  }
  try {
    const parsed = JSON.parse(text) as ClientConfig;
    if (!parsed || typeof parsed !== 'object' || typeof parsed.servers !== 'object' || parsed.servers === null) throw new Error('no "servers" object');
    return parsed;
  } catch (err) {
    throw new ClientError(`${path} is not a lading client configuration (${(err as Error).message}); remove it and log in again`, EXIT.FAILED, { cause: err });
  }
}

/** Writes the configuration atomically (a new file renamed over the old), mode 0600, directory 0700. */
export async function saveConfig(config: ClientConfig, path = configPath()): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temp = join(dir, `.config.json.${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(config, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** `url` without trailing slashes; `ClientError(USAGE)` when it is not an http(s) URL. */
export function normalizeUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ClientError(`'${url}' is not a URL: give the server's base URL, e.g. https://staging.example.org`, EXIT.USAGE);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ClientError(`'${url}' is not an http or https URL`, EXIT.USAGE);
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

/** The name a server gets when none is given: its host (and port). */
export function defaultName(url: string): string {
  return new URL(url).host;
}

/** The name and entry for `nameOrUrl`: a remembered name, or the URL of a remembered server. */
export function findServer(config: ClientConfig, nameOrUrl: string): [string, ServerEntry] | null {
  const byName = config.servers[nameOrUrl];
  if (byName) return [nameOrUrl, byName];
  if (!/^https?:\/\//i.test(nameOrUrl)) return null;
  const url = normalizeUrl(nameOrUrl);
  return Object.entries(config.servers).find(([, e]) => e.url === url) ?? null;
}

function targetOf(name: string | undefined, e: ServerEntry): ServerTarget {
  return { url: e.url, token: e.token, ...(name ? { name } : {}), user: e.user, ...(e.home ? { home: e.home } : {}) };
}

/**
 * Which server and token to use: the `--server` option (a remembered name or URL; a URL not
 * remembered takes LADING_TOKEN), else LADING_URL and LADING_TOKEN from the environment, else
 * the configuration's default. A remembered token that is about to expire is renewed first
 * when a refresh token allows it. Rejects with `ClientError(AUTH)` saying to run `lading login`
 * when there is none.
 */
export async function resolveTarget(options: { server?: string }, env: NodeJS.ProcessEnv = process.env): Promise<ServerTarget> {
  const envToken = env.LADING_TOKEN?.trim() || undefined;
  const envUrl = env.LADING_URL?.trim() || undefined;
  const path = configPath(env);
  const config = await loadConfig(path);
  let found: [string, ServerEntry] | null = null;
  if (options.server !== undefined) {
    found = findServer(config, options.server);
    if (!found) {
      if (/^https?:\/\//i.test(options.server) && envToken) return { url: normalizeUrl(options.server), token: envToken };
      throw new ClientError(`not logged in to ${options.server}: run 'lading login ${/^https?:/i.test(options.server) ? options.server : '<URL> --name ' + options.server}'`, EXIT.AUTH);
    }
  } else if (envToken) {
    const url = envUrl ?? (config.default ? config.servers[config.default]?.url : undefined);
    if (!url) throw new ClientError('LADING_TOKEN is set but not LADING_URL: set it to the server\'s base URL', EXIT.USAGE);
    const known = findServer(config, url);
    return { url: normalizeUrl(url), token: envToken, ...(known && known[1].user ? { user: known[1].user, ...(known[1].home ? { home: known[1].home } : {}) } : {}) };
  } else if (envUrl) {
    found = findServer(config, envUrl);
    if (!found) throw new ClientError(`not logged in to ${envUrl} (LADING_URL): run 'lading login ${envUrl}' or set LADING_TOKEN`, EXIT.AUTH);
  } else {
    const name = config.default;
    const entry = name ? config.servers[name] : undefined;
    if (!name || !entry) throw new ClientError('not logged in: run \'lading login <URL>\' (or set LADING_URL and LADING_TOKEN)', EXIT.AUTH);
    found = [name, entry];
  }
  const [name, entry] = found;
  if (entry.expiresAt && Date.parse(entry.expiresAt) - Date.now() < REFRESH_AHEAD_MS) {
    if (!entry.refreshToken) {
      if (Date.parse(entry.expiresAt) <= Date.now()) throw new ClientError(`the login to ${entry.url} has expired: run 'lading login ${entry.url}'`, EXIT.AUTH);
    } else {
      const renewed = await refreshLogin(entry.url, entry.refreshToken);
      const updated: ServerEntry = { ...entry, ...renewed };
      await updateServer(name, updated, path);
      return targetOf(name, updated);
    }
  }
  return targetOf(name, entry);
}

/** Stores (or replaces) a server under `name`; the first one stored becomes the default. */
export async function rememberServer(name: string, entry: ServerEntry, options: { makeDefault?: boolean } = {}, path = configPath()): Promise<ClientConfig> {
  const config = await loadConfig(path);
  config.servers[name] = entry;
  if (options.makeDefault || !config.default || !config.servers[config.default]) config.default = name;
  await saveConfig(config, path);
  return config;
}

async function updateServer(name: string, entry: ServerEntry, path: string): Promise<void> {
  const config = await loadConfig(path);
  config.servers[name] = entry;
  await saveConfig(config, path);
}

/** Forgets a server; the default moves to another remembered one, if any. */
export async function forgetServer(name: string, path = configPath()): Promise<void> {
  const config = await loadConfig(path);
  delete config.servers[name];
  if (config.default === name) {
    const next = Object.keys(config.servers)[0];
    if (next) config.default = next;
    else delete config.default;
  }
  await saveConfig(config, path);
}
