/**
 * Selecting rows of a listing and acting on them together: the selection's rules (click
 * toggles, Shift extends from the last row picked, Space, Shift+Arrow, Ctrl/Cmd+A, Escape), the
 * bar that offers what can be done with the rows picked, and the one-request ZIP download of
 * them (`POST /api/archive`, sent as a form so the archive streams to disk and never into the
 * page's memory).
 */
import { useEffect, useRef } from 'preact/hooks';
import { csrfHeaders } from './api.ts';
import type { Entry } from './types.ts';

/** The rows picked, by path, and how the table changes them. */
export interface RowSelection {
  selected: ReadonlySet<string>;
  set: (next: Set<string>) => void;
}

/**
 * The selection's rules over `shown` (the rows in their shown order): returns what a row's box
 * does when clicked (`pick`), and the keys of the table (`keys`). `focusRow` moves the focus to
 * the box of a row by its index in `shown`.
 */
export function useSelectionRules(shown: readonly Entry[], selection: RowSelection | undefined, focusRow: (index: number) => void) {
  // NOTE: a range runs from the anchor (the last row picked by itself) and adds to what was
  // picked before the anchor was set, as file managers do.
  const anchor = useRef<{ index: number; base: Set<string> } | null>(null);
  useEffect(() => { anchor.current = null; }, [shown]);
  if (!selection) return { pick: () => {}, keys: () => {} };
  const { selected, set } = selection;

  const range = (to: number) => {
    const from = anchor.current ?? { index: to, base: new Set(selected) };
    anchor.current = from;
    const next = new Set(from.base);
    for (let i = Math.min(from.index, to); i <= Math.max(from.index, to); i++) next.add(shown[i]!.path);
    set(next);
  };
  const toggle = (index: number) => {
    const next = new Set(selected);
    const path = shown[index]!.path;
    if (next.has(path)) next.delete(path);
    else next.add(path);
    anchor.current = { index, base: next };
    set(next);
  };
  const pick = (index: number, extend: boolean) => (extend ? range(index) : toggle(index));

  const keys = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement;
    if (target.closest('.row-menu')) return;
    const row = target.closest<HTMLElement>('tr[data-index]');
    const index = row ? Number(row.dataset.index) : -1;
    if ((e.key === 'a' || e.key === 'A') && (e.ctrlKey || e.metaKey) && !e.altKey) {
      e.preventDefault();
      set(new Set(shown.map((s) => s.path)));
    } else if (e.key === 'Escape' && selected.size > 0) {
      e.preventDefault();
      anchor.current = null;
      set(new Set());
    } else if (index < 0) {
      return;
    } else if (e.key === ' ' && !target.matches('input, button')) {
      // NOTE: a box toggles itself (its click comes here as a pick); a button does what it says.
      e.preventDefault();
      toggle(index);
    } else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && !e.altKey && !e.ctrlKey && !e.metaKey) {
      const to = index + (e.key === 'ArrowDown' ? 1 : -1);
      if (to < 0 || to >= shown.length) return;
      e.preventDefault();
      if (e.shiftKey) {
        if (!anchor.current) anchor.current = { index, base: new Set(selected) };
        range(to);
      }
      focusRow(to);
    }
  };
  return { pick, keys };
}

/** The name of the frame archives are downloaded into (an error answer shows there, not in place of the app). */
const ARCHIVE_FRAME = 'archive-download';

/**
 * Downloads `paths` as one ZIP named `name`: a form posted into a hidden frame, so the browser
 * saves the answer as it streams in. The session's CSRF token goes in a field, as a form cannot
 * send a header.
 */
export function downloadArchive(paths: readonly string[], name: string): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = '/api/archive';
  form.target = ARCHIVE_FRAME;
  form.hidden = true;
  const fields: Record<string, string> = { paths: paths.join('\n'), name, csrf_token: csrfHeaders()['X-CSRF-Token'] ?? '' };
  for (const [key, value] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = key;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  form.remove();
}

/**
 * The hidden frame archives download into. A download leaves it as it was; a refusal (the
 * API's JSON envelope) loads into it, and `onError` gets its message.
 */
export function ArchiveFrame(props: { onError: (message: string) => void }) {
  const load = (e: Event) => {
    let text = '';
    try {
      text = (e.currentTarget as HTMLIFrameElement).contentDocument?.body?.textContent ?? '';
    } catch {
      return;
    }
    if (!text.trim()) return;
    try {
      const body = JSON.parse(text) as { Response?: { errors?: Record<string, string>[] | null } };
      const [title, message] = Object.entries(body.Response?.errors?.[0] ?? {})[0] ?? ['Error', 'The archive could not be made.'];
      props.onError(`${title}: ${message}`);
    } catch {
      props.onError('The archive could not be made: the server answered something else than an archive.');
    }
  };
  return <iframe name={ARCHIVE_FRAME} title="Archive download" class="archive-frame" tabIndex={-1} aria-hidden="true" onLoad={load} />;
}

/** The bar over a listing with rows picked: how many, and what can be done with them all. */
export function SelectionBar(props: {
  count: number; onZip: () => void; onMove?: () => void; onCopy: () => void; onTrash?: () => void; onClear: () => void;
}) {
  const n = props.count;
  return (
    <div class="selection-bar" role="region" aria-label="Selected items" onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); props.onClear(); } }}>
      <p class="selection-count" role="status"><strong>{n}</strong> selected</p>
      <div class="selection-actions">
        <button type="button" class="small primary" onClick={props.onZip}>Download as ZIP</button>
        {props.onMove && <button type="button" class="small secondary" onClick={props.onMove}>Move…</button>}
        <button type="button" class="small secondary" onClick={props.onCopy}>Copy…</button>
        {props.onTrash && <button type="button" class="small secondary danger" onClick={props.onTrash}>Move to trash</button>}
        <button type="button" class="small link" onClick={props.onClear} aria-label={`Clear the selection of ${n} ${n === 1 ? 'item' : 'items'}`}>Clear</button>
      </div>
    </div>
  );
}
