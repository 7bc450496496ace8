/**
 * Small pieces every page uses: the brand, messages, a modal dialog (the browser's own
 * `<dialog>`, which keeps focus inside and closes on Escape), a copy button, progress bars and
 * breadcrumbs, the links of a collection as one download. Presentational: no request is made here.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { humanSize } from './format.ts';
import type { EntryMarksOf } from './types.ts';
import { NAME_RULE_TEXT, nameProblem } from '../../core/name-rule.ts';

export function Logo() {
  return (
    <svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true" class="logo">
      <rect width="28" height="28" rx="6" fill="#0b5cad" />
      <path d="M7 19h14M7 14h14M7 9h9" stroke="#fff" stroke-width="2.4" stroke-linecap="round" />
    </svg>
  );
}

export function Brand() {
  return <div class="brand"><Logo /><span>lading data staging</span></div>;
}

/** Marks beside an entity's name: published, shared with others, with share links; each named for assistive technology and with a tooltip. */
export function EntryMarks(props: { marks: EntryMarksOf }) {
  const { published, shared, links } = props.marks;
  if (!published && !shared && !links) return null;
  return (
    <span class="marks">
      {published && (
        <span class="mark" role="img" aria-label="Published" title="Published: anyone on the internet can read it">
          <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><circle cx="8" cy="8" r="6.25" fill="none" stroke="currentColor" stroke-width="1.5" /><path d="M1.75 8h12.5M8 1.75c-3 3.5-3 9 0 12.5M8 1.75c3 3.5 3 9 0 12.5" fill="none" stroke="currentColor" stroke-width="1.2" /></svg>
        </span>
      )}
      {shared && (
        <span class="mark" role="img" aria-label="Shared with others" title="Shared: other users or groups have access">
          <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><circle cx="5.5" cy="5" r="2.5" fill="currentColor" /><circle cx="11.5" cy="6" r="2" fill="currentColor" opacity=".8" /><path d="M1 14c0-3 2-4.5 4.5-4.5S10 11 10 14zM10.5 14c0-1.6-.5-2.8-1.3-3.6.6-.4 1.4-.6 2.3-.6 2 0 3.5 1.3 3.5 4.2z" fill="currentColor" /></svg>
        </span>
      )}
      {links && (
        <span class="mark" role="img" aria-label="Has share links" title="Has share links: anyone with a link can use it">
          <svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><path d="M6.5 9.5l3-3M7 4.5l1.2-1.2a2.6 2.6 0 0 1 3.7 3.7L10.7 8.2M9 11.5l-1.2 1.2a2.6 2.6 0 0 1-3.7-3.7L5.3 7.8" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" /></svg>
        </span>
      )}
    </span>
  );
}

export function FolderIcon() {
  return (
    <svg class="icon" width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
      <path d="M2 5.5A1.5 1.5 0 0 1 3.5 4h4l2 2h7A1.5 1.5 0 0 1 18 7.5v7a1.5 1.5 0 0 1-1.5 1.5h-13A1.5 1.5 0 0 1 2 14.5z" fill="currentColor" opacity=".85" />
    </svg>
  );
}

export function FileIcon() {
  return (
    <svg class="icon" width="20" height="20" viewBox="0 0 20 20" aria-hidden="true">
      <path d="M5 2h6l4 4v11a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1z" fill="none" stroke="currentColor" stroke-width="1.5" />
      <path d="M11 2v4h4" fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}

export function DownloadIcon() {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 20 20" aria-hidden="true">
      <path d="M10 3v10m-4-4 4 4 4-4M4 16h12" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" />
    </svg>
  );
}

export function InfoIcon() {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 20 20" aria-hidden="true">
      <circle cx="10" cy="10" r="7.25" fill="none" stroke="currentColor" stroke-width="1.5" />
      <path d="M10 9v5" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" />
      <circle cx="10" cy="6.25" r="1.1" fill="currentColor" />
    </svg>
  );
}

export function MoreIcon() {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 20 20" aria-hidden="true">
      <circle cx="4.5" cy="10" r="1.7" fill="currentColor" /><circle cx="10" cy="10" r="1.7" fill="currentColor" /><circle cx="15.5" cy="10" r="1.7" fill="currentColor" />
    </svg>
  );
}

/** A message: `error` is announced at once (role alert), `info` politely (role status). */
export function Notice(props: { kind: 'error' | 'info' | 'success'; children: ComponentChildren; onClose?: () => void }) {
  return (
    <div class={`notice ${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      <div class="notice-text">{props.children}</div>
      {props.onClose && <button type="button" class="link" onClick={props.onClose}>Dismiss</button>}
    </div>
  );
}

/** The element that had the focus last (it may have left the page since). */
let lastFocused: HTMLElement | null = null;
document.addEventListener('focusin', (e) => { if (e.target instanceof HTMLElement) lastFocused = e.target; });

/**
 * Where focus goes back to when a dialog that `opener` opened closes: `opener` itself, or, when
 * it was an item of a menu that has closed since, the button that opened that menu.
 */
function openerOf(opener: HTMLElement | null): HTMLElement | null {
  if (!opener) return null;
  if (opener.isConnected) return opener;
  const menu = opener.closest('.row-menu, [role="menu"]');
  const id = menu?.getAttribute('id');
  return (id ? document.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(id)}"]`) : null);
}

/** A modal dialog, open while mounted; Escape or `onClose` closes it; the focus returns to its opener. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; describedBy?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    // NOTE: the control that opened the dialog gets the focus back when it closes (the dialog
    // leaves the page with its element, which the browser's own return of focus does not cover).
    // NOTE: a menu item that opened it may have left the page with its menu already: then the
    // element focused last stands for it.
    const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : lastFocused;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      const back = openerOf(opener);
      if (back) setTimeout(() => { if (back.isConnected && (document.activeElement === document.body || document.activeElement === null)) back.focus(); }, 0);
    };
  }, []);
  const titleId = `dialog-title-${props.title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <dialog ref={ref} aria-labelledby={titleId} aria-describedby={props.describedBy} onCancel={(e) => { e.preventDefault(); props.onClose(); }}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** A button that copies `text`, saying so in a polite status next to it. */
export function CopyButton(props: { text: string; label: string; class?: string }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setSaid('Copied.');
    } catch {
      setSaid('Select the text and press Ctrl+C (or Command+C) to copy it.');
    }
  };
  return (
    <span class="copy">
      <button type="button" class={props.class ?? 'secondary small'} onClick={copy}>{props.label}</button>
      <span class="copy-status" role="status" aria-live="polite">{said}</span>
    </span>
  );
}

export function Progress(props: { value: number; max: number; label: string }) {
  const max = Math.max(props.max, 1);
  const percent = Math.min(100, Math.floor((props.value / max) * 100));
  return (
    <div class="progress" role="progressbar" aria-label={props.label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent} aria-valuetext={`${percent}% (${humanSize(props.value)} of ${humanSize(props.max)})`}>
      <div class="progress-bar" style={{ width: `${percent}%` }} />
    </div>
  );
}

/**
 * Breadcrumbs of `path`; each ancestor links with `href`, the last is the current page. They
 * never show the zone's internal path: inside `home`, they start at it, named "My files";
 * inside `shared` (an entity shared with the user, whose parents they may not open), at
 * "Shared with me" and then, for what lies in another user's home, "<user>'s files" (`sharedBy`), followed by the shared entity and what is below it.
 */
export function Breadcrumbs(props: { path: string; href: (path: string) => string; home?: string; shared?: string | null; sharedBy?: string | null }) {
  const parts = props.path.split('/').filter(Boolean);
  // NOTE: a `plain` crumb is not a link: the other user's files are not theirs to open.
  let crumbs: { name: string; path: string; link?: string; plain?: boolean }[] = parts.map((name, i) => ({ name, path: `/${parts.slice(0, i + 1).join('/')}` }));
  const { home, shared } = props;
  const inside = (root: string) => props.path === root || props.path.startsWith(`${root}/`);
  if (home && inside(home)) {
    crumbs = [{ name: 'My files', path: home }, ...crumbs.filter((c) => c.path.length > home.length)];
  } else if (shared && inside(shared)) {
    const owner = props.sharedBy ? [{ name: `${props.sharedBy}'s files`, path: '#owner', plain: true }] : [];
    crumbs = [{ name: 'Shared with me', path: '', link: '#/shared' }, ...owner, ...crumbs.filter((c) => c.path.length >= shared.length)];
  }
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs">
      <ol>
        {crumbs.map((c, i) => (
          <li key={c.path}>
            {i === crumbs.length - 1
              ? <span aria-current="page">{c.name}</span>
              : c.plain ? <span>{c.name}</span> : <a href={c.link ?? props.href(c.path)}>{c.name}</a>}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/**
 * Where `path` lies, for people: "alice's files / a / b" for the folder /zone/home/alice/a/b
 * (and "alice's files" for the home itself); the path's last segments when it is not in a home.
 */
export function placeName(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[1] === 'home' && parts[2]) return [`${parts[2]}'s files`, ...parts.slice(3)].join(' / ');
  return parts.slice(1).join(' / ') || parts[0] || '/';
}

/** Where `path` lies as the user at `home` says it: "My files / a / b" inside their home, else as `placeName`. */
export function whereName(path: string, home: string): string {
  if (path === home) return 'My files';
  if (path.startsWith(`${home}/`)) return ['My files', ...path.slice(home.length + 1).split('/')].join(' / ');
  return placeName(path);
}

/** The user whose home `path` lies in (/zone/home/<user>/…), or null. */
export function homeUserOf(path: string): string | null {
  const parts = path.split('/').filter(Boolean);
  return parts[1] === 'home' && parts[2] ? parts[2] : null;
}

/**
 * A labelled text field; `error` (when not empty) marks it invalid and says why under it, where
 * a screen reader reads it with the field.
 */
export function Field(props: {
  label: string; value: string; onInput: (value: string) => void; id: string;
  type?: 'text' | 'password' | 'number' | 'search'; required?: boolean; hint?: string; error?: string;
  min?: string; step?: string; autoComplete?: string; autoFocus?: boolean;
}) {
  const { label, value, onInput, id, hint, error } = props;
  // NOTE: Preact's input attributes are a union keyed by each literal type; a union of types
  // matches none of its members, so the type is given as one of them.
  const type = (props.type ?? 'text') as 'text';
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id} type={type} value={value} onInput={(e) => onInput(e.currentTarget.value)}
        required={props.required} min={props.min} step={props.step} autoComplete={props.autoComplete} autoFocus={props.autoFocus}
        aria-describedby={described || undefined} aria-invalid={error ? true : undefined}
      />
      {hint && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      {error && <p class="field-error" id={`${id}-error`}>{error}</p>}
    </div>
  );
}

/**
 * What is wrong with a name typed into a field, by the server's own name rule, or '' when it
 * may be sent (an empty field is not yet wrong: its submit button is disabled instead).
 */
export function nameError(name: string): string {
  const trimmed = name.trim();
  return trimmed ? nameProblem(trimmed, true) ?? '' : '';
}

/** A field for the name of a new or renamed folder or file: the name rule under it, and what breaks it as it is typed. */
export function NameField(props: { id: string; label: string; value: string; onInput: (value: string) => void; autoFocus?: boolean }) {
  return <Field {...props} required hint={NAME_RULE_TEXT} error={nameError(props.value)} autoComplete="off" />;
}

/** `link` with `query` added (`?` or `&`). */
export function withQuery(link: string, query: string): string {
  return `${link}${link.includes('?') ? '&' : '?'}${query}`;
}

/** A collection as one download: `?download=zip` or `?download=bag` on its registered URL (or `link`). */
export function ArchiveLinks(props: { link: string; name: string; class?: string }) {
  const cls = props.class ?? 'button secondary';
  return (
    <>
      <a class={cls} href={withQuery(props.link, 'download=zip')} download={`${props.name}.zip`}>Download as ZIP</a>
      <a class={cls} href={withQuery(props.link, 'download=bag')} download={`${props.name}.zip`} title="A BagIt bag (RFC 8493) in a ZIP archive, with a SHA-256 manifest">Download as BagIt</a>
    </>
  );
}
