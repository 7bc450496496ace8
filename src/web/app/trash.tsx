/**
 * The trash in the web app: "Move to trash" (`POST /api/trash`) with a toast that undoes it
 * (restores the entry where it was), and the Trash page, which lists what is in the trash
 * (`GET /api/trash`, paged) with where each stood, when it was trashed and its size, restores an
 * entry (under another name when its place is taken: a restore never replaces anything), and
 * empties the trash after asking (`DELETE /api/trash`). Pages that list entities reload when an
 * entity is trashed or restored here (`onTrashChange`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, baseName, describeError, parentOf, request } from './api.ts';
import { humanSize, shortDate } from './format.ts';
import { browseHref, itemHref } from './router.ts';
import type { Session } from './types.ts';
import { Dialog, Field, FileIcon, FolderIcon, Notice, whereName } from './ui.tsx';

/** An entry of `GET /api/trash`, as far as the app uses it. */
export interface TrashEntry {
  id: string;
  path: string;
  name: string;
  kind: 'dataobject' | 'collection';
  size: number;
  PID: string | null;
  trashed_at: string;
  trashed_by: string;
  reason: string | null;
  purge_after: string | null;
}

/** What a restore answers: where the entity now is. */
interface Restored { id: string; path: string; kind: 'dataobject' | 'collection' }

const changeListeners = new Set<() => void>();

/** Calls `listener` whenever an entity is trashed or restored from the app; returns the unsubscribe. */
export function onTrashChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => { changeListeners.delete(listener); };
}

function changed(): void {
  for (const l of changeListeners) l();
}

/** What the toast says: trashed entities (with one Undo for all), or the outcome of the undo. */
type Toast =
  | { kind: 'trashed'; entries: TrashEntry[] }
  | { kind: 'restored'; name: string; path: string; collection: boolean; count: number }
  | { kind: 'failed'; text: string };

let toast: Toast | null = null;
const toastListeners = new Set<() => void>();

function showToast(next: Toast | null): void {
  toast = next;
  for (const l of toastListeners) l();
}

/**
 * Moves the entity at `path` to the trash and shows the toast that undoes it. Rejects with
 * `ApiError` (the entity stays where it is).
 */
export async function moveToTrash(path: string): Promise<TrashEntry> {
  const entry = await api<TrashEntry>('POST', '/api/trash', { json: { path } });
  showToast({ kind: 'trashed', entries: [entry] });
  changed();
  return entry;
}

/**
 * Moves each entity of `paths` to the trash, one after another, and shows one toast whose Undo
 * restores all that went; resolves with what went and what could not (with the API's reason).
 */
export async function moveAllToTrash(paths: readonly string[]): Promise<{ trashed: TrashEntry[]; failed: { name: string; why: string }[] }> {
  const trashed: TrashEntry[] = [];
  const failed: { name: string; why: string }[] = [];
  for (const path of paths) {
    try {
      trashed.push(await api<TrashEntry>('POST', '/api/trash', { json: { path } }));
    } catch (err) {
      failed.push({ name: baseName(path), why: describeError(err) });
    }
  }
  if (trashed.length > 0) {
    showToast({ kind: 'trashed', entries: trashed });
    changed();
  }
  return { trashed, failed };
}

/** `name (2).ext`: a name beside `name` for a restore whose place is taken. */
export function anotherName(name: string, n = 2): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

/** Restores `entry` (as `newname` when given). Rejects with `ApiError`: 409 when its place is taken. */
async function restore(entry: TrashEntry, newname?: string): Promise<Restored> {
  const restored = await api<Restored>('POST', `/api/trash/${encodeURIComponent(entry.id)}/restore`, { json: newname ? { newname } : {} });
  // NOTE: restored from the Trash page, the toast's Undo would have nothing left to undo.
  if (toast?.kind === 'trashed' && toast.entries.some((e) => e.id === entry.id)) showToast(null);
  changed();
  return restored;
}

/** How long the toast stays, unless the pointer or the focus is on it. */
const TOAST_MS = 12_000;

/**
 * The toast at the bottom of the window after "Move to trash": the entity's name and Undo,
 * which puts it back where it was. It goes after a while, on Dismiss, or on Escape while it has
 * the focus; it stays while the pointer or the focus is on it.
 */
export function UndoToast() {
  const [, setTick] = useState(0);
  const [busy, setBusy] = useState(false);
  const [held, setHeld] = useState(false);
  const undo = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    toastListeners.add(update);
    return () => { toastListeners.delete(update); };
  }, []);
  const current = toast;
  useEffect(() => {
    if (!current || held) return;
    const timer = window.setTimeout(() => { if (toast === current) showToast(null); }, TOAST_MS);
    return () => clearTimeout(timer);
  }, [current, held]);
  useEffect(() => {
    // NOTE: the row or page that had the focus is gone with the entity: the focus goes to Undo
    // rather than to the top of the document; where it still is somewhere, it stays there.
    if (current?.kind === 'trashed' && (document.activeElement === document.body || document.activeElement === null)) undo.current?.focus();
  }, [current]);
  if (!current) return <div class="toast-slot" role="status" aria-live="polite" />;
  const doUndo = async (entries: TrashEntry[]) => {
    setBusy(true);
    let last: Restored | null = null;
    const failed: string[] = [];
    // NOTE: each restore clears the toast that names it; the outcome of all is shown after.
    for (const entry of entries) {
      try {
        last = await restore(entry);
      } catch (err) {
        failed.push(err instanceof ApiError && err.status === 409
          ? `${entry.name} cannot go back: something else now has its name. Restore it from the Trash under another name.`
          : `${entry.name}: ${describeError(err)}`);
      }
    }
    setBusy(false);
    const back = entries.length - failed.length;
    if (failed.length > 0) showToast({ kind: 'failed', text: `${back > 0 ? `${back} restored; ` : ''}${failed.join(' ')}` });
    else if (last) showToast({ kind: 'restored', name: baseName(last.path), path: last.path, collection: last.kind === 'collection', count: back });
  };
  return (
    <div
      class={`toast-slot${current.kind === 'failed' ? ' trouble' : ''}`} role="status" aria-live="polite"
      onMouseEnter={() => setHeld(true)} onMouseLeave={() => setHeld(false)}
      onFocusIn={() => setHeld(true)} onFocusOut={(e) => { if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setHeld(false); }}
      onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); showToast(null); } }}
    >
      <div class="toast">
        {current.kind === 'trashed' && <>
          <p class="toast-text">
            {current.entries.length === 1 ? <strong class="break">{current.entries[0]!.name}</strong> : <strong>{current.entries.length} items</strong>} moved to the <a href="#/trash">trash</a>.
          </p>
          <button type="button" class="small toast-undo" ref={undo} disabled={busy} onClick={() => void doUndo(current.entries)}>Undo</button>
        </>}
        {current.kind === 'restored' && (current.count === 1
          ? <p class="toast-text">Restored <a class="break" href={current.collection ? browseHref(current.path) : itemHref(current.path)}>{current.name}</a>.</p>
          : <p class="toast-text">Restored {current.count} items to <a class="break" href={browseHref(parentOf(current.path))}>{baseName(parentOf(current.path))}</a>.</p>)}
        {current.kind === 'failed' && <p class="toast-text">{current.text} <a href="#/trash">Open the trash</a></p>}
        <button type="button" class="link toast-close" onClick={() => showToast(null)} aria-label="Dismiss the message">✕</button>
      </div>
    </div>
  );
}

/** Where an entry stood, in words: "My files" for the home, else where its parent lies. */
function placeOf(entry: TrashEntry, home: string): { text: string; href: string } {
  const parent = parentOf(entry.path);
  return { text: whereName(parent, home), href: browseHref(parent) };
}

const PAGE = 100;

/** Restore under another name: the original place is taken. */
function RestoreAsDialog(props: { entry: TrashEntry; home: string; onClose: () => void; onRestored: (r: Restored) => void }) {
  const { entry } = props;
  const [name, setName] = useState(anotherName(entry.name));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      props.onRestored(await restore(entry, name.trim()));
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? `${name.trim()} is taken too: choose another name.` : describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Restore ${entry.name} under another name`} onClose={props.onClose} describedBy="restore-as-text">
      <form onSubmit={submit}>
        <p id="restore-as-text">
          Something named <strong class="break">{entry.name}</strong> is now in {placeOf(entry, props.home).text}. A restore never replaces it:
          give this one another name there.
        </p>
        {error && <Notice kind="error">{error}</Notice>}
        <Field id="restore-name" label="Name" value={name} onInput={setName} required autoFocus />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !name.trim()}>Restore</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}

/** Empty the trash, after saying what it means. */
function EmptyDialog(props: { count: string; onClose: () => void; onEmptied: (purged: number) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const go = async () => {
    setBusy(true);
    setError('');
    try {
      props.onEmptied((await api<{ purged: number }>('DELETE', '/api/trash')).purged);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Empty the trash?" onClose={props.onClose} describedBy="empty-text">
      <p id="empty-text">
        {props.count} will be deleted for good: this cannot be undone. A PID of deleted data keeps working, on a page that says the data were withdrawn.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="actions">
        <button type="button" class="primary danger" onClick={() => void go()} disabled={busy}>Delete for good</button>
        <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
      </div>
    </Dialog>
  );
}

const items = (n: number) => `${n.toLocaleString('en-US')} ${n === 1 ? 'item' : 'items'}`;

/** The Trash page. */
export function TrashPage(props: { session: Session }) {
  const { home } = props.session;
  const [entries, setEntries] = useState<TrashEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [done, setDone] = useState<{ name: string; path: string; collection: boolean } | null>(null);
  const [emptied, setEmptied] = useState<number | null>(null);
  const [restoringAs, setRestoringAs] = useState<TrashEntry | null>(null);
  const [emptying, setEmptying] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [count, setCount] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);

  const load = async (after: string | null, signal?: AbortSignal) => {
    const res = await request('GET', `/api/trash?limit=${PAGE}${after ? `&after=${encodeURIComponent(after)}` : ''}`, { signal });
    const body = (await res.json()) as { Meta: { continuation_token?: string | null }; Response: { data: TrashEntry[] } };
    return { page: body.Response.data, token: body.Meta.continuation_token ?? null };
  };
  useEffect(() => {
    const abort = new AbortController();
    load(null, abort.signal).then(({ page, token }) => { setEntries(page); setNext(token); }, (err: unknown) => {
      if ((err as Error).name === 'AbortError') return;
      setEntries([]);
      setError(describeError(err));
    });
    return () => abort.abort();
  }, [count]);
  useEffect(() => onTrashChange(() => setCount((n) => n + 1)), []);

  const more = async () => {
    try {
      const { page, token } = await load(next);
      setEntries((e) => [...(e ?? []), ...page.filter((p) => !e?.some((x) => x.id === p.id))]);
      setNext(token);
    } catch (err) {
      setError(describeError(err));
    }
  };
  const restored = (r: Restored) => {
    setRestoringAs(null);
    setEmptied(null);
    setDone({ name: baseName(r.path), path: r.path, collection: r.kind === 'collection' });
    heading.current?.focus();
  };
  const restoreOne = async (entry: TrashEntry) => {
    setBusy(entry.id);
    setError('');
    try {
      restored(await restore(entry));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && /taken|exists/i.test(err.message)) setRestoringAs(entry);
      else setError(describeError(err));
    } finally {
      setBusy(null);
    }
  };
  const total = entries ? entries.reduce((sum, e) => sum + e.size, 0) : 0;
  return (
    <section class="page trash" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" ref={heading} tabIndex={-1}>Trash</h1>
        <div class="toolbar">
          <button type="button" class="secondary danger" disabled={!entries || entries.length === 0} onClick={() => setEmptying(true)}>Empty the trash</button>
        </div>
      </div>
      <p class="hint">What you moved to the trash, newest first. Restore puts it back where it was; the trash deletes everything in it for good after a while (each row says when).</p>
      {error && <Notice kind="error" onClose={() => setError('')}>{error}</Notice>}
      {done && (
        <Notice kind="success" onClose={() => setDone(null)}>
          Restored <a class="break" href={done.collection ? browseHref(done.path) : itemHref(done.path)}>{done.name}</a> to <a class="break" href={browseHref(parentOf(done.path))}>{parentOf(done.path) === home ? 'My files' : baseName(parentOf(done.path))}</a>.
        </Notice>
      )}
      {emptied !== null && <Notice kind="success" onClose={() => setEmptied(null)}>Emptied the trash: {items(emptied)} deleted for good.</Notice>}
      {entries === null && <p class="loading" role="status">Loading…</p>}
      {entries && entries.length === 0 && !error && <p class="card hint">The trash is empty.</p>}
      {entries && entries.length > 0 && (
        <div class="entries trash-list">
          <div class="filter"><span class="count" role="status">{items(entries.length)}{next ? ' shown' : ''}, {humanSize(total)}</span></div>
          <div class="table-scroll">
            <table>
              <caption class="visually-hidden">In the trash</caption>
              <thead>
                <tr>
                  <th scope="col" class="col-name">Name</th>
                  <th scope="col" class="col-trashed">Trashed</th>
                  <th scope="col" class="col-size">Size</th>
                  <th scope="col" class="col-actions"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => {
                  const place = placeOf(e, home);
                  const when = `${shortDate(e.trashed_at)}${e.trashed_by !== props.session.user ? ` by ${e.trashed_by}` : ''}`;
                  return (
                    <tr key={e.id}>
                      <td class="col-name">
                        <span class="entry-name" title={e.name}>
                          {e.kind === 'collection' ? <FolderIcon /> : <FileIcon />}<span>{e.name}</span>
                          {e.kind === 'collection' && <span class="visually-hidden"> (folder)</span>}
                        </span>
                        <span class="entry-path" title={e.path}>from <a href={place.href}>{place.text}</a></span>
                        <span class="entry-path show-phone">{when} · {humanSize(e.size)}</span>
                      </td>
                      <td class="col-trashed">
                        {when}
                        {e.purge_after && <span class="purge-date">deleted for good on {shortDate(e.purge_after).slice(0, 10)}</span>}
                      </td>
                      <td class="col-size">{humanSize(e.size)}</td>
                      <td class="col-actions">
                        <div class="row-actions">
                          <button type="button" class="small secondary" disabled={busy === e.id} onClick={() => void restoreOne(e)} aria-label={`Restore ${e.name}`}>Restore</button>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {next && <div class="filter"><button type="button" class="secondary small" onClick={() => void more()}>Show more</button></div>}
        </div>
      )}
      {restoringAs && <RestoreAsDialog entry={restoringAs} home={home} onClose={() => setRestoringAs(null)} onRestored={restored} />}
      {emptying && entries && (
        <EmptyDialog
          count={next ? 'Everything in your trash' : `The ${items(entries.length)} in your trash (${humanSize(total)})`}
          onClose={() => setEmptying(false)}
          onEmptied={(purged) => { if (toast?.kind === 'trashed') showToast(null); setEmptying(false); setDone(null); setEmptied(purged); setEntries([]); setNext(null); heading.current?.focus(); }}
        />
      )}
    </section>
  );
}
