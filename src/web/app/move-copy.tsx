/**
 * Moving and copying an entity into another collection: a dialog with a collection picker
 * (start where the user is, go up and into sub-collections, an optional new name) that asks
 * `PATCH {destination}` or `POST {copy_to}`. A name taken in the chosen collection is offered
 * "Replace" (`force`) for a data object only, as the API replaces a data object with a data
 * object and never a collection.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, baseName, describeError, join, parentOf, registeredUrl } from './api.ts';
import { listEntries } from './browse.tsx';
import { browseHref } from './router.ts';
import type { Entry } from './types.ts';
import { Dialog, Field, FolderIcon, Notice, nameError, whereName } from './ui.tsx';
import { NAME_RULE_TEXT } from '../../core/name-rule.ts';

export type Transfer = 'move' | 'copy';

/** What a move or copy did: the entity's new path and the collection it went into. */
export interface Moved { mode: Transfer; name: string; target: string; into: string }

/** The name to show for a folder: "My files" for the home. */
function shownName(path: string, home: string): string {
  return path === home ? 'My files' : baseName(path) || '/';
}

/**
 * Moves or copies `entry` into a collection the user picks, starting at `start`; `onDone` when
 * the API did it. Errors show the API's message in the dialog.
 */
export function MoveCopyDialog(props: { entry: Pick<Entry, 'name' | 'path' | 'kind'>; mode: Transfer; start: string; home: string; onClose: () => void; onDone: (moved: Moved) => void }) {
  const { entry, mode, home } = props;
  const [at, setAt] = useState(props.start);
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [conflict, setConflict] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => { setConflict(false); setError(''); }, [at, name]);
  // NOTE: the button pressed is disabled by the conflict: the focus goes to what answers it.
  const replace = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (conflict) (replace.current ?? document.getElementById('move-copy-name'))?.focus();
  }, [conflict]);

  const finalName = name.trim() || entry.name;
  const target = join(at, finalName);
  const verb = mode === 'move' ? 'Move' : 'Copy';
  const what = entry.kind === 'collection' ? 'folder' : 'file';
  // NOTE: moving to where it is, under the same name, would change nothing.
  const same = target === entry.path;
  const inside = entry.kind === 'collection' && (at === entry.path || at.startsWith(`${entry.path}/`));

  const send = async (force: boolean) => {
    setBusy(true);
    setError('');
    try {
      const rename = name.trim() && name.trim() !== entry.name ? { newname: name.trim() } : {};
      const body = { ...(mode === 'move' ? { destination: at } : { copy_to: at }), ...rename, ...(force ? { force: true } : {}) };
      await api(mode === 'move' ? 'PATCH' : 'POST', registeredUrl(entry.path), { json: body });
      props.onDone({ mode, name: finalName, target, into: at });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && !force) setConflict(true);
      else setError(describeError(err));
      setBusy(false);
    }
  };
  const submit = (e: Event) => { e.preventDefault(); void send(false); };

  return (
    <Dialog title={`${verb} ${entry.name}`} onClose={props.onClose} describedBy="move-copy-text">
      <form onSubmit={submit} class="move-copy">
        <p id="move-copy-text" class="hint">Choose the folder to {mode} this {what} into: open a folder below, or go up.</p>
        <CollectionPicker at={at} onGo={setAt} home={home} mode={mode} moving={[entry.path]} />
        <Field id="move-copy-name" label="New name (optional)" value={name} onInput={setName} hint={`Empty: it keeps its name, ${entry.name}. ${NAME_RULE_TEXT}`} error={nameError(name)} />
        {inside && <p class="error-text">A folder cannot go into itself: choose another folder.</p>}
        {same && <p class="hint">It is here already: open another folder, or give it a new name.</p>}
        {conflict && (entry.kind === 'dataobject' ? (
          <Notice kind="error">
            <p><strong class="break">{finalName}</strong> already exists in {shownName(at, home)}. Replace it with this file, or choose another name?</p>
            <div class="actions"><button type="button" class="primary" ref={replace} onClick={() => void send(true)} disabled={busy}>Replace</button></div>
          </Notice>
        ) : (
          <Notice kind="error">A folder or file named <strong class="break">{finalName}</strong> already exists in {shownName(at, home)}: choose another name or another folder.</Notice>
        ))}
        {error && <Notice kind="error">{error}</Notice>}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || same || inside || conflict || nameError(name) !== ''}>{verb} here</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}

/** The success line after a move or copy, with links to the entity and where it went. */
export function MovedNotice(props: { moved: Moved; home: string; onClose: () => void; itemLink: (path: string) => string }) {
  const { moved } = props;
  return (
    <Notice kind="success" onClose={props.onClose}>
      {moved.mode === 'move' ? 'Moved' : 'Copied'} <a href={props.itemLink(moved.target)} class="break">{moved.name}</a> to <a href={browseHref(moved.into)} class="break">{shownName(moved.into, props.home)}</a>.
    </Notice>
  );
}

/**
 * The folder picker of the move and copy dialogs: where it is (`at`), Up, and the
 * folders (collections) in there to open; the ones being moved or copied (`moving`) cannot be opened.
 */
function CollectionPicker(props: { at: string; onGo: (path: string) => void; home: string; mode: Transfer; moving: readonly string[] }) {
  const { at, home, mode } = props;
  const [children, setChildren] = useState<Entry[] | null>(null);
  const [listError, setListError] = useState('');
  const here = useRef<HTMLParagraphElement>(null);
  const moved = useRef(false);
  useEffect(() => {
    const abort = new AbortController();
    setChildren(null);
    setListError('');
    listEntries(at, () => {}, abort.signal).then(
      (all) => setChildren(all.filter((e) => e.kind === 'collection').sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }))),
      (err: unknown) => { if ((err as Error).name !== 'AbortError') { setChildren([]); setListError(describeError(err)); } },
    );
    // NOTE: the button that went there is gone; focus goes to where the picker now is, which says so.
    if (moved.current) here.current?.focus();
    return () => abort.abort();
  }, [at]);
  const go = (path: string) => { moved.current = true; props.onGo(path); };
  return (
    <div class="picker">
      <div class="picker-head">
        <p class="picker-here" ref={here} tabIndex={-1} aria-live="polite">
          <FolderIcon /><span class="break"><span class="visually-hidden">Into </span><strong>{shownName(at, home)}</strong> {at !== home && <span class="picker-path">{whereName(parentOf(at), home)}</span>}</span>
        </p>
        <button type="button" class="secondary small" disabled={at.split('/').filter(Boolean).length <= 1} onClick={() => go(parentOf(at))} aria-label={`Up to ${shownName(parentOf(at), home)}`}>
          <span aria-hidden="true">↑</span> Up
        </button>
      </div>
      {listError && <p class="error-text picker-note">{listError}</p>}
      {children === null && <p class="hint picker-note" role="status">Loading…</p>}
      {children && children.length === 0 && !listError && <p class="hint picker-note">No folders in here.</p>}
      {children && children.length > 0 && (
        <ul class="picker-list" aria-label={`Folders in ${shownName(at, home)}`}>
          {children.map((c) => {
            const self = props.moving.includes(c.path);
            return (
              <li key={c.path}>
                <button type="button" class="picker-item" onClick={() => go(c.path)} disabled={self} aria-label={`Open ${c.name}`}>
                  <FolderIcon /><span class="break">{c.name}</span>
                  {self && <span class="hint"> (the one you are {mode === 'move' ? 'moving' : 'copying'})</span>}
                  <span class="picker-go" aria-hidden="true">›</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

/** What a move, copy or trash of several entries did: how many went, and each that could not, with the API's reason. */
export interface BulkOutcome { done: number; failed: { name: string; why: string }[] }

/** The line that says a `BulkOutcome`: "2 moved, 1 could not be: a.txt (Conflict: …)". */
export function bulkSummary(verb: string, outcome: BulkOutcome): { kind: 'success' | 'error'; text: string } {
  const { done, failed } = outcome;
  if (failed.length === 0) return { kind: 'success', text: `${done} ${done === 1 ? 'item' : 'items'} ${verb}.` };
  const why = failed.map((f) => `${f.name} (${f.why})`).join('; ');
  return { kind: 'error', text: `${done} ${verb}, ${failed.length} could not be: ${why}` };
}

/**
 * Moves or copies several entries (all in the collection `start`) into one collection the user
 * picks, one request each; a name taken there is not replaced but reported with the others
 * that failed (`onDone`), never lost.
 */
export function BulkMoveCopyDialog(props: { entries: readonly Pick<Entry, 'name' | 'path' | 'kind'>[]; mode: Transfer; start: string; home: string; onClose: () => void; onDone: (outcome: BulkOutcome, into: string) => void }) {
  const { entries, mode, home } = props;
  const [at, setAt] = useState(props.start);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState(0);
  const verb = mode === 'move' ? 'Move' : 'Copy';
  const paths = entries.map((e) => e.path);
  const same = mode === 'move' && entries.every((e) => parentOf(e.path) === at);
  const inside = entries.find((e) => e.kind === 'collection' && (at === e.path || at.startsWith(`${e.path}/`)));
  const send = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const outcome: BulkOutcome = { done: 0, failed: [] };
    for (const entry of entries) {
      try {
        await api(mode === 'move' ? 'PATCH' : 'POST', registeredUrl(entry.path), { json: mode === 'move' ? { destination: at } : { copy_to: at } });
        outcome.done++;
      } catch (err) {
        outcome.failed.push({ name: entry.name, why: err instanceof ApiError && err.status === 409 ? `${entry.name} already exists in ${shownName(at, home)}` : describeError(err) });
      }
      setProgress(outcome.done + outcome.failed.length);
    }
    props.onDone(outcome, at);
  };
  const count = `${entries.length} ${entries.length === 1 ? 'item' : 'items'}`;
  return (
    <Dialog title={`${verb} ${count}`} onClose={props.onClose} describedBy="bulk-move-copy-text">
      <form onSubmit={(e) => void send(e)} class="move-copy">
        <p id="bulk-move-copy-text" class="hint">Choose the folder to {mode} the {count} into: open a folder below, or go up. A name taken there is not replaced.</p>
        <CollectionPicker at={at} onGo={setAt} home={home} mode={mode} moving={paths} />
        {inside && <p class="error-text">{inside.name} cannot go into itself: choose another folder.</p>}
        {same && <p class="hint">They are here already: open another folder.</p>}
        {busy && <p class="hint" role="status">{verb === 'Move' ? 'Moving' : 'Copying'} {progress} of {entries.length}…</p>}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || same || inside !== undefined}>{verb} here</button>
          <button type="button" class="secondary" onClick={props.onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
