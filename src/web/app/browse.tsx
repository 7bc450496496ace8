/**
 * Browsing: a collection's entries in a table sortable by name, size, modified and owner,
 * filtered by name, rendered a window at a time so that 100,000 entries scroll as smoothly as
 * ten; breadcrumbs; creating collections; uploading files and folders by picker or by drag and
 * drop, asking "replace or skip" for targets that exist; moving and copying from a row's menu,
 * and moving by dragging a row onto a collection's row. Also the "Shared with me" list.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type SharedWithMe, canWrite, sharedWithMe, useAccess } from './access.ts';
import { ApiError, api, baseName, describeError, join, nameTaken, parentOf, registeredUrl, request } from './api.ts';
import { humanSize, shortDate } from './format.ts';
import { browseHref, itemHref } from './router.ts';
import { type Entry, type RecordFields, type Session, entryOf } from './types.ts';
import { type Moved, type Transfer, BulkMoveCopyDialog, MoveCopyDialog, MovedNotice, bulkSummary } from './move-copy.tsx';
import { ArchiveFrame, type RowSelection, SelectionBar, downloadArchive, useSelectionRules } from './selection.tsx';
import { moveAllToTrash, moveToTrash, onTrashChange } from './trash.tsx';
import { Breadcrumbs, Dialog, DownloadIcon, EntryMarks, Field, FileIcon, FolderIcon, InfoIcon, MoreIcon, NameField, Notice, homeUserOf, nameError, placeName, withQuery } from './ui.tsx';
import { type ConflictChoice, type Picked, type Planned, droppedFiles, freeName, pickedFiles, uploads } from './uploads.ts';

type SortKey = 'name' | 'size' | 'modified' | 'owner';

const ROW_HEIGHT = 48;
/** Below this many rows every row is rendered; above, only those in view (and a margin). */
const WINDOW_FROM = 200;
const OVERSCAN = 20;

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function compare(a: Entry, b: Entry, key: SortKey): number {
  switch (key) {
    case 'size': return (a.size ?? -1) - (b.size ?? -1) || collator.compare(a.name, b.name);
    case 'modified': return (a.modified ?? '').localeCompare(b.modified ?? '') || collator.compare(a.name, b.name);
    case 'owner': return collator.compare(a.owner ?? '', b.owner ?? '') || collator.compare(a.name, b.name);
    default: return collator.compare(a.name, b.name);
  }
}

const COLUMNS: { key: SortKey; label: string; class: string }[] = [
  { key: 'name', label: 'Name', class: 'col-name' },
  { key: 'size', label: 'Size', class: 'col-size' },
  { key: 'modified', label: 'Modified', class: 'col-modified' },
  { key: 'owner', label: 'Owner', class: 'col-owner' },
];

/**
 * What a row's menu offers beyond downloads: moving (with write access here), copying, and
 * moving to the trash (with `onTrash`); with `onDropMove`, rows dragged onto a collection's row
 * are moved into it.
 */
interface RowTransfers {
  move: boolean;
  onTransfer: (entry: Entry, mode: Transfer) => void;
  onDropMove?: (entry: Entry, into: string) => void;
  /** "Move to trash" (for owners), when given. */
  onTrash?: (entry: Entry) => void;
}

/** The type of a row's drag: only this page's rows carry it (files dragged in from outside do not). */
const ENTRY_DRAG = 'application/x-lading-entry';

/** The row being dragged, while one is. */
let dragged: Entry | null = null;

/** Whether `entry` may be dropped into the collection `into`: not onto itself, below itself, or where it is. */
function droppable(entry: Entry, into: string): boolean {
  return entry.path !== into && !into.startsWith(`${entry.path}/`) && parentOf(entry.path) !== into;
}

/**
 * The entries of a listing as a table: collections first when sorted by name, then as sorted;
 * a window of rows when there are many. With `transfers`, each row's menu offers "Move to…"
 * and "Copy to…".
 */
export function EntryTable(props: { entries: Entry[]; caption: string; empty: string; transfers?: RowTransfers; selection?: RowSelection }) {
  const [sort, setSort] = useState<{ key: SortKey; ascending: boolean }>({ key: 'name', ascending: true });
  const [filter, setFilter] = useState('');
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(600);
  const scroller = useRef<HTMLDivElement>(null);

  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const kept = needle ? props.entries.filter((e) => e.name.toLowerCase().includes(needle)) : [...props.entries];
    kept.sort((a, b) => {
      if (sort.key === 'name' && a.kind !== b.kind) return a.kind === 'collection' ? -1 : 1;
      const c = compare(a, b, sort.key);
      return sort.ascending ? c : -c;
    });
    return kept;
  }, [props.entries, sort, filter]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setViewport(el.clientHeight || 600);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const windowed = shown.length > WINDOW_FROM;
  const first = windowed ? Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN) : 0;
  const last = windowed ? Math.min(shown.length, Math.ceil((scrollTop + viewport) / ROW_HEIGHT) + OVERSCAN) : shown.length;
  const rows = shown.slice(first, last);

  const sortBy = (key: SortKey) => setSort((s) => ({ key, ascending: s.key === key ? !s.ascending : true }));

  // NOTE: a row that is rendered takes the focus at once, within the key's own event: a key
  // pressed again before the next frame (a held Shift+Arrow, a fast typist) starts from the row
  // the last one moved to. A row out of the window is not rendered: the window is scrolled to
  // it first, and it takes the focus once it is there.
  const [focusing, setFocusing] = useState<number | null>(null);
  const boxOfRow = (index: number) => scroller.current?.querySelector<HTMLInputElement>(`tr[data-index="${index}"] input.select`);
  const focusRow = (index: number) => {
    const box = boxOfRow(index);
    if (box) box.focus();
    else setFocusing(index);
  };
  useEffect(() => {
    if (focusing === null) return;
    const box = boxOfRow(focusing);
    if (box) { box.focus(); setFocusing(null); }
    else if (scroller.current) scroller.current.scrollTop = Math.max(0, focusing * ROW_HEIGHT - viewport / 2);
  }, [focusing, first, last]);
  const { selection } = props;
  const { pick, keys } = useSelectionRules(shown, selection, focusRow);
  const picked = selection ? shown.filter((e) => selection.selected.has(e.path)).length : 0;
  const columns = selection ? 6 : 5;

  return (
    <div class="entries">
      <div class="filter">
        <label for="filter">Filter by name</label>
        <input id="filter" type="search" value={filter} onInput={(e) => { setFilter(e.currentTarget.value); setScrollTop(0); if (scroller.current) scroller.current.scrollTop = 0; }} />
        <span class="count" role="status" aria-live="polite">
          {filter ? `${shown.length.toLocaleString('en-US')} of ${props.entries.length.toLocaleString('en-US')} entries` : `${props.entries.length.toLocaleString('en-US')} ${props.entries.length === 1 ? 'entry' : 'entries'}`}
        </span>
      </div>
      <div class={`table-scroll${windowed ? ' windowed' : ''}`} ref={scroller} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} onKeyDown={keys} tabIndex={-1}>
        <table aria-rowcount={shown.length + 1}>
          <caption class="visually-hidden">{props.caption}</caption>
          <thead>
            <tr>
              {selection && (
                <th scope="col" class="col-select">
                  <input
                    type="checkbox" class="select" aria-label="Select all" checked={shown.length > 0 && picked === shown.length}
                    ref={(el) => { if (el) el.indeterminate = picked > 0 && picked < shown.length; }}
                    onClick={() => selection.set(picked === shown.length ? new Set() : new Set(shown.map((e) => e.path)))}
                  />
                </th>
              )}
              {COLUMNS.map((c) => (
                <th key={c.key} class={c.class} scope="col" aria-sort={sort.key === c.key ? (sort.ascending ? 'ascending' : 'descending') : 'none'}>
                  <button type="button" class="sort" onClick={() => sortBy(c.key)}>
                    {c.label}<span aria-hidden="true" class="arrow">{sort.key === c.key ? (sort.ascending ? '▲' : '▼') : ''}</span>
                  </button>
                </th>
              ))}
              <th scope="col" class="col-actions"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {first > 0 && <tr aria-hidden="true" class="spacer" style={{ height: `${first * ROW_HEIGHT}px` }}><td colSpan={columns} /></tr>}
            {rows.map((e, i) => (
              <EntryRow
                key={e.path} entry={e} index={first + i + 2} transfers={props.transfers}
                selected={selection ? { on: selection.selected.has(e.path), pick: (extend) => pick(first + i, extend), at: first + i } : undefined}
              />
            ))}
            {last < shown.length && <tr aria-hidden="true" class="spacer" style={{ height: `${(shown.length - last) * ROW_HEIGHT}px` }}><td colSpan={columns} /></tr>}
          </tbody>
        </table>
        {shown.length === 0 && <p class="empty">{filter ? 'No entry matches the filter.' : props.empty}</p>}
      </div>
    </div>
  );
}

/** A row's box: whether it is picked, what a click on it does (`extend` with Shift), and its index in the shown rows. */
interface RowPick { on: boolean; pick: (extend: boolean) => void; at: number }

function EntryRow(props: { entry: Entry; index: number; transfers: RowTransfers | undefined; selected?: RowPick | undefined }) {
  const e = props.entry;
  const collection = e.kind === 'collection';
  const [over, setOver] = useState(false);
  const t = props.transfers;
  const drags = t?.move === true && t.onDropMove !== undefined;
  const target = drags && collection;
  // NOTE: dragging is a shortcut for the mouse; "Move to…" in the row's menu does the same from the keyboard.
  return (
    <tr
      aria-rowindex={props.index}
      data-index={props.selected?.at}
      class={[over ? 'drop-target' : '', props.selected?.on ? 'selected' : ''].join(' ').trim() || undefined}
      draggable={drags ? true : undefined}
      onDragStart={drags ? (ev) => { dragged = e; ev.dataTransfer?.setData(ENTRY_DRAG, e.path); if (ev.dataTransfer) ev.dataTransfer.effectAllowed = 'move'; } : undefined}
      onDragEnd={drags ? () => { dragged = null; } : undefined}
      onDragOver={target ? (ev) => {
        if (!dragged || !ev.dataTransfer?.types.includes(ENTRY_DRAG) || !droppable(dragged, e.path)) return;
        ev.preventDefault();
        ev.stopPropagation();
        ev.dataTransfer.dropEffect = 'move';
        setOver(true);
      } : undefined}
      onDragLeave={target ? (ev) => { if (!ev.currentTarget.contains(ev.relatedTarget as Node | null)) setOver(false); } : undefined}
      onDrop={target ? (ev) => {
        setOver(false);
        const moving = dragged;
        if (!moving || !droppable(moving, e.path)) return;
        ev.preventDefault();
        ev.stopPropagation();
        dragged = null;
        t.onDropMove?.(moving, e.path);
      } : undefined}
    >
      {props.selected && (
        <td class="col-select">
          <input type="checkbox" class="select" checked={props.selected.on} aria-label={`Select ${e.name}`} onClick={(ev) => props.selected!.pick(ev.shiftKey)} />
        </td>
      )}
      <td class="col-name">
        <span class="name-cell">
          <a href={collection ? browseHref(e.path) : itemHref(e.path)} class="entry-name" title={e.name}>
            {collection ? <FolderIcon /> : <FileIcon />}<span>{e.name}</span>
            {collection && <span class="visually-hidden"> (folder)</span>}
          </a>
          {e.marks && <EntryMarks marks={e.marks} />}
        </span>
      </td>
      <td class="col-size">{e.size === null ? '' : humanSize(e.size)}</td>
      <td class="col-modified">{shortDate(e.modified)}</td>
      <td class="col-owner" title={e.owner ?? undefined}>{e.owner ?? ''}</td>
      <td class="col-actions"><RowActions entry={e} transfers={props.transfers} /></td>
    </tr>
  );
}

const PAGE = 5000;

/**
 * Reads a collection's entries page by page (`max_keys`, `continuation_token`), handing each
 * page's entries so far to `onPage`, so a huge collection shows its first entries at once;
 * with `marks`, each with how far it is open to others (for an owner).
 */
export async function listEntries(path: string, onPage: (entries: Entry[]) => void, signal?: AbortSignal, marks = false): Promise<Entry[]> {
  const all: Entry[] = [];
  let token: string | null = null;
  do {
    const url = `${registeredUrl(path)}/?max_keys=${PAGE}${marks ? '&marks=true' : ''}${token ? `&continuation_token=${encodeURIComponent(token)}` : ''}`;
    const res = await request('GET', url, { signal });
    const body = (await res.json()) as { Meta: { continuation_token?: string | null }; Response: { data: Record<string, RecordFields>[] } };
    for (const record of body.Response.data) all.push(entryOf(record));
    token = body.Meta.continuation_token ?? null;
    onPage([...all]);
  } while (token);
  return all;
}

/** Asks "replace or skip" for each conflict, one at a time, with "for all the others". */
function ConflictDialog(props: { conflicts: Planned[]; onDone: (choices: Map<string, ConflictChoice>) => void; onCancel: () => void }) {
  const [at, setAt] = useState(0);
  const [forAll, setForAll] = useState(false);
  const [choices] = useState(() => new Map<string, ConflictChoice>());
  const current = props.conflicts[at]!;
  const left = props.conflicts.length - at - 1;
  const decide = (choice: ConflictChoice) => {
    const targets = forAll ? props.conflicts.slice(at) : [current];
    for (const t of targets) choices.set(t.target, choice);
    if (forAll || at + 1 >= props.conflicts.length) props.onDone(choices);
    else setAt(at + 1);
  };
  return (
    <Dialog title="Replace or skip?" onClose={props.onCancel} describedBy="conflict-text">
      <p id="conflict-text"><strong class="break">{current.relative}</strong> already exists here. Replace it with the file you chose, skip it, or keep both (the new one as <strong class="break">{freeName(baseName(current.target), current.siblings)}</strong>)?</p>
      {left > 0 && (
        <label class="check">
          <input type="checkbox" checked={forAll} onChange={(e) => setForAll(e.currentTarget.checked)} />
          Do the same for the {left} other {left === 1 ? 'conflict' : 'conflicts'}
        </label>
      )}
      <div class="actions">
        <button type="button" class="primary" onClick={() => decide('replace')}>Replace</button>
        <button type="button" class="secondary" onClick={() => decide('skip')}>Skip</button>
        <button type="button" class="secondary" onClick={() => decide('both')}>Keep both</button>
        <button type="button" class="link" onClick={props.onCancel}>Cancel the upload</button>
      </div>
    </Dialog>
  );
}

/**
 * A row dropped where its name is taken: a data object may replace the one there (`force`); a
 * collection never replaces anything, so the user is told and keeps both.
 */
function DropConflictDialog(props: { entry: Entry; into: string; onClose: () => void; onReplace: () => void }) {
  const { entry } = props;
  const where = props.into.split('/').at(-1) ?? props.into;
  return (
    <Dialog title={`${entry.name} is already there`} onClose={props.onClose} describedBy="drop-conflict-text">
      {entry.kind === 'dataobject' ? (
        <>
          <p id="drop-conflict-text"><strong class="break">{entry.name}</strong> already exists in <strong class="break">{where}</strong>. Replace it with the file you moved?</p>
          <div class="actions">
            <button type="button" class="primary" onClick={props.onReplace}>Replace</button>
            <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
          </div>
        </>
      ) : (
        <>
          <p id="drop-conflict-text">A folder or file named <strong class="break">{entry.name}</strong> already exists in <strong class="break">{where}</strong>. Rename one of them, or use Move to… to give it a new name.</p>
          <div class="actions"><button type="button" class="primary" onClick={props.onClose}>OK</button></div>
        </>
      )}
    </Dialog>
  );
}

function NewFolderDialog(props: { parent: string; onClose: (created: boolean) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (nameError(name)) return;
    setBusy(true);
    setError('');
    try {
      await api('POST', '/api/registered', { json: { path: join(props.parent, name.trim()) } });
      props.onClose(true);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? nameTaken(name.trim()) : describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title="New folder" onClose={() => props.onClose(false)}>
      <form onSubmit={submit}>
        {error && <Notice kind="error">{error}</Notice>}
        <NameField id="new-folder" label="Name" value={name} onInput={setName} autoFocus />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !name.trim() || nameError(name) !== ''}>Create</button>
          <button type="button" class="secondary" onClick={() => props.onClose(false)}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * The last listing seen of each collection (of the signed-in user, the latest few), shown at
 * once when the user comes back to one: while it is asked for again, and while the server
 * cannot be reached.
 */
const lastSeen = new Map<string, Entry[]>();
const QUEUED = /queued for upload/;
const LAST_SEEN_MAX = 32;

function remember(key: string, entries: Entry[]): void {
  lastSeen.delete(key);
  lastSeen.set(key, entries);
  if (lastSeen.size > LAST_SEEN_MAX) lastSeen.delete(lastSeen.keys().next().value!);
}

/** A collection's page. */
export function BrowsePage(props: { session: Session; path: string }) {
  const { path } = props;
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [creating, setCreating] = useState(false);
  const [conflicts, setConflicts] = useState<{ planned: Planned[]; conflicts: Planned[] } | null>(null);
  const [dragging, setDragging] = useState(false);
  const [transfer, setTransfer] = useState<{ entry: Entry; mode: Transfer } | null>(null);
  const [moved, setMoved] = useState<Moved | null>(null);
  const [dropConflict, setDropConflict] = useState<{ entry: Entry; into: string } | null>(null);
  const [reloadCount, setReloadCount] = useState(0);
  const [reconnecting, setReconnecting] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(() => new Set());
  const [bulk, setBulk] = useState<Transfer | null>(null);
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const reload = useCallback(() => setReloadCount((n) => n + 1), []);
  const access = useAccess(props.session, path);
  // NOTE: until the access is known, and with read access only, nothing is offered that writes.
  const writable = access !== undefined && canWrite(access.level);

  // NOTE: while the server cannot be reached, the last listing stays, "Reconnecting…" says why
  // nothing changes, and the listing is asked for again by itself: after 1, 2, 4, 8 and then
  // every 15 s, and at once when the browser says it is online again or the tab comes back.
  useEffect(() => {
    const abort = new AbortController();
    let attempt = 0;
    let timer = 0;
    const key = `${props.session.home}\n${path}`;
    const load = () => {
      clearTimeout(timer);
      // NOTE: a listing asked for again, or one seen before, is replaced only once it is whole.
      const whole = attempt > 0 || lastSeen.has(key);
      listEntries(path, whole ? () => {} : setEntries, abort.signal, true).then((all) => {
        remember(key, all);
        if (whole) setEntries(all);
        attempt = 0;
        setReconnecting(false);
      }, (err: unknown) => {
        if ((err as Error).name === 'AbortError') return;
        if (err instanceof ApiError && err.status === 0) {
          setReconnecting(true);
          timer = window.setTimeout(load, Math.min(15, 2 ** attempt++) * 1000);
          return;
        }
        setReconnecting(false);
        setEntries([]);
        setError(describeError(err));
      });
    };
    const now = () => { if (attempt > 0) load(); };
    const visible = () => { if (document.visibilityState === 'visible') now(); };
    setError('');
    load();
    addEventListener('online', now);
    document.addEventListener('visibilitychange', visible);
    return () => {
      abort.abort();
      clearTimeout(timer);
      removeEventListener('online', now);
      document.removeEventListener('visibilitychange', visible);
    };
  }, [path, reloadCount]);

  useEffect(() => { setEntries(lastSeen.get(`${props.session.home}\n${path}`) ?? null); setNotice(''); setMoved(null); setSelected(new Set()); setOutcome(null); }, [path]);
  // NOTE: a trash or an undo (from the toast, wherever the user is) changes what is listed here.
  useEffect(() => onTrashChange(reload), [reload]);

  // NOTE: the listing follows the uploads into this collection as each finishes.
  useEffect(() => {
    let seen = uploads.items.filter((i) => i.state === 'done').length;
    let wasBusy = false;
    let timer = 0;
    return uploads.subscribe(() => {
      // NOTE: "n files queued" says what is under way: it goes once the uploads end.
      const busy = uploads.items.some((i) => i.state === 'waiting' || i.state === 'uploading');
      if (wasBusy && !busy) setNotice((n) => (QUEUED.test(n) ? '' : n));
      wasBusy = busy;
      const done = uploads.items.filter((i) => i.state === 'done');
      if (done.length === seen) return;
      seen = done.length;
      clearTimeout(timer);
      timer = window.setTimeout(reload, 400);
    });
  }, [reload]);

  const start = async (picked: Picked[]) => {
    if (picked.length === 0) return;
    setError('');
    try {
      const planned = await uploads.plan(picked, path);
      const clashing = planned.filter((p) => p.exists);
      if (clashing.length > 0) setConflicts({ planned, conflicts: clashing });
      else await queue(planned, new Map());
    } catch (err) {
      setError(describeError(err));
    }
  };
  const queue = async (planned: Planned[], choices: Map<string, ConflictChoice>) => {
    try {
      await uploads.enqueue(planned, path, (t) => choices.get(t) ?? 'skip');
      const sent = planned.filter((p) => !p.exists || choices.get(p.target) !== 'skip').length;
      setNotice(`${sent} ${sent === 1 ? 'file' : 'files'} queued for upload${planned.length > sent ? `, ${planned.length - sent} skipped` : ''}. Progress is shown below and under Transfers.`);
      reload();
    } catch (err) {
      setError(describeError(err));
    }
  };

  /** A row dropped onto a collection's row: moved there; a name taken there is asked about. */
  const dropMove = async (entry: Entry, into: string, force = false) => {
    setError('');
    try {
      await api('PATCH', registeredUrl(entry.path), { json: { destination: into, ...(force ? { force: true } : {}) } });
      setNotice('');
      setMoved({ mode: 'move', name: entry.name, target: join(into, entry.name), into });
      reload();
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && !force) setDropConflict({ entry, into });
      else setError(describeError(err));
    }
  };

  const name = path.split('/').filter(Boolean).at(-1) ?? path;
  // NOTE: what is picked and still listed (a row moved away elsewhere leaves the selection).
  const picked = entries?.filter((e) => selected.has(e.path)) ?? [];
  const trashable = access !== undefined && (access.level === 'own' || access.level === null);
  const trashPicked = async () => {
    setError('');
    setMoved(null);
    const paths = picked.map((e) => e.path);
    // NOTE: the bar goes first, so the focus it had goes to the toast's Undo once it shows.
    setSelected(new Set());
    const { trashed, failed } = await moveAllToTrash(paths);
    setOutcome(failed.length > 0 ? bulkSummary('moved to the trash', { done: trashed.length, failed }) : null);
  };
  return (
    <section
      class={`page browse${dragging ? ' dragging' : ''}`}
      aria-labelledby="page-title"
      onDragOver={(e) => { if (!writable || e.dataTransfer?.types.includes(ENTRY_DRAG)) return; e.preventDefault(); setDragging(true); }}
      onDragLeave={(e) => { if (e.currentTarget === e.target) setDragging(false); }}
      onDrop={async (e) => { if (!writable || e.dataTransfer?.types.includes(ENTRY_DRAG)) return; e.preventDefault(); setDragging(false); if (e.dataTransfer) await start(await droppedFiles(e.dataTransfer)); }}
    >
      <Breadcrumbs path={path} href={browseHref} home={props.session.home} shared={access?.sharedRoot?.path} sharedBy={access?.sharedRoot ? homeUserOf(access.sharedRoot.path) : null} />
      <div class="page-head">
        <h1 id="page-title" class="break">{path === props.session.home ? 'My files' : name}</h1>
        <div class="toolbar">
          <a class="button secondary" href={itemHref(path)}>Details</a>
          {writable && <>
            <button type="button" class="secondary" onClick={() => setCreating(true)}>New folder</button>
            <label class="button secondary file-button">
              Upload files
              <input type="file" multiple class="visually-hidden" onChange={(e) => { const input = e.currentTarget; void start(pickedFiles(input)).finally(() => { input.value = ''; }); }} />
            </label>
            <label class="button primary file-button">
              Upload a folder
              <input type="file" multiple class="visually-hidden" {...{ webkitdirectory: true }} onChange={(e) => { const input = e.currentTarget; void start(pickedFiles(input)).finally(() => { input.value = ''; }); }} />
            </label>
          </>}
        </div>
      </div>
      {writable && <p class="hint drop-hint">Drop files or folders anywhere on this page to upload them here.</p>}
      {access?.level === 'read' && <p class="hint drop-hint">{access.sharedRoot?.owner ? `Shared with you by ${access.sharedRoot.owner}` : 'Shared with you'} to read and download.</p>}
      {reconnecting && <Notice kind="info"><strong>Reconnecting…</strong> The server cannot be reached{entries === null ? '' : ': this is the folder as it was last seen'}. It is tried again by itself.</Notice>}
      {error && <Notice kind="error" onClose={() => setError('')}>{error}</Notice>}
      {notice && <Notice kind="success" onClose={() => setNotice('')}>{notice}</Notice>}
      {moved && <MovedNotice moved={moved} home={props.session.home} itemLink={itemHref} onClose={() => setMoved(null)} />}
      {outcome && <Notice kind={outcome.kind} onClose={() => setOutcome(null)}>{outcome.text}</Notice>}
      {picked.length > 0 && (
        <SelectionBar
          count={picked.length}
          onClear={() => { setSelected(new Set()); document.querySelector<HTMLInputElement>('thead input.select')?.focus(); }}
          onZip={() => { setError(''); downloadArchive(picked.map((e) => e.path), name); }}
          onCopy={() => setBulk('copy')}
          {...(writable ? { onMove: () => setBulk('move') } : {})}
          {...(trashable ? { onTrash: () => void trashPicked() } : {})}
        />
      )}
      <ArchiveFrame onError={setError} />
      {entries === null
        ? !reconnecting && <p class="loading" role="status">Loading…</p>
        : <EntryTable
            selection={{ selected, set: setSelected }}
            entries={entries} caption={`Contents of ${path === props.session.home ? 'My files' : name}`} empty={writable ? 'This folder is empty. Upload files or create a folder.' : 'This folder is empty.'}
            transfers={{
              move: writable, onTransfer: (entry, mode) => setTransfer({ entry, mode }), onDropMove: (entry, into) => void dropMove(entry, into),
              // NOTE: trashing needs own; with write or read access only, it is not offered.
              ...(access !== undefined && (access.level === 'own' || access.level === null)
                ? { onTrash: (entry: Entry) => { setError(''); setMoved(null); moveToTrash(entry.path).catch((err: unknown) => setError(describeError(err))); } }
                : {}),
            }}
          />}
      {transfer && (
        <MoveCopyDialog
          entry={transfer.entry} mode={transfer.mode} start={path} home={props.session.home}
          onClose={() => setTransfer(null)}
          onDone={(done) => { setTransfer(null); setNotice(''); setMoved(done); reload(); }}
        />
      )}
      {bulk && (
        <BulkMoveCopyDialog
          entries={picked} mode={bulk} start={path} home={props.session.home}
          onClose={() => setBulk(null)}
          onDone={(done) => { setBulk(null); setNotice(''); setMoved(null); setSelected(new Set()); setOutcome(bulkSummary(bulk === 'move' ? 'moved' : 'copied', done)); reload(); }}
        />
      )}
      {dropConflict && (
        <DropConflictDialog
          entry={dropConflict.entry} into={dropConflict.into}
          onClose={() => setDropConflict(null)}
          onReplace={() => { const { entry, into } = dropConflict; setDropConflict(null); void dropMove(entry, into, true); }}
        />
      )}
      {creating && <NewFolderDialog parent={path} onClose={(created) => { setCreating(false); if (created) reload(); }} />}
      {conflicts && (
        <ConflictDialog
          conflicts={conflicts.conflicts}
          onCancel={() => setConflicts(null)}
          onDone={(replace) => { const planned = conflicts.planned; setConflicts(null); void queue(planned, replace); }}
        />
      )}
    </section>
  );
}

/** What others share with the user, with where each is, its owner and the user's access. */
function SharedTable(props: { entries: Entry[]; transfers: RowTransfers }) {
  return (
    <div class="entries shared">
      <div class="table-scroll">
        <table>
          <caption class="visually-hidden">Shared with me</caption>
          <thead>
            <tr>
              <th scope="col" class="col-name">Name</th>
              <th scope="col" class="col-owner">Owner</th>
              <th scope="col" class="col-level">Access</th>
              <th scope="col" class="col-actions"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {props.entries.map((e) => {
              const collection = e.kind === 'collection';
              return (
                <tr key={e.path}>
                  <td class="col-name">
                    <a href={collection ? browseHref(e.path) : itemHref(e.path)} class="entry-name" title={e.name}>
                      {collection ? <FolderIcon /> : <FileIcon />}<span>{e.name}</span>
                      {collection && <span class="visually-hidden"> (folder)</span>}
                    </a>
                    <span class="entry-path" title={placeName(parentOf(e.path))}>in {placeName(parentOf(e.path))}</span>
                  </td>
                  <td class="col-owner" title={e.owner ?? undefined}>{e.owner ?? ''}</td>
                  <td class="col-level">{e.access ?? ''}</td>
                  <td class="col-actions"><RowActions entry={e} transfers={props.transfers} /></td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** The entities outside the user's home that others gave them access to. */
export function SharedPage(props: { session: Session }) {
  const [shared, setShared] = useState<SharedWithMe | null>(null);
  const [error, setError] = useState('');
  const [transfer, setTransfer] = useState<{ entry: Entry; mode: Transfer } | null>(null);
  const [moved, setMoved] = useState<Moved | null>(null);
  useEffect(() => {
    sharedWithMe(true).then(setShared, (err: unknown) => {
      setShared({ entries: [], truncated: false });
      setError(err instanceof ApiError && err.status === 404 ? 'This server does not list what is shared with you.' : describeError(err));
    });
  }, []);
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head"><h1 id="page-title">Shared with me</h1></div>
      <p class="hint">Folders and files other users gave you, or one of your groups, access to.</p>
      {error && <Notice kind="error">{error}</Notice>}
      {shared === null && <p class="loading" role="status">Loading…</p>}
      {shared && shared.truncated && <Notice kind="info">More is shared with you than can be listed: these are the first {shared.entries.length.toLocaleString('en-US')} by path.</Notice>}
      {moved && <MovedNotice moved={moved} home={props.session.home} itemLink={itemHref} onClose={() => setMoved(null)} />}
      {shared && !error && (shared.entries.length === 0
        ? <p class="card hint">Nobody has shared anything with you yet.</p>
        // NOTE: what is shared sits in a collection the user may not write: it is copied, never moved, from here.
        : <SharedTable entries={shared.entries} transfers={{ move: false, onTransfer: (entry, mode) => setTransfer({ entry, mode }) }} />)}
      {transfer && (
        <MoveCopyDialog
          entry={transfer.entry} mode={transfer.mode} start={props.session.home} home={props.session.home}
          onClose={() => setTransfer(null)} onDone={(done) => { setTransfer(null); setMoved(done); }}
        />
      )}
    </section>
  );
}

/**
 * A row's actions: Download (data objects), Details, and a menu of the others (move, copy, a
 * collection as one download, and move to trash). On a phone Details of a data object goes (its name's link
 * opens them); the others show as icons whose accessible names stay the full ones.
 */
function RowActions(props: { entry: Entry; transfers: RowTransfers | undefined }) {
  const { name, path } = props.entry;
  const collection = props.entry.kind === 'collection';
  return (
    <div class="row-actions">
      {!collection && (
        <a href={`${registeredUrl(path)}?download=true`} class="button small secondary" download={name} aria-label={`Download ${name}`} title="Download">
          <DownloadIcon /><span class="action-label">Download</span>
        </a>
      )}
      <a href={itemHref(path)} class={`button small secondary${collection ? '' : ' hide-phone'}`} aria-label={`Details of ${name}`} title="Details">
        <InfoIcon /><span class="action-label">Details</span>
      </a>
      {(collection || props.transfers) && <RowMenu entry={props.entry} transfers={props.transfers} />}
    </div>
  );
}

/**
 * A row's "More" menu, a disclosure: the button says whether it is open, the first item takes
 * the focus, arrows go between the items, Escape closes it and gives the focus back, and so do
 * a click elsewhere, Tab out of it, and scrolling. It is placed fixed under (or, near the
 * window's bottom, above) its button, so no scrolling box cuts it off.
 */
function RowMenu(props: { entry: Entry; transfers: RowTransfers | undefined }) {
  const { entry, transfers } = props;
  const [place, setPlace] = useState<{ top?: number; bottom?: number; right: number } | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);
  const open = place !== null;
  const id = `menu-${entry.path.replace(/[^\w-]/g, '_')}`;
  const close = useCallback((focus: boolean) => { setPlace(null); if (focus) button.current?.focus(); }, []);
  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('a, button') ?? [])];

  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    const away = (e: Event) => { if (!menu.current?.contains(e.target as Node) && !button.current?.contains(e.target as Node)) close(false); };
    const scrolled = (e: Event) => { if (!menu.current?.contains(e.target as Node)) close(false); };
    const gone = () => close(false);
    document.addEventListener('pointerdown', away);
    document.addEventListener('scroll', scrolled, true);
    addEventListener('resize', gone);
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('scroll', scrolled, true);
      removeEventListener('resize', gone);
    };
  }, [open]);

  const toggle = () => {
    if (open) return close(false);
    const r = button.current!.getBoundingClientRect();
    const right = Math.max(8, innerWidth - r.right);
    // NOTE: five items are about 220 px high; nearer the bottom than that, the menu opens upwards.
    setPlace(r.bottom + 230 > innerHeight ? { bottom: innerHeight - r.top + 4, right } : { top: r.bottom + 4, right });
  };
  const keys = (e: KeyboardEvent) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(true); }
    else if (e.key === 'ArrowDown') { e.preventDefault(); all[(at + 1) % all.length]?.focus(); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); all[(at - 1 + all.length) % all.length]?.focus(); }
    else if (e.key === 'Home') { e.preventDefault(); all[0]?.focus(); }
    else if (e.key === 'End') { e.preventDefault(); all.at(-1)?.focus(); }
  };
  const pick = (mode: Transfer) => { close(false); transfers?.onTransfer(entry, mode); };
  const trash = () => { setPlace(null); transfers?.onTrash?.(entry); };
  return (
    <>
      <button
        type="button" ref={button} class="small secondary" aria-expanded={open} aria-controls={id}
        aria-label={`More actions for ${entry.name}`} title="More actions" onClick={toggle}
      >
        <MoreIcon /><span class="action-label">More</span>
      </button>
      {open && (
        <ul
          class="row-menu" id={id} ref={menu} aria-label={`Actions for ${entry.name}`} onKeyDown={keys}
          onFocusOut={(e) => { const next = e.relatedTarget as Node | null; if (next && !menu.current?.contains(next) && next !== button.current) close(false); }}
          style={{ top: place.top !== undefined ? `${place.top}px` : undefined, bottom: place.bottom !== undefined ? `${place.bottom}px` : undefined, right: `${place.right}px` }}
        >
          {transfers?.move && <li><button type="button" onClick={() => pick('move')}>Move to…</button></li>}
          {transfers && <li><button type="button" onClick={() => pick('copy')}>Copy to…</button></li>}
          {entry.kind === 'collection' && <>
            <li><a href={withQuery(registeredUrl(entry.path), 'download=zip')} download={`${entry.name}.zip`} onClick={() => close(false)}>Download as ZIP</a></li>
            <li><a href={withQuery(registeredUrl(entry.path), 'download=bag')} download={`${entry.name}.zip`} onClick={() => close(false)}>Download as BagIt</a></li>
          </>}
          {transfers?.onTrash && <li class="menu-sep"><button type="button" class="danger-item" onClick={trash}>Move to trash</button></li>}
        </ul>
      )}
    </>
  );
}
