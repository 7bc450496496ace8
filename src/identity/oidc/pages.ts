/**
 * The look of lading's HTML pages: one stylesheet, the brand mark and the page frame, shared by
 * the embedded provider's sign-in and consent pages, the notice pages of the sign-in flow (a
 * failed sign-in) and the PID landing pages of `http/`. Pages are self-contained (inline CSS, no
 * external asset), so they work offline and under a strict Content-Security-Policy. Pure
 * functions: no I/O, no request.
 */
import { createHash } from 'node:crypto';


/** `text` safe inside HTML text and quoted attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The stylesheet every page starts with (contrast of text on its background at least 4.5:1), light
 * or dark as the browser prefers, in the web app's palette.
 */
export const PAGE_STYLE = `
  :root { color-scheme: light dark; --ink: #1b2430; --muted: #556070; --line: #d5dbe3; --accent: #0b5cad; --accent-ink: #fff; --bad: #a4161a;
          --bg: #eef2f6; --card: #fff; --soft: #f6f8fb; --field: #9aa5b4; --focus: #8ab8ea; --bad-bg: #fdecec; --warn-line: #d9a441; --warn-bg: #fff8e6; }
  @media (prefers-color-scheme: dark) {
    :root { --ink: #e6ebf1; --muted: #a9b4c2; --line: #334253; --accent: #7db7f5; --accent-ink: #0b1520; --bad: #ff9b9b;
            --bg: #10161d; --card: #18212b; --soft: #1f2a36; --field: #6b7b8d; --focus: #4d8fd6; --bad-bg: #3a1a1c; --warn-line: #b8862a; --warn-bg: #33290f; }
  }
  * { box-sizing: border-box; }
  body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center; background: var(--bg);
         font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); }
  main { width: min(420px, 100% - 32px); background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 32px 32px 24px;
         box-shadow: 0 8px 24px rgba(27, 36, 48, .08); }
  .brand { display: flex; align-items: center; gap: 10px; margin-bottom: 20px; font-weight: 600; letter-spacing: .02em; }
  .brand svg { flex: none; }
  h1 { font-size: 1.4rem; margin: 0 0 6px; }
  p { margin: 0 0 16px; color: var(--muted); }
  label { display: block; font-weight: 600; margin: 16px 0 6px; }
  input[type=text], input[type=password] { width: 100%; padding: 10px 12px; font: inherit; border: 1px solid var(--field); border-radius: 6px; background: var(--card); color: var(--ink); }
  input:focus, button:focus { outline: 3px solid var(--focus); outline-offset: 1px; }
  .actions { display: flex; gap: 12px; margin-top: 24px; }
  button { font: inherit; font-weight: 600; padding: 10px 18px; border-radius: 6px; border: 1px solid var(--accent); cursor: pointer; }
  button.primary { background: var(--accent); color: var(--accent-ink); flex: 1; }
  button.secondary { background: var(--card); color: var(--accent); }
  .error { border: 1px solid var(--bad); background: var(--bad-bg); color: var(--bad); padding: 10px 12px; border-radius: 6px; margin: 0 0 8px; }
  ul.claims { margin: 0 0 8px; padding-left: 20px; }
  ul.claims li { margin: 6px 0; }
  footer { margin-top: 24px; padding-top: 16px; border-top: 1px solid var(--line); font-size: .875rem; color: var(--muted); }
  .who { font-weight: 600; color: var(--ink); }
`;

const LOGO = `<svg width="28" height="28" viewBox="0 0 28 28" aria-hidden="true"><rect width="28" height="28" rx="6" fill="#0b5cad"/><path d="M7 19h14M7 14h14M7 9h9" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>`;
/** The brand mark as the tab's icon, inline: these pages' Content-Security-Policy allows images from data: URLs only. */
const FAVICON_DATA = `data:image/svg+xml,${encodeURIComponent(LOGO.replace('<svg ', '<svg xmlns="http://www.w3.org/2000/svg" ').replace(' aria-hidden="true"', ''))}`;

/** The text of a page's `<style>` element: `PAGE_STYLE` followed by `extra` (for a CSP hash). */
export function pageStyle(extra = ''): string {
  return PAGE_STYLE + extra;
}

/**
 * A whole page titled `title` around `body` (trusted HTML: escape what goes into it), with
 * `style` added to the stylesheet and `script` as one inline script at the end of the body.
 * An empty data: icon keeps browsers from asking the server for /favicon.ico.
 */
export function pageLayout(title: string, body: string, options: { style?: string; script?: string } = {}): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · lading</title>
<link rel="icon" href="${FAVICON_DATA}" type="image/svg+xml">
<style>${pageStyle(options.style)}</style>
</head>
<body>
<main>
<div class="brand">${LOGO}<span>lading data staging</span></div>
${body}
</main>
${options.script ? `<script>${options.script}</script>\n` : ''}</body>
</html>`;
}

// NOTE: a link that looks like the primary button: a notice page has no form to submit.
const NOTICE_STYLE = `
  a { color: var(--accent); }
  a.button { display: inline-block; flex: 1; text-align: center; text-decoration: none; font-weight: 600; padding: 10px 18px;
             border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); }
  a:focus, a.button:focus { outline: 3px solid var(--focus); outline-offset: 1px; }
`;

/** What a notice page says: a heading, paragraphs of plain text (escaped here), one link on, and a footer. */
export interface Notice {
  title: string;
  heading: string;
  paragraphs: string[];
  link: { href: string; label: string };
  footer?: string;
}

/** A page that says what happened and offers one way on (a link): no form, no script. */
export function renderNoticePage(notice: Notice): string {
  return pageLayout(notice.title, `
<h1>${esc(notice.heading)}</h1>
${notice.paragraphs.map((p) => `<p>${esc(p)}</p>`).join('\n')}
<div class="actions"><a class="button" href="${esc(notice.link.href)}">${esc(notice.link.label)}</a></div>
${notice.footer ? `<footer>${esc(notice.footer)}</footer>` : ''}`, { style: NOTICE_STYLE });
}

/**
 * Headers of notice pages: a Content-Security-Policy that allows exactly their stylesheet (by
 * hash) and nothing else — no script, no form, no framing — and no caching.
 */
export const NOTICE_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'private, no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(pageStyle(NOTICE_STYLE), 'utf8').digest('base64')}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
};
