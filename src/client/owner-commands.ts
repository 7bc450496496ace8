/**
 * What owners do to their entities over the API, as the logged-in user, without the server's
 * data directory: `lading acl set|rm|ls` (access lists; `/api/acl`), `lading publish` and
 * `lading unpublish` (anyone may read without a token; `/api/publish`) and `lading meta
 * ls|add|rm` (attribute–value–unit metadata; `/api/metadata`). The server checks the access
 * (own for access lists and publishing, write for metadata); failures are one line and the
 * exit codes of the other client commands.
 */
import { type Command } from 'commander';
import { type ApiClient } from './api.ts';
import { printable, usageError } from './errors.ts';

/** What the commands need of `commands.ts`: no import back, which loads at every start. */
export interface OwnerDeps {
  run(opts: { server?: string }, use: (api: ApiClient) => Promise<void>): Promise<void>;
  absolute(api: ApiClient, path: string): Promise<string>;
  report(opts: { json?: boolean; quiet?: boolean }, text: string | null, json: unknown): void;
  withClientOptions(cmd: Command): Command;
}

interface AccessList {
  path: string; owner: string;
  entries: { principal: string; level: string }[];
  inherited: { principal: string; level: string; from: string }[];
}

interface Publication { path: string; published: boolean; via: string | null; published_at: string | null; published_by: string | null; public_url: string | null }

interface Avu { attribute: string; value: string; unit: string }

/** `/api/<area>` followed by the absolute `path`, each segment percent-encoded. */
function at(area: string, path: string): string {
  return `/api/${area}/${path.split('/').filter((s) => s !== '').map(encodeURIComponent).join('/')}`;
}

const JSON_BODY = { 'content-type': 'application/json' };

function aclLines(list: AccessList): string {
  return [
    `${printable(list.path)} (owner ${list.owner})`,
    ...list.entries.map((e) => `${e.principal}\t${e.level}`),
    ...list.inherited.map((e) => `${e.principal}\t${e.level}\t(from ${printable(e.from)})`),
  ].join('\n');
}

/** The client form of `lading acl set|rm|ls`, on the `acl` command the admin form shares. */
export function clientAcl(deps: OwnerDeps) {
  return {
    async set(path: string, principal: string, level: string, opts: { server?: string; json?: boolean; quiet?: boolean }): Promise<void> {
      await deps.run(opts, async (api) => {
        const full = await deps.absolute(api, path);
        const list = level === 'none'
          ? await api.json<AccessList>('DELETE', `${at('acl', full)}?principal=${encodeURIComponent(principal)}`)
          : await api.json<AccessList>('PUT', at('acl', full), { headers: JSON_BODY, body: JSON.stringify({ principal, level }) });
        deps.report(opts, `${principal}: ${level} on ${printable(full)}`, list);
      });
    },
    async list(path: string, opts: { server?: string; json?: boolean; quiet?: boolean }): Promise<void> {
      await deps.run(opts, async (api) => {
        const list = await api.json<AccessList>('GET', at('acl', await deps.absolute(api, path)));
        deps.report(opts, aclLines(list), list);
      });
    },
  };
}

/** Registers `publish`, `unpublish` and `meta` (in the current help group). */
export function registerOwnerCommands(cli: Command, deps: OwnerDeps): void {
  const client = deps.withClientOptions;
  client(cli.command('publish').argument('<path>', 'a data object or collection you own'))
    .description('publish: anyone may read it (and everything in a collection) without a token, at the public URL printed; --status only shows whether it is')
    .option('--status', 'only say whether it is published, and through what')
    .action(async (path: string, opts: { server?: string; json?: boolean; quiet?: boolean; status?: boolean }) => deps.run(opts, async (api) => {
      const full = await deps.absolute(api, path);
      const state = await api.json<Publication>(opts.status ? 'GET' : 'PUT', at('publish', full));
      const text = state.published
        ? `${printable(full)} is published${state.via && state.via !== full ? ` through ${printable(state.via)}` : ''}: ${state.public_url}`
        : `${printable(full)} is not published`;
      deps.report(opts, text, state);
    }));
  client(cli.command('unpublish').argument('<path>', 'a published data object or collection you own'))
    .description('unpublish: reads without a token stop at once')
    .action(async (path: string, opts: { server?: string; json?: boolean; quiet?: boolean }) => deps.run(opts, async (api) => {
      const full = await deps.absolute(api, path);
      const state = await api.json<Publication>('DELETE', at('publish', full));
      deps.report(opts, state.published ? `${printable(full)} is still published through ${printable(state.via ?? '?')}` : `${printable(full)} is not published any more`, state);
    }));

  const meta = cli.command('meta').description('attribute–value–unit metadata of an entity: list, add, remove');
  client(meta.command('ls').argument('<path>', 'a data object or collection'))
    .description('list the metadata: attribute, value, unit')
    .action(async (path: string, opts: { server?: string; json?: boolean; quiet?: boolean }) => deps.run(opts, async (api) => {
      const avus = await api.json<Avu[]>('GET', at('metadata', await deps.absolute(api, path)));
      if (opts.json) for (const a of avus) deps.report(opts, null, a);
      else deps.report(opts, avus.map((a) => [a.attribute, a.value, a.unit].filter((x, i) => i < 2 || x !== '').map(printable).join('\t')).join('\n') || null, null);
    }));
  client(meta.command('add').argument('<path>', 'a data object or collection (you need write)').argument('<attribute>').argument('<value>').argument('[unit]'))
    .description('add an attribute–value–unit triple')
    .action(async (path: string, attribute: string, value: string, unit: string | undefined, opts: { server?: string; json?: boolean; quiet?: boolean }) => deps.run(opts, async (api) => {
      const full = await deps.absolute(api, path);
      const avus = await api.json<Avu[]>('POST', at('metadata', full), { headers: JSON_BODY, body: JSON.stringify({ attribute, value, ...(unit === undefined ? {} : { unit }) }) });
      deps.report(opts, `added ${printable(attribute)} = ${printable(value)}${unit ? ` ${printable(unit)}` : ''} to ${printable(full)}`, avus);
    }));
  client(meta.command('rm').argument('<path>', 'a data object or collection (you need write)').argument('<attribute>').argument('[value]', 'only the triples with this value'))
    .description('remove the triples with an attribute (and a value)')
    .action(async (path: string, attribute: string, value: string | undefined, opts: { server?: string; json?: boolean; quiet?: boolean }) => deps.run(opts, async (api) => {
      if (attribute === '') throw usageError('give the attribute to remove');
      const full = await deps.absolute(api, path);
      const avus = await api.json<Avu[]>('DELETE', `${at('metadata', full)}?attribute=${encodeURIComponent(attribute)}${value === undefined ? '' : `&value=${encodeURIComponent(value)}`}`);
      deps.report(opts, `removed ${printable(attribute)}${value === undefined ? '' : ` = ${printable(value)}`} from ${printable(full)}`, avus);
    }));
}
