/**
 * Search in the web app: the search box in the header (searching the folder open, or
 * everything the user may read), the results page (`#/search?…`: by name, in a folder or
 * everywhere, and by a metadata attribute and value, through `GET /api/search`), and the Recent
 * page (`#/recent`: the user's latest uploads, through `GET /api/recent`). Both pages list what
 * they find with the folder it is in, a page at a time ("Show more").
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, parentOf, request } from './api.ts';
import { humanSize, shortDate } from './format.ts';
import { browseHref, itemHref } from './router.ts';
import { type Entry, type RecordFields, type Session, entryOf } from './types.ts';
import { Field, FileIcon, FolderIcon, Notice, whereName } from './ui.tsx';

/** What a search asks for (the fields of `#/search?…`). */
export interface SearchQuery {
  q: string;
  /** The folder searched; '' for everything. */
  under: string;
  attribute: string;
  value: string;
}

/** The link of the results page of `query`. */
export function searchHref(query: SearchQuery): string {
  const params = new URLSearchParams();
  for (const key of ['q', 'under', 'attribute', 'value'] as const) if (query[key]) params.set(key, query[key]);
  return `#/search?${params}`;
}

/** The query a results page's link holds. */
export function parseSearch(params: string): SearchQuery {
  const p = new URLSearchParams(params);
  return { q: p.get('q') ?? '', under: p.get('under') ?? '', attribute: p.get('attribute') ?? '', value: p.get('value') ?? '' };
}

/** The short name of a scope for the search box: the folder's name, "my files", or "everything". */
function scopeName(under: string, home: string): string {
  if (!under) return 'everything';
  if (under === home) return 'my files';
  return under.split('/').at(-1) ?? under;
}

/** The search box of the header: searches `scope` (a folder; '' for everything) by name. */
export function SiteSearch(props: { scope: string; home: string }) {
  const [text, setText] = useState('');
  const label = `Search ${scopeName(props.scope, props.home)}`;
  const submit = (e: Event) => {
    e.preventDefault();
    if (!text.trim()) return;
    location.hash = searchHref({ q: text.trim(), under: props.scope, attribute: '', value: '' });
    setText('');
  };
  // NOTE: Enter sends it (a form of one field needs no button), which keeps the header one row at desktop widths.
  return (
    <form class="site-search" role="search" aria-label="Search" onSubmit={submit}>
      <svg class="icon" aria-hidden="true" viewBox="0 0 16 16" width="16" height="16"><circle cx="7" cy="7" r="5" fill="none" stroke="currentColor" stroke-width="1.6" /><path d="M11 11l3.5 3.5" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" /></svg>
      <input type="search" aria-label={label} placeholder={`${label}…`} value={text} onInput={(e) => setText(e.currentTarget.value)} enterKeyHint="search" />
    </form>
  );
}

/** A page of found entries and where the next one starts. */
interface Found {
  entries: Entry[];
  next: string | null;
}

async function fetchPage(url: string, after: string | null, signal?: AbortSignal): Promise<Found> {
  const res = await request('GET', `${url}${after ? `&after=${encodeURIComponent(after)}` : ''}`, { signal });
  const body = (await res.json()) as { Meta: { continuation_token: string | null }; Response: { data: Record<string, RecordFields>[] } };
  return { entries: body.Response.data.map(entryOf), next: body.Meta.continuation_token };
}

/** Pages of `url` (null: nothing asked yet), loaded while `url` stays; `more` appends the next one. */
function usePages(url: string | null) {
  const [found, setFound] = useState<Found | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setFound(null);
    setError('');
    if (url === null) return;
    const abort = new AbortController();
    fetchPage(url, null, abort.signal).then(setFound, (err: unknown) => {
      if ((err as Error).name === 'AbortError') return;
      setFound({ entries: [], next: null });
      setError(describeError(err));
    });
    return () => abort.abort();
  }, [url]);
  const more = async () => {
    if (!url || !found?.next) return;
    setBusy(true);
    try {
      const page = await fetchPage(url, found.next);
      setFound({ entries: [...found.entries, ...page.entries], next: page.next });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return { found, error, busy, more, clearError: () => setError('') };
}

const count = (n: number, more: boolean) => `${n.toLocaleString('en-US')}${more ? '+' : ''} ${n === 1 && !more ? 'result' : 'results'}`;

/** Found entries as a table: name (opening it), the folder it is in, size and when it changed; "Show more" for the next page. */
function FoundTable(props: { found: Found; home: string; caption: string; status: string; busy: boolean; onMore: () => void }) {
  const { entries, next } = props.found;
  return (
    <div class="entries found-list">
      <div class="filter"><span class="count" role="status">{props.status}</span></div>
      <div class="table-scroll">
        <table>
          <caption class="visually-hidden">{props.caption}</caption>
          <thead>
            <tr>
              <th scope="col" class="col-name">Name</th>
              <th scope="col" class="col-folder">Folder</th>
              <th scope="col" class="col-size">Size</th>
              <th scope="col" class="col-modified">Modified</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => {
              const folder = parentOf(e.path);
              const collection = e.kind === 'collection';
              return (
                <tr key={e.path}>
                  <td class="col-name">
                    <a class="entry-name" href={collection ? browseHref(e.path) : itemHref(e.path)} title={e.name}>
                      {collection ? <FolderIcon /> : <FileIcon />}<span>{e.name}</span>
                      {collection && <span class="visually-hidden"> (collection)</span>}
                    </a>
                    <span class="entry-path show-phone">in {whereName(folder, props.home)}</span>
                  </td>
                  <td class="col-folder"><a href={browseHref(folder)} title={folder}>{whereName(folder, props.home)}</a></td>
                  <td class="col-size">{e.size === null ? '—' : humanSize(e.size)}</td>
                  <td class="col-modified">{shortDate(e.modified)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {next && <div class="filter"><button type="button" class="secondary small" disabled={props.busy} onClick={props.onMore}>Show more</button></div>}
    </div>
  );
}

/** The results page of `query`, with a form to change it. */
export function SearchPage(props: { session: Session; query: SearchQuery }) {
  const { home } = props.session;
  const { query } = props;
  const [q, setQ] = useState(query.q);
  const [under, setUnder] = useState(query.under);
  const [attribute, setAttribute] = useState(query.attribute);
  const [value, setValue] = useState(query.value);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    setQ(query.q);
    setUnder(query.under);
    setAttribute(query.attribute);
    setValue(query.value);
  }, [query.q, query.under, query.attribute, query.value]);
  const asked = Boolean(query.q || query.attribute);
  const params = new URLSearchParams();
  if (query.under) params.set('under', query.under);
  if (query.q) params.set('name', query.q);
  if (query.attribute) params.set('attribute', query.attribute);
  if (query.value && query.attribute) params.set('value', query.value);
  params.set('limit', '100');
  const { found, error, busy, more, clearError } = usePages(asked ? `/api/search?${params}` : null);
  const submit = (e: Event) => {
    e.preventDefault();
    location.hash = searchHref({ q: q.trim(), under, attribute: attribute.trim(), value: attribute.trim() ? value : '' });
    heading.current?.focus();
  };
  const where = query.under ? `in ${whereName(query.under, home)}` : 'everywhere you have access';
  const what = [query.q && `names containing “${query.q}”`, query.attribute && `${query.attribute}${query.value ? ` = “${query.value}”` : ''}`].filter(Boolean).join(' and ');
  const scopes = [...new Set([query.under, home, ''].filter((s, i) => i === 2 || s))];
  return (
    <section class="page search" aria-labelledby="page-title">
      <div class="page-head"><h1 id="page-title" ref={heading} tabIndex={-1}>Search</h1></div>
      <form class="card search-form" role="search" aria-label="Search files and collections" onSubmit={submit}>
        <div class="search-fields">
          <Field id="search-name" label="Name contains" type="search" value={q} onInput={setQ} hint="Any part of the name, in any case; * and ? match any text and any one character." />
          <div class="field">
            <label for="search-under">Where</label>
            <select id="search-under" value={under} onChange={(e) => setUnder(e.currentTarget.value)}>
              {scopes.map((s) => <option key={s} value={s}>{s ? whereName(s, home) : 'Everywhere you have access'}</option>)}
            </select>
          </div>
        </div>
        <details open={Boolean(query.attribute)}>
          <summary>Search by metadata</summary>
          <div class="search-fields">
            <Field id="search-attribute" label="Attribute" value={attribute} onInput={setAttribute} hint="The exact attribute name, e.g. project." />
            <Field id="search-value" label="Value (optional)" value={value} onInput={setValue} hint="The exact value; empty for any." />
          </div>
        </details>
        <div class="actions"><button type="submit" class="primary" disabled={!q.trim() && !attribute.trim()}>Search</button></div>
      </form>
      {error && <Notice kind="error" onClose={clearError}>{error}</Notice>}
      {!asked && <p class="hint">Type part of a name, or an attribute, and press Search.</p>}
      {asked && found === null && <p class="loading" role="status">Searching…</p>}
      {asked && found && !error && (found.entries.length === 0
        ? <p class="card hint" role="status">Nothing found: no {what} {where}.</p>
        : <FoundTable found={found} home={home} busy={busy} onMore={() => void more()} caption={`Search results: ${what} ${where}`}
            status={`${count(found.entries.length, found.next !== null)}: ${what} ${where}`} />)}
    </section>
  );
}

/** The user's latest uploads. */
export function RecentPage(props: { session: Session }) {
  const { found, error, busy, more } = usePages('/api/recent?limit=50');
  return (
    <section class="page recent" aria-labelledby="page-title">
      <div class="page-head"><h1 id="page-title">Recent uploads</h1></div>
      <p class="hint">The files you uploaded, the latest first, wherever they are.</p>
      {error && <Notice kind="error">{error}</Notice>}
      {found === null && <p class="loading" role="status">Loading…</p>}
      {found && !error && (found.entries.length === 0
        ? <p class="card hint">You have not uploaded anything yet.</p>
        : <FoundTable found={found} home={props.session.home} busy={busy} onMore={() => void more()} caption="Your recent uploads"
            status={`${found.entries.length.toLocaleString('en-US')} ${found.entries.length === 1 ? 'upload' : 'uploads'}${found.next ? ' shown' : ''}, the latest first`} />)}
    </section>
  );
}
