/**
 * Search from the terminal, as the logged-in user: `lading search [path] --name … --attr …
 * --value … --type …` (`GET /api/search`: what the user may read below a collection, by name
 * and metadata) and `lading recent` (`GET /api/recent`: the user's latest uploads). One path a
 * line (collections ending in `/`), `-l` with type, size and date, `--json` one object a line.
 * The server decides what the user sees; failures are one line and the client's exit codes.
 */
import { type Command } from 'commander';
import { posix } from 'node:path';
import type { ApiClient } from './api.ts';
import { printable, usageError } from './errors.ts';
import type { OwnerDeps } from './owner-commands.ts';

interface FoundRecord {
  path: string;
  link: string;
  metadata: { name: string; object_type: string; size?: number | null; modified?: string; checksum: string | null; PID: string | null };
}

type Opts = { server?: string; json?: boolean; quiet?: boolean; long?: boolean; max?: string };

/** Reads the pages of `url` (with the query's other parameters) until done or `max` were printed, printing each found entity. */
async function printPages(api: ApiClient, url: string, max: number, opts: Opts, report: OwnerDeps['report']): Promise<void> {
  let after: string | null = null;
  let shown = 0;
  do {
    const page = Math.min(1000, max - shown);
    const res = await api.request('GET', `${url}${url.includes('?') ? '&' : '?'}limit=${page}${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
    const body = (await res.json()) as { Meta: { continuation_token: string | null }; Response: { data: Record<string, FoundRecord>[] } };
    for (const one of body.Response.data) {
      const r = Object.values(one)[0]!;
      const m = r.metadata;
      const path = posix.join(r.path, m.name);
      const dir = m.object_type === 'collection';
      const text = opts.long
        ? [dir ? 'd' : '-', String(m.size ?? '-').padStart(12), m.modified ? `${m.modified.slice(0, 10)} ${m.modified.slice(11, 16)}` : '-', printable(dir ? `${path}/` : path)].join(' ')
        : printable(dir ? `${path}/` : path);
      report(opts, text, { name: m.name, path, type: m.object_type, size: m.size ?? null, modified: m.modified ?? null, checksum: m.checksum, pid: m.PID, link: r.link });
    }
    shown += body.Response.data.length;
    after = body.Meta.continuation_token;
  } while (after !== null && shown < max);
}

function parseMax(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || !Number.isSafeInteger(n)) throw usageError(`--max takes a whole number of results, 1 or more (not '${text}')`);
  return n;
}

export function registerSearchCommands(cli: Command, deps: OwnerDeps): void {
  deps.withClientOptions(cli.command('search').argument('[path]', 'the collection to search below; relative paths start at your home (default: everything you may read)'))
    .description('find what you may read by part of its name (or a * ? pattern), by metadata attribute and value, or by type')
    .option('--name <text>', 'part of the name, in any case; with * or ? a pattern the whole name matches (quote it)')
    .option('--attr <attribute>', 'only entities with this metadata attribute')
    .option('--value <value>', 'with --attr: only with this value')
    .option('--type <type>', 'only "dataobject" or "collection"')
    .option('-l, --long', 'type, size, modified (UTC) and path')
    .option('--max <n>', 'print at most n results (default: all)')
    .action(async (path: string | undefined, opts: Opts & { name?: string; attr?: string; value?: string; type?: string }) => deps.run(opts, async (api) => {
      if (opts.type !== undefined && opts.type !== 'dataobject' && opts.type !== 'collection') throw usageError(`--type is "dataobject" or "collection" (not '${opts.type}')`);
      if (opts.value !== undefined && opts.attr === undefined) throw usageError('--value needs --attr');
      const max = parseMax(opts.max, Number.MAX_SAFE_INTEGER);
      const query = new URLSearchParams();
      if (path !== undefined) query.set('under', await deps.absolute(api, path));
      if (opts.name !== undefined) query.set('name', opts.name);
      if (opts.attr !== undefined) query.set('attribute', opts.attr);
      if (opts.value !== undefined) query.set('value', opts.value);
      if (opts.type !== undefined) query.set('type', opts.type);
      await printPages(api, query.size > 0 ? `/api/search?${query}` : '/api/search', max, opts, deps.report);
    }));
  deps.withClientOptions(cli.command('recent'))
    .description('your latest uploads, the most recent first')
    .option('-l, --long', 'type, size, modified (UTC) and path')
    .option('--max <n>', 'print at most n (default 20)')
    .action(async (opts: Opts) => deps.run(opts, async (api) => {
      await printPages(api, '/api/recent', parseMax(opts.max, 20), opts, deps.report);
    }));
}
