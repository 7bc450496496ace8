/**
 * The client commands of `lading`, at the top level: `login`, `logout`, `ls`, `stat`, `mkdir`,
 * `mv`, `cp`, `rm`, `trash`, `s3 key`, `pid`, `share`, `token` and `proxy` (with `proxy renew`). Each talks to a server over
 * its HTTP API (`ApiClient`), never to a data directory. Every failure is a `ClientError`:
 * `runClient` prints it as one line and exits with its documented code (`exit-codes.ts`).
 * Tokens and passwords never come from the command line and are printed only by `token`.
 */
import { posix } from 'node:path';
import { type Command, CommanderError, Option } from 'commander';
import { ApiClient } from './api.ts';
import { ClientError, printable, usageError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { formatBytes } from './format.ts';
import {
  type ServerEntry, configPath, defaultName, findServer, forgetServer, loadConfig, normalizeUrl, rememberServer, resolveTarget,
} from './config.ts';
import { type Login, cliClient, exchange, pollDeviceToken, revokeRefreshToken, startDeviceAuthorization } from './device.ts';
import { readPassword } from '../cli/secret.ts';
import { type OwnerDeps, registerOwnerCommands } from './owner-commands.ts';
import { registerSearchCommands } from './search-commands.ts';

/** A trash entry's id (an entity's UUID), as `lading trash restore` tells it from a path. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The options every client command accepts. */
export interface ClientOptions {
  server?: string;
  json?: boolean;
  quiet?: boolean;
}

/** One line on standard output. */
function line(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** What a command reports: one JSON object per line with --json, else the text (unless --quiet). */
function report(opts: ClientOptions, text: string | null, json: unknown): void {
  if (opts.json) line(JSON.stringify(json));
  else if (text !== null && !opts.quiet) line(text);
}

/**
 * Runs a client action: a `ClientError` (or any other failure) becomes one line on standard
 * error and the process's exit code; Ctrl-C stops with 130.
 */
export async function runClient(action: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const stop = onStopSignals();
  try {
    await action(stop.signal);
  } catch (err) {
    if (stop.signal.aborted) {
      process.stderr.write(`lading: ${stop.said()}\n`);
      process.exitCode = stop.exitCode();
      return;
    }
    const code = err instanceof ClientError ? err.exitCode : (err as { exitCode?: unknown }).exitCode === 2 ? EXIT.USAGE : EXIT.FAILED;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`lading: ${printable(message)}\n`);
    process.exitCode = code;
  } finally {
    stop.off();
  }
}

/**
 * Ctrl-C (SIGINT) and SIGTERM (`kill`, a batch system's cancel such as Slurm's `scancel`) as
 * one clean stop: the first aborts `signal` (transfers stop where they are, resumable), a
 * second ends the process at once. The exit code says which: 130 or 143.
 */
export function onStopSignals(): { signal: AbortSignal; exitCode(): number; said(): string; off(): void } {
  const controller = new AbortController();
  let by: NodeJS.Signals | null = null;
  const on = (signal: NodeJS.Signals): void => {
    if (by !== null) process.exit(signal === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED);
    by = signal;
    controller.abort();
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: controller.signal,
    exitCode: () => (by === 'SIGTERM' ? EXIT.TERMINATED : EXIT.INTERRUPTED),
    said: () => (by === 'SIGTERM' ? 'stopped by SIGTERM' : 'interrupted'),
    off: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

/** Opens the API of the server the options name (see `resolveTarget`), runs `use`, closes it. */
async function withApi<T>(opts: ClientOptions, use: (api: ApiClient) => Promise<T>): Promise<T> {
  const api = new ApiClient(await resolveTarget(opts));
  try {
    return await use(api);
  } finally {
    await api.close();
  }
}

interface ProxyState {
  subject: string; issuer: string | null; not_before: string | null; not_after: string; seconds_left: number; expired: boolean;
  storage_user: string; storage_home: string;
}

/** The user's home collection: from the login, else asked of the server. */
async function homeOf(api: ApiClient): Promise<string> {
  if (api.target.home) return api.target.home;
  const state = await api.json<ProxyState>('GET', '/auth/proxy');
  api.target.home = state.storage_home;
  api.target.user = state.storage_user;
  return state.storage_home;
}

/** An absolute, normalised path: `path` as given when absolute, else below the user's home. */
async function absolute(api: ApiClient, path: string | undefined): Promise<string> {
  if (path === undefined || path === '' || path === '.') return homeOf(api);
  const full = path.startsWith('/') ? path : `${await homeOf(api)}/${path}`;
  const normal = posix.normalize(full).replace(/\/+$/, '');
  return normal === '' ? '/' : normal;
}

/** Whether `path` is a collection the caller may list (false when missing, unreadable or a data object). */
async function isCollection(api: ApiClient, path: string): Promise<boolean> {
  const res = await api.request('GET', `${api.registeredUrl(path)}/?max_keys=1`, { accept: [400, 401, 403, 404] });
  await res.body?.cancel();
  return res.status === 200;
}

/**
 * Where `mv` or `cp` puts `full` for the destination `dest` (as the user typed it): into `dest`
 * under its own name when `dest` ends in '/' or is an existing collection, else into the
 * collection above `dest` under its last name.
 */
async function placeOf(api: ApiClient, full: string, dest: string): Promise<{ into: string; name: string }> {
  const target = await absolute(api, dest);
  if (dest.endsWith('/') || await isCollection(api, target)) return { into: target, name: posix.basename(full) };
  return { into: posix.dirname(target), name: posix.basename(target) };
}

/** The inside of one entity record of spec 2.2 (with lading's size and modified). */
interface EntityRecord {
  dataobject: string;
  link: string;
  path: string;
  metadata: { PID: string | null; checksum: string | null; name: string; object_type: 'dataobject' | 'collection'; size?: number | null; modified?: string };
}

/** An S3 key as `/api/s3/keys` answers it. */
/** A quota as `GET /api/quota` shows it. */
interface QuotaRecord {
  path: string;
  user: string | null;
  max_bytes: number | null;
  max_objects: number | null;
  used_bytes: number;
  used_objects: number;
  available_bytes: number | null;
}

interface S3KeyRecord {
  access_key_id: string; label: string | null; created_at: string;
}

/** A trash entry as `/api/trash` answers it. */
interface TrashEntry {
  id: string; path: string; kind: 'dataobject' | 'collection'; trashed_at: string; purge_after: string | null; reason: string | null;
}

/** Every entry of the caller's trash, newest first, read page by page. */
async function allTrash(api: ApiClient): Promise<TrashEntry[]> {
  const out: TrashEntry[] = [];
  let after: string | null = null;
  for (;;) {
    const res = await api.request('GET', `/api/trash?limit=1000${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
    const body = await res.json() as { Meta: { continuation_token?: string | null }; Response: { data: TrashEntry[] } };
    out.push(...body.Response.data);
    after = body.Meta.continuation_token ?? null;
    if (after === null) return out;
  }
}

function trashLine(e: TrashEntry): string {
  return [e.id, e.kind === 'collection' ? 'collection' : 'object', shortDate(e.trashed_at), e.purge_after ? shortDate(e.purge_after) : '-', e.path].join('\t');
}

/** What `ls --json` and `stat --json` print per entity. */
function entityJson(r: EntityRecord) {
  const m = r.metadata;
  return {
    name: m.name, path: posix.join(r.path, m.name), type: m.object_type, size: m.size ?? null, modified: m.modified ?? null,
    checksum: m.checksum, pid: m.PID, link: r.link,
  };
}

function records(data: Record<string, EntityRecord>[]): EntityRecord[] {
  return data.map((one) => Object.values(one)[0]!).filter(Boolean);
}

/** `2026-11-23 14:07` in UTC, or '-'. */
function shortDate(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : '-';
}

/** A size in bytes, as `ls -l` shows it. */
function sizeText(size: number | null | undefined): string {
  return size === null || size === undefined ? '-' : String(size);
}

/** The long listing's rows, padded into columns: type, size, modified (UTC), name, checksum, PID. */
function longListing(list: EntityRecord[], human = false): string[] {
  const rows = list.map((r) => {
    const m = r.metadata;
    const dir = m.object_type === 'collection';
    const size = human && typeof m.size === 'number' ? formatBytes(m.size) : sizeText(m.size);
    return [dir ? 'd' : '-', size, shortDate(m.modified), printable(dir ? `${m.name}/` : m.name), m.checksum ?? '-', m.PID ?? '-'];
  });
  const width = (i: number) => Math.max(0, ...rows.map((r) => r[i]!.length));
  const w1 = width(1);
  const w3 = width(3);
  return rows.map((r) => `${r[0]} ${r[1]!.padStart(w1)} ${r[2]}  ${r[3]!.padEnd(w3)}  ${r[4]}  ${r[5]}`.trimEnd());
}

/** Parses `7d`, `12h`, `30m`, `45s` or a plain number of seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*([smhdw]?)$/i.exec(text.trim());
  if (!m) throw usageError(`'${text}' is not a duration: use e.g. 7d, 12h, 30m or 3600 (seconds)`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2]!.toLowerCase() as '' | 's' | 'm' | 'h' | 'd' | 'w'];
  const seconds = Number(m[1]) * unit;
  if (seconds < 1) throw usageError('the duration must be at least one second');
  return seconds;
}

/** Opens `url` in the user's browser when there is a graphical session; never waits for it. */
function openBrowser(url: string): void {
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  try {
    // NOTE: child_process and readline are taken when used, not imported: every start of
    // `lading` loads this module, the server's too.
    const child = process.getBuiltinModule('node:child_process').spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
    child.on('error', () => { /* no xdg-open: the URL is printed anyway */ });
    child.unref();
  } catch { /* the URL is printed anyway */ }
}

/** The user name typed on the terminal. */
async function askUser(): Promise<string> {
  if (!process.stdin.isTTY) throw usageError('no terminal to ask for the user name: give --user NAME (and --password-stdin), or use --device');
  const rl = process.getBuiltinModule('node:readline/promises').createInterface({ input: process.stdin, output: process.stderr });
  try {
    const name = (await rl.question('User name: ')).trim();
    if (!name) throw usageError('no user name given');
    return name;
  } finally {
    rl.close();
  }
}

interface LoginOptions extends ClientOptions {
  name?: string;
  user?: string;
  device?: boolean;
  passwordStdin?: boolean;
}

async function passwordLogin(url: string, opts: LoginOptions): Promise<Login> {
  const user = opts.user ?? await askUser();
  let password: string;
  try {
    password = await readPassword(`Password for ${user} at ${url}: `);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const api = new ApiClient({ url, token: '' });
  try {
    const data = await api.json<{ token: string; storage_user: string; storage_home: string }>('POST', '/auth/login', {
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: user, password }),
    });
    let ttl: number | null = null;
    try {
      ttl = (await cliClient(url)).token_ttl;
    } catch { /* a server without OIDC: the expiry stays unknown */ }
    return { token: data.token, user: data.storage_user, home: data.storage_home, ...(ttl ? { expiresAt: new Date(Date.now() + ttl * 1000).toISOString() } : {}) };
  } finally {
    await api.close();
  }
}

async function deviceLogin(url: string, opts: LoginOptions, signal: AbortSignal): Promise<Login> {
  const info = await cliClient(url);
  const device = await startDeviceAuthorization(info, signal);
  const where = device.verification_uri_complete ?? device.verification_uri;
  // NOTE: the code and URL go to standard error, so standard output stays for --json and scripts.
  process.stderr.write(`To log in, open ${device.verification_uri} and enter the code ${device.user_code}\n`);
  if (device.verification_uri_complete) process.stderr.write(`(or open ${device.verification_uri_complete} directly)\n`);
  if (opts.json) line(JSON.stringify({ user_code: device.user_code, verification_uri: device.verification_uri, verification_uri_complete: device.verification_uri_complete ?? null, expires_in: device.expires_in }));
  openBrowser(where);
  const tokens = await pollDeviceToken(info, device, signal);
  return exchange(url, tokens.access_token, info.token_ttl, tokens.refresh_token);
}

/**
 * Rejects with one line when `url` does not answer as a lading server does (its liveness check,
 * `GET /api/status`, is a JSON envelope): a mistyped or wrong URL says so rather than failing
 * later with a status of some other server.
 */
async function isLading(url: string, signal: AbortSignal): Promise<void> {
  const api = new ApiClient({ url, token: '' });
  try {
    const res = await api.request('GET', '/api/status', { accept: [300, 301, 302, 303, 307, 308, 400, 401, 403, 404, 405, 500, 502, 503], signal, headers: { accept: 'application/json' } });
    const type = res.headers.get('content-type') ?? 'no content type';
    const body = await res.text().catch(() => '');
    let envelope = false;
    try {
      const parsed = JSON.parse(body) as { Meta?: unknown; Response?: unknown };
      envelope = typeof parsed === 'object' && parsed !== null && 'Meta' in parsed && 'Response' in parsed;
    } catch { /* not JSON: not lading */ }
    if (res.status === 503 && envelope) return;
    if (res.status !== 200 || !envelope) {
      throw new ClientError(`${url} is not a lading server: GET /api/status answered ${res.status} (${type.split(';')[0]}); check the URL (the server's base URL, without /api)`, EXIT.FAILED);
    }
  } finally {
    await api.close();
  }
}

/** Registers the client commands on the `lading` program (in the current help group). */
export function registerClientCommands(cli: Command): void {
  const client = (cmd: Command): Command => withClientOptions(cmd);

  client(cli.command('login').argument('[url]', 'the server\'s base URL (default: LADING_URL, else the default server)'))
    .description('log in to a server and remember it: in a browser with a short code (device authorization), or with a local password')
    .option('--name <name>', 'remember the server under this name (default: its host)')
    .option('--user <user>', 'log in with this local account\'s password (asked on the terminal)')
    .option('--device', 'log in in a browser with a short code (RFC 8628 device authorization)')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .option('--default', 'make this server the default')
    .action(async (given: string | undefined, opts: LoginOptions & { default?: boolean }) => runClient(async (signal) => {
      const config = await loadConfig();
      const raw = given ?? process.env.LADING_URL ?? (config.default ? config.servers[config.default]?.url : undefined);
      if (!raw) throw usageError('which server? give its URL: lading login https://staging.example.org');
      const known = findServer(config, raw);
      const url = known ? known[1].url : normalizeUrl(raw);
      await isLading(url, signal);
      let device = opts.device === true;
      if (!device && !opts.user && !opts.passwordStdin) {
        // NOTE: with an external provider there are no local passwords to ask for; with the
        // embedded one, a terminal asks for the password and anything else uses the browser.
        const info = await cliClient(url).catch(() => null);
        device = info !== null && (!info.local_accounts || !process.stdin.isTTY);
      }
      if (device && (opts.user || opts.passwordStdin)) throw usageError('--device logs in in a browser: it takes no --user or --password-stdin');
      const login = device ? await deviceLogin(url, opts, signal) : await passwordLogin(url, opts);
      const name = opts.name ?? known?.[0] ?? defaultName(url);
      const entry: ServerEntry = {
        url, token: login.token, user: login.user, home: login.home,
        ...(login.expiresAt ? { expiresAt: login.expiresAt } : {}), ...(login.refreshToken ? { refreshToken: login.refreshToken } : {}),
      };
      const saved = await rememberServer(name, entry, { makeDefault: opts.default === true });
      report(opts, `logged in to ${url} as ${login.user} (saved as '${name}'${saved.default === name ? ', the default' : ''} in ${configPath()})`,
        { server: name, url, user: login.user, home: login.home, default: saved.default === name });
    }));

  client(cli.command('logout'))
    .description('log out: the server revokes the token, and the server is forgotten')
    .action(async (opts: ClientOptions) => runClient(async () => {
      const target = await resolveTarget(opts);
      const api = new ApiClient(target);
      try {
        await api.request('POST', '/auth/logout', { accept: [401] });
      } finally {
        await api.close();
      }
      const config = await loadConfig();
      const entry = target.name ? config.servers[target.name] : undefined;
      if (entry?.refreshToken) await revokeRefreshToken(target.url, entry.refreshToken);
      if (target.name && entry?.token === target.token) await forgetServer(target.name);
      report(opts, `logged out of ${target.url}`, { url: target.url, server: target.name ?? null });
    }));

  client(cli.command('ls').argument('[path]', 'a collection or data object; relative paths start at your home (default: your home)'))
    .description('list a collection (or show a data object); -l adds size, date (UTC), checksum and PID')
    .option('-l, --long', 'long format: type, size, modified, name, checksum, PID')
    .option('-h, --human-readable', 'with -l, sizes as 1.50 KiB, 3.25 GiB')
    .option('-R, --recursive', 'list the collections below too, each under its path')
    .helpOption('--help', 'display help for command')
    .action(async (path: string | undefined, opts: ClientOptions & { long?: boolean; humanReadable?: boolean; recursive?: boolean }) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      const show = (list: EntityRecord[]): void => {
        if (opts.json) for (const r of list) line(JSON.stringify(entityJson(r)));
        else if (opts.long) for (const row of longListing(list, opts.humanReadable === true)) line(row);
        else for (const r of list) line(printable(r.metadata.object_type === 'collection' ? `${r.metadata.name}/` : r.metadata.name));
      };
      const list = records(await api.json<Record<string, EntityRecord>[]>('GET', api.registeredUrl(full)));
      if (!opts.recursive) {
        show(list);
        return;
      }
      // NOTE: as ls -R: each collection under its path, depth first in name order; with
      // --json the entities alone (each carries its path).
      const pending: [string, EntityRecord[]][] = [[full, list]];
      let first = true;
      while (pending.length > 0) {
        const [at, entries] = pending.shift()!;
        if (!opts.json) {
          if (!first) line('');
          line(`${printable(at)}:`);
        }
        first = false;
        show(entries);
        const below: [string, EntityRecord[]][] = [];
        for (const r of entries.filter((e) => e.metadata.object_type === 'collection')) {
          const child = posix.join(r.path, r.metadata.name);
          below.push([child, records(await api.json<Record<string, EntityRecord>[]>('GET', `${api.registeredUrl(child)}/`))]);
        }
        pending.unshift(...below);
      }
    })));

  client(cli.command('stat').argument('<path>', 'a collection or data object'))
    .description('show one entity: type, size, modified, checksum, PID and link')
    .action(async (path: string, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      const parent = posix.dirname(full);
      const name = posix.basename(full);
      // NOTE: GET of a collection lists its children; its own record is found in its parent's listing.
      let record = records(await api.json<Record<string, EntityRecord>[]>('GET', api.registeredUrl(full)))
        .find((r) => r.metadata.object_type === 'dataobject' && posix.join(r.path, r.metadata.name) === full);
      if (!record && full !== '/') {
        record = records(await api.json<Record<string, EntityRecord>[]>('GET', `${api.registeredUrl(parent)}/`)).find((r) => r.metadata.name === name);
      }
      if (!record) throw new ClientError(`'${full}' was not found`, EXIT.NOT_FOUND);
      const e = entityJson(record);
      report(opts, [
        `path     : ${e.path}`,
        `type     : ${e.type}`,
        `size     : ${sizeText(e.size)}`,
        `modified : ${e.modified ?? '-'}`,
        `checksum : ${e.checksum ?? '-'}`,
        `PID      : ${e.pid ?? '-'}`,
        `link     : ${e.link}`,
      ].join('\n'), e);
    })));

  client(cli.command('mkdir').argument('<path>', 'the collection to create'))
    .description('create a collection')
    .option('-p, --parents', 'create missing parents too, and do not fail when it exists')
    .action(async (path: string, opts: ClientOptions & { parents?: boolean }) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      if (opts.parents && await isCollection(api, full)) {
        report(opts, `${full} exists`, { path: full, created: false });
        return;
      }
      await api.json('POST', '/api/registered', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: full, force: opts.parents === true }) });
      report(opts, `created ${full}`, { path: full, created: true });
    })));

  client(cli.command('mv').argument('<path>', 'the entity to move or rename').argument('<dest>', 'a collection to move it into (an existing one, or any path ending in /), or its new name or path'))
    .description('move a collection or data object into another collection, or rename it')
    .option('-f, --force', 'replace a data object at the target (never a collection)')
    .action(async (path: string, dest: string, opts: ClientOptions & { force?: boolean }) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      // NOTE: a plain name is a sibling, as it always was: `mv a.csv b.csv` renames in place.
      const { into, name } = await placeOf(api, full, dest.includes('/') ? dest : posix.join(posix.dirname(full), dest));
      const to = posix.join(into, name);
      const body = into === posix.dirname(full) && !opts.force ? { newname: name } : { destination: into, newname: name, force: opts.force === true };
      await api.json('PATCH', api.registeredUrl(full), { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      report(opts, into === posix.dirname(full) ? `renamed ${full} to ${to}` : `moved ${full} to ${to}`, { from: full, to });
    })));

  client(cli.command('cp').argument('<path>', 'the entity to copy').argument('<dest>', 'a collection to copy it into (an existing one, or any path ending in /), or the path of the copy'))
    .description('copy a data object, or with -r a collection, inside the server (the bytes do not pass through this machine)')
    .option('-r, --recursive', 'copy a collection with everything in it')
    .option('-f, --force', 'replace a data object at the target (never a collection)')
    .action(async (path: string, dest: string, opts: ClientOptions & { recursive?: boolean; force?: boolean }) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      if (!opts.recursive && await isCollection(api, full)) throw usageError(`'${full}' is a collection: copy it with -r`);
      const { into, name } = await placeOf(api, full, dest);
      const to = posix.join(into, name);
      await api.json('POST', api.registeredUrl(full), {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify({ copy_to: into, newname: name, force: opts.force === true }),
      });
      report(opts, `copied ${full} to ${to}`, { from: full, to });
    })));

  client(cli.command('rm').argument('<path>', 'the data object (or, with -r, collection) to move to the trash'))
    .description('move a data object, or with -r a collection, to the trash (lading trash restores it until trash.retention has passed; you need own)')
    .option('-r, --recursive', 'trash a collection with everything in it')
    .option('--reason <text>', 'why (shown on the tombstone of its PID)')
    .action(async (path: string, opts: ClientOptions & { recursive?: boolean; reason?: string }) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      if (!opts.recursive && await isCollection(api, full)) throw usageError(`'${full}' is a collection: trash it with -r`);
      const entry = await api.json<TrashEntry>('POST', '/api/trash', {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: full, ...(opts.reason === undefined ? {} : { reason: opts.reason }) }),
      });
      report(opts, `trashed ${full} (id ${entry.id}; lading trash restore ${entry.id})`, entry);
    })));

  const trash = cli.command('trash').description('your trash: list it, restore from it, empty it');
  withClientOptions(trash.command('ls'))
    .description('list your trash, newest first: id, kind, trashed at, purged after, path')
    .action(async (opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      for (const e of await allTrash(api)) report(opts, trashLine(e), e);
    })));
  withClientOptions(trash.command('restore').argument('<entry>', 'the entry\'s id, or the path it had'))
    .description('put a trashed entity back where it was (never over something that took its place: give --as)')
    .option('--as <name>', 'restore beside its old path under this name')
    .action(async (which: string, opts: ClientOptions & { as?: string }) => runClient(() => withApi(opts, async (api) => {
      let id = which;
      // NOTE: an entry's id is a UUID; anything else is the path it had (relative to the home
      // like every path here), and the newest entry from that path is the one meant.
      if (!UUID.test(which)) {
        const full = await absolute(api, which);
        const found = (await allTrash(api)).find((e) => e.path === full);
        if (!found) throw new ClientError(`nothing from '${full}' is in your trash`, EXIT.NOT_FOUND);
        id = found.id;
      }
      const restored = await api.json<{ path: string }>('POST', `/api/trash/${encodeURIComponent(id)}/restore`, {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify(opts.as === undefined ? {} : { newname: opts.as }),
      });
      report(opts, `restored ${restored.path}`, restored);
    })));
  withClientOptions(trash.command('empty'))
    .description('purge everything in your trash now: the bytes are gone for good (PIDs keep their tombstones)')
    .action(async (opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const { purged } = await api.json<{ purged: number }>('DELETE', '/api/trash');
      report(opts, `purged ${purged} ${purged === 1 ? 'entry' : 'entries'}`, { purged });
    })));

  client(cli.command('df').argument('[path]', 'a collection or data object; relative paths start at your home (default: your home)'))
    .description('show the quotas that bound your writes at a path, and those below it you may read: bytes and data objects used (the trash counts) and allowed')
    .action(async (path: string | undefined, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const query = path === undefined ? '' : `?path=${encodeURIComponent(await absolute(api, path))}`;
      const view = await api.json<{ path: string; quotas: QuotaRecord[] }>('GET', `/api/quota${query}`);
      if (view.quotas.length === 0) {
        report(opts, `no quota bounds ${printable(view.path)}`, { path: view.path, quota: null });
        return;
      }
      if (!opts.json && !opts.quiet) line('quota\tused\tallowed\tavailable\tobjects\tobjects allowed');
      for (const q of view.quotas) {
        const text = [
          printable(q.user === null ? q.path : `${q.path} (${q.user})`), formatBytes(q.used_bytes), q.max_bytes === null ? 'unlimited' : formatBytes(q.max_bytes),
          q.available_bytes === null ? 'unlimited' : formatBytes(q.available_bytes), String(q.used_objects), q.max_objects === null ? 'unlimited' : String(q.max_objects),
        ].join('\t');
        report(opts, text, q);
      }
    })));

  const s3 = cli.command('s3').description('your keys for S3 clients (aws, boto3, rclone, s3cmd) at the server\'s S3 listener');
  const s3key = s3.command('key').description('make, list and revoke S3 access keys');
  withClientOptions(s3key.command('create'))
    .description('make an S3 key pair and print it as two export lines for the shell (the secret is shown only now): eval "$(lading s3 key create)"')
    .option('--label <text>', 'what the key is for, to recognise it in lading s3 key list')
    .action(async (opts: ClientOptions & { label?: string }) => runClient(() => withApi(opts, async (api) => {
      const made = await api.json<S3KeyRecord & { secret_access_key: string }>('POST', '/api/s3/keys', {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify(opts.label === undefined ? {} : { label: opts.label }),
      });
      // NOTE: printed even with --quiet: the secret exists nowhere else.
      if (opts.json) line(JSON.stringify(made));
      else line(`export AWS_ACCESS_KEY_ID=${made.access_key_id}\nexport AWS_SECRET_ACCESS_KEY=${made.secret_access_key}`);
    })));
  withClientOptions(s3key.command('list'))
    .description('list your S3 keys, oldest first: access key id, made at, label (never the secrets)')
    .action(async (opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      for (const k of await api.json<S3KeyRecord[]>('GET', '/api/s3/keys')) report(opts, [k.access_key_id, shortDate(k.created_at), k.label ?? ''].join('\t'), k);
    })));
  withClientOptions(s3key.command('revoke').argument('<access-key-id>', 'the key to revoke'))
    .description('revoke an S3 key: every node refuses it from the next request on')
    .action(async (id: string, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      await api.json('DELETE', `/api/s3/keys/${encodeURIComponent(id)}`);
      report(opts, `revoked ${id}`, { revoked: id });
    })));

  client(cli.command('pid').argument('<path>', 'a data object or collection'))
    .description('print the persistent identifier (PID) of an entity; exit 4 when it has none yet')
    .action(async (path: string, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const full = await absolute(api, path);
      const data = records(await api.json<Record<string, EntityRecord>[]>('GET', api.registeredUrl(full)));
      let record = data.find((r) => r.metadata.object_type === 'dataobject' && posix.join(r.path, r.metadata.name) === full);
      if (!record && full !== '/') {
        record = records(await api.json<Record<string, EntityRecord>[]>('GET', `${api.registeredUrl(posix.dirname(full))}/`)).find((r) => r.metadata.name === posix.basename(full));
      }
      if (!record) throw new ClientError(`'${full}' was not found`, EXIT.NOT_FOUND);
      if (!record.metadata.PID) throw new ClientError(`'${full}' has no PID (yet)`, EXIT.NOT_FOUND);
      report(opts, record.metadata.PID, { path: full, pid: record.metadata.PID });
    })));

  const share = cli.command('share').description('share links: create, list and revoke');
  withClientOptions(share.command('create').argument('<path>', 'the data object or collection to share (you need own on it)'))
    .description('create a link anyone can download with (or, with --upload, a drop box onto a collection)')
    .option('--upload', 'a drop box: anyone with the link can deposit files into the collection')
    .option('--expires <duration>', 'the link stops working after this long: 7d, 12h, 30m, or seconds')
    .option('--max-uses <n>', 'the link allows this many downloads (or deposited files)')
    .option('--password-stdin', 'protect the link with a password read from standard input')
    .action(async (path: string, opts: ClientOptions & { upload?: boolean; expires?: string; maxUses?: string; passwordStdin?: boolean }) => runClient(() => withApi(opts, async (api) => {
      const body: Record<string, unknown> = { path: await absolute(api, path), kind: opts.upload ? 'upload' : 'read' };
      if (opts.expires !== undefined) body.expires_in = parseDuration(opts.expires);
      if (opts.maxUses !== undefined) {
        if (!/^\d+$/.test(opts.maxUses) || Number(opts.maxUses) < 1) throw usageError(`--max-uses takes a positive whole number, not '${opts.maxUses}'`);
        body.max_uses = Number(opts.maxUses);
      }
      if (opts.passwordStdin) {
        try {
          body.password = await readPassword('Password for the link: ');
        } catch (err) {
          throw usageError((err as Error).message);
        }
      }
      const link = await api.json<{ id: string; url: string; expires_at: string | null; kind: string; path: string }>('POST', '/api/shares', {
        headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      // NOTE: the URL holds the link's secret; it is shown once, on standard output only.
      report(opts, `${link.url}\nid ${link.id}${link.expires_at ? `, expires ${link.expires_at}` : ''}`, link);
    })));
  withClientOptions(share.command('list').argument('[path]', 'only the links of this entity (default: every link that acts as you)'))
    .description('list share links: id, kind, state, uses, expiry, path')
    .action(async (path: string | undefined, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const query = path === undefined ? '' : `?path=${encodeURIComponent(await absolute(api, path))}`;
      const links = await api.json<{ id: string; kind: string; state: string; uses: number; max_uses: number | null; expires_at: string | null; path: string | null; password: boolean }[]>('GET', `/api/shares${query}`);
      for (const l of links) {
        report(opts, [l.id, l.kind, l.state, `${l.uses}/${l.max_uses ?? '∞'}`, l.expires_at ?? 'never', l.password ? 'password' : '-', l.path ?? '(gone)'].join('\t'), l);
      }
    })));
  withClientOptions(share.command('revoke').argument('<id>', 'the link\'s id (from share list)'))
    .description('revoke a share link at once')
    .action(async (id: string, opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const link = await api.json<{ id: string; path: string | null }>('DELETE', `/api/shares/${encodeURIComponent(id)}`);
      report(opts, `revoked ${link.id}${link.path ? ` (${link.path})` : ''}`, link);
    })));

  registerOwnerCommands(cli, ownerDeps);
  registerSearchCommands(cli, ownerDeps);

  client(cli.command('token'))
    .description('print the current token, for scripts: export LADING_TOKEN=$(lading token)')
    .action(async (opts: ClientOptions) => runClient(async () => {
      const target = await resolveTarget(opts);
      if (opts.json) line(JSON.stringify({ url: target.url, token: target.token }));
      else line(target.token);
    }));
}

/** What the owner commands (`owner-commands.ts`) use of this module. */
export const ownerDeps: OwnerDeps = {
  run: (opts, use) => runClient(() => withApi(opts, use)),
  absolute: (api, path) => absolute(api, path),
  report,
  withClientOptions: (cmd) => withClientOptions(cmd),
};

/**
 * `lading proxy` and `lading proxy renew` (the caller's own proxy certificate, over the API) on
 * the `proxy` command, which also holds the admin form `proxy show <user>`.
 */
export function registerProxyCommands(proxy: Command): void {
  withClientOptions(proxy)
    .action(async (opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const s = await api.json<ProxyState>('GET', '/auth/proxy');
      report(opts, [
        `subject  : ${s.subject}`,
        `issuer   : ${s.issuer ?? '(none)'}`,
        `notAfter : ${s.not_after}`,
        `timeleft : ${formatSeconds(s.seconds_left)}${s.expired ? ' (expired: lading proxy renew)' : ''}`,
      ].join('\n'), s);
    })));
  withClientOptions(proxy.command('renew'))
    .description('get a new proxy certificate when the current one has expired')
    .action(async (opts: ClientOptions) => runClient(() => withApi(opts, async (api) => {
      const done = await api.json<{ Completed: string }>('POST', '/auth/proxy');
      report(opts, done.Completed, done);
    })));
}

/** `hh:mm:ss`, as grid-proxy-info prints time left. */
function formatSeconds(total: number): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(total / 3600)}:${pad(Math.floor(total / 60) % 60)}:${pad(total % 60)}`;
}

/**
 * Adds the options every client command takes (`--server`, `--json`, `-q`) and makes its
 * usage mistakes one `lading: …` line with exit code 2.
 */
export function withClientOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--server <name|url>', 'the server: a remembered name or URL (default: LADING_URL, else the default server)'))
    .option('--json', 'machine-readable output: one JSON object per line')
    .option('-q, --quiet', 'print nothing but errors')
    .exitOverride(usageExit)
    .configureOutput({ outputError: (text, write) => write(`lading: ${text.replace(/^error: /, '')}`) });
}

function usageExit(err: CommanderError): never {
  // NOTE: help and version are "errors" to commander too; they end with 0.
  process.exit(err.exitCode === 0 ? 0 : EXIT.USAGE);
}
