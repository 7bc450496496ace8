/**
 * The landing pages of PIDs, for browsers: what a PID names (name, size, checksum, dates,
 * owner), the PID with a copy button, and a download button when the viewer may download it;
 * a page saying where a PID that points elsewhere goes; and the page of an unknown PID. Pages
 * are self-contained — the shared look of `identity/oidc/pages.ts`, one inline script — and
 * served with a Content-Security-Policy that allows exactly that style and that script, by
 * hash. Every value shown is escaped. Pure rendering: it decides nothing about access.
 */
import { createHash } from 'node:crypto';
import { esc, pageLayout, pageStyle } from '../identity/oidc/pages.ts';

const STYLE = `
  main { width: min(600px, 100% - 24px); }
  @media (max-width: 480px) { main { padding: 24px 18px 18px; } }
  h1 { overflow-wrap: anywhere; }
  .kind { margin: 0 0 20px; }
  .pid { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 12px; padding: 12px; border: 1px solid var(--line); border-radius: 8px; background: #f6f8fb; }
  .pid-label { font-weight: 600; }
  code { font: .9375rem/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere; color: var(--ink); }
  .pid code { flex: 1 1 16em; }
  .status { margin: 8px 0 0; min-height: 1.5em; font-size: .875rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 8px 16px; margin: 20px 0 0; }
  dt { font-weight: 600; }
  dd { margin: 0; overflow-wrap: anywhere; }
  .bytes { color: var(--muted); }
  @media (max-width: 480px) { dl { grid-template-columns: 1fr; gap: 2px; } dd { margin-bottom: 10px; } }
  a { color: var(--accent); }
  a:focus, a.button:focus { outline: 3px solid var(--focus); outline-offset: 1px; }
  a.button { display: inline-block; text-decoration: none; text-align: center; font-weight: 600; padding: 10px 18px; border-radius: 6px; border: 1px solid var(--accent); }
  a.button.primary { background: var(--accent); color: var(--accent-ink); flex: 1; }
  .note { border: 1px solid var(--line); background: var(--soft); color: var(--ink); padding: 10px 12px; border-radius: 6px; margin: 24px 0 0; overflow-wrap: anywhere; }
  .note.withdrawn { margin: 0 0 16px; border-color: var(--warn-line); background: var(--warn-bg); }
`;

// NOTE: the only script of the pages; the CSP names its hash, so no other script can run.
const SCRIPT = `(() => {
  const button = document.getElementById('copy');
  const pid = document.getElementById('pid');
  const status = document.getElementById('copy-status');
  if (!button || !pid || !status) return;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(pid.textContent);
      status.textContent = 'PID copied to the clipboard.';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(pid);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      status.textContent = 'Press Ctrl+C (or Command+C) to copy the selected PID.';
    }
  });
})();`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Headers of every landing page: its CSP (this style and this script only), no framing, no caching by others. */
export const PID_PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': `default-src 'none'; style-src ${hash(pageStyle(STYLE))}; script-src ${hash(SCRIPT)}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
};

/** How the viewer may download what a PID names: a link to follow, or why there is none. */
export type DownloadOffer =
  | { kind: 'link'; href: string }
  | { kind: 'signin'; href: string; reason: string }
  | { kind: 'none'; reason: string };

/** What the landing page of a PID naming an entity here shows. */
export interface PidPage {
  handle: string;
  kind: 'dataobject' | 'collection';
  name: string;
  owner: string;
  createdAt: Date;
  modifiedAt: Date;
  /** Data objects only. */
  size?: number;
  checksum?: string;
  download: DownloadOffer;
  /** Where the viewer may browse a published collection (its JSON listing); collections only. */
  listing?: string | null;
  /** The Handle REST API's JSON record of the PID. */
  recordHref: string;
}

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** `1.2 MiB` for 1,234,567 bytes; bytes below 1 KiB as they are. */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

function date(at: Date): string {
  return `<time datetime="${esc(at.toISOString())}">${esc(at.toISOString().slice(0, 16).replace('T', ' '))} UTC</time>`;
}

function pidBox(handle: string): string {
  return `<div class="pid">
<span class="pid-label" id="pid-label">PID</span>
<code id="pid" aria-labelledby="pid-label">${esc(handle)}</code>
<button type="button" class="secondary" id="copy" aria-describedby="copy-status">Copy PID</button>
</div>
<p class="status" id="copy-status" role="status" aria-live="polite"></p>`;
}

/** The landing page of a PID that names an entity here. */
export function renderPidPage(page: PidPage): string {
  const facts: [string, string][] = [];
  if (page.kind === 'dataobject') {
    const size = page.size ?? 0;
    facts.push(['Size', size < 1024 ? esc(humanSize(size)) : `${esc(humanSize(size))} <span class="bytes">(${esc(size.toLocaleString('en-US'))} bytes)</span>`]);
    facts.push(['Checksum', `<code>${esc(page.checksum ?? '')}</code>`]);
  }
  facts.push(['Created', date(page.createdAt)], ['Modified', date(page.modifiedAt)], ['Owner', esc(page.owner)]);
  const list = facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('\n');
  let action: string;
  if (page.download.kind === 'link') {
    action = `<div class="actions"><a class="button primary" href="${esc(page.download.href)}" download="${esc(page.name)}">Download ${esc(page.name)}</a></div>`;
  } else if (page.download.kind === 'signin') {
    action = `<p class="note">${esc(page.download.reason)}</p><div class="actions"><a class="button primary" href="${esc(page.download.href)}">Sign in to download</a></div>`;
  } else if (page.listing) {
    action = `<div class="actions"><a class="button primary" href="${esc(page.listing)}">List its contents</a></div>`;
  } else {
    action = `<p class="note">${esc(page.download.reason)}</p>`;
  }
  const kind = page.kind === 'dataobject' ? 'Data object' : 'Collection';
  return pageLayout(page.name, `
<h1>${esc(page.name)}</h1>
<p class="kind">${kind} with a persistent identifier</p>
${pidBox(page.handle)}
<dl>
${list}
</dl>
${action}
<footer>The PID's record: <a href="${esc(page.recordHref)}">as JSON</a>.</footer>`, { style: STYLE, script: SCRIPT });
}

/**
 * The page of a PID whose record points elsewhere: where to (a link when the URL is http or
 * https, the text otherwise).
 */
export function renderElsewherePage(input: { handle: string; url: string | null; recordHref: string }): string {
  const web = input.url !== null && /^https?:\/\//i.test(input.url);
  const where = input.url === null
    ? '<p>Its record names no URL.</p>'
    : `<p>It points to ${web ? `<a href="${esc(input.url)}">${esc(input.url)}</a>` : `<code>${esc(input.url)}</code>`}, which is not served here.</p>`;
  return pageLayout(`PID ${input.handle}`, `
<h1>This PID points elsewhere</h1>
${where}
${pidBox(input.handle)}
<footer>The PID's record: <a href="${esc(input.recordHref)}">as JSON</a>.</footer>`, { style: STYLE, script: SCRIPT });
}

/** What the tombstone of a PID whose entity was withdrawn shows. */
export interface TombstonePage {
  handle: string;
  kind: 'dataobject' | 'collection';
  name: string;
  owner: string;
  createdAt: Date;
  state: 'trashed' | 'purged' | 'taken_down';
  withdrawnAt: Date;
  withdrawnBy: string;
  reason: string | null;
  removedAt: Date | null;
  removedBy: string | null;
  removalReason: string | null;
  recordHref: string;
}

/**
 * The tombstone of a PID: what it named, that it was withdrawn, when, by whom and why, and
 * whether its data may come back (trashed) or are gone (purged, taken down).
 */
export function renderTombstonePage(page: TombstonePage): string {
  const facts: [string, string][] = [
    ['Withdrawn', date(page.withdrawnAt)],
    ['By', esc(page.withdrawnBy)],
    ['Reason', page.reason === null ? '<span class="bytes">none given</span>' : esc(page.reason)],
  ];
  if (page.removedAt !== null) {
    facts.push([page.state === 'taken_down' ? 'Taken down' : 'Data removed', date(page.removedAt)]);
    if (page.removedBy !== null) facts.push(['Removed by', esc(page.removedBy)]);
    if (page.removalReason !== null) facts.push(['Removal reason', esc(page.removalReason)]);
  }
  facts.push(['Created', date(page.createdAt)], ['Owner', esc(page.owner)]);
  const list = facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('\n');
  const kind = page.kind === 'dataobject' ? 'data object' : 'collection';
  const status = page.state === 'trashed'
    ? `This ${kind} has been withdrawn by its owner and is no longer available. Its owner may still restore it.`
    : page.state === 'taken_down'
      ? `This ${kind} has been withdrawn and its data were taken down by an administrator; they are no longer available.`
      : `This ${kind} has been withdrawn and its data were removed; they are no longer available.`;
  return pageLayout(`Withdrawn: ${page.name}`, `
<h1>${esc(page.name)}</h1>
<p class="kind">Withdrawn ${kind}</p>
<p class="note withdrawn" id="withdrawn">${esc(status)}</p>
${pidBox(page.handle)}
<dl>
${list}
</dl>
<footer>The PID's record: <a href="${esc(page.recordHref)}">as JSON</a>.</footer>`, { style: STYLE, script: SCRIPT });
}

/** The page of a PID that is not registered here (sent with 404). */
export function renderUnknownPidPage(handle: string): string {
  return pageLayout('PID not found', `
<h1>PID not found</h1>
<p>The PID <code>${esc(handle)}</code> is not registered here. Check it for typing mistakes, or resolve it at the handle service that issued it.</p>`, { style: STYLE });
}
