/**
 * Serves the web app: its one page at `/` (the app routes by the URL's fragment, `/#/browse/…`,
 * so the server has one page to serve) and its built script and stylesheet under `/app/`; and
 * gives the share-link routes the same page, with what the link shares, for a browser that
 * opens a link. The page loads nothing but these two files and runs no inline script, under a
 * strict Content-Security-Policy. The app talks to the public API like any client.
 */
import type { FastifyReply } from 'fastify';
import { Type } from './typebox.ts';
import { LadingError } from '../core/errors.ts';
import { type WebAssets, type WebBuild, ASSET_PREFIX } from '../web/bundle.ts';
import { keepCompressed } from './compression.ts';
import { type TypedApp, errorResponses } from './schemas.ts';

interface WebRouteDeps {
  assets: WebAssets;
}

/** Headers of every page of the app: only its own script, style and API; no framing. */
export const APP_PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
};

/** `text` safe inside HTML text and quoted attribute values. */
function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The app's page. `data`, when given, is handed to the app as a JSON data block (never
 * executed, so the CSP allows it); `<` is escaped so no value can close the element.
 */
export function appPage(build: WebBuild, title: string, data?: unknown): string {
  const block = data === undefined ? ''
    : `<script type="application/json" id="lading-data">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>\n`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${esc(title)}</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${build.style.path}">
<script type="module" src="${build.script.path}"></script>
${block}</head>
<body>
<div id="app"><noscript><p class="noscript">The lading web app needs JavaScript. The API works without it: see <a href="/api/docs">/api/docs</a>.</p></noscript></div>
</body>
</html>
`;
}

/**
 * Sends the app's page with `status`, `data` for the app and the page headers; `cacheControl`
 * replaces the page's `no-cache` when `data` depends on who asks.
 */
export type SendAppPage = (reply: FastifyReply, options: { status?: number; title: string; data?: unknown; cacheControl?: string }) => Promise<FastifyReply>;

const Html = Type.String({ description: 'The web app\'s page.' });

/** lading's mark (the pages' brand mark) as the tab's icon, at `/favicon.svg`. */
export const FAVICON_PATH = '/favicon.svg';
const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 28 28"><rect width="28" height="28" rx="6" fill="#0b5cad"/><path d="M7 19h14M7 14h14M7 9h9" stroke="#fff" stroke-width="2.4" stroke-linecap="round"/></svg>\n';

export function registerWebRoutes(app: TypedApp, deps: WebRouteDeps): { sendPage: SendAppPage } {
  const sendPage: SendAppPage = async (reply, options) => {
    const build = await deps.assets.build();
    const headers = options.cacheControl ? { ...APP_PAGE_HEADERS, 'cache-control': options.cacheControl } : APP_PAGE_HEADERS;
    return reply.code(options.status ?? 200).headers(headers).send(appPage(build, options.title, options.data));
  };

  app.route({
    method: 'GET',
    url: '/',
    schema: {
      tags: ['web'], operationId: 'webApp', summary: 'The web app (for browsers): browse, upload, download and share',
      response: { 200: { description: 'The app\'s page.', content: { 'text/html': { schema: Html } } }, ...errorResponses() },
    },
    handler: async (_request, reply) => {
      await sendPage(reply, { title: 'lading' });
    },
  });

  app.route({
    method: 'GET',
    url: FAVICON_PATH,
    schema: {
      tags: ['web'], operationId: 'favicon', summary: 'lading\'s icon, for browser tabs and bookmarks',
      response: { 200: { description: 'An SVG image; cached for a day.', content: { 'image/svg+xml': { schema: Type.String() } } }, ...errorResponses() },
    },
    handler: async (_request, reply) => reply.headers({ 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }).send(FAVICON),
  });

  app.route({
    method: 'GET',
    url: `${ASSET_PREFIX}:file`,
    schema: {
      tags: ['web'], operationId: 'webAsset', summary: 'A file of the web app (script or stylesheet), named by a hash of its content',
      params: Type.Object({ file: Type.String({ description: 'e.g. main-3F2A9C1B.js' }) }),
      response: {
        200: { description: 'The file; cached for a year (its name changes with its content).', content: { 'text/javascript': { schema: Type.String() }, 'text/css': { schema: Type.String() } } },
        304: Type.Null({ description: 'Not modified (If-None-Match).' }),
        ...errorResponses(404),
      },
    },
    handler: async (request, reply) => sendAsset(request.params.file, request.headers['if-none-match'], reply),
  });

  const sendAsset = async (file: string, ifNoneMatch: string | undefined, reply: FastifyReply) => {
    const build = await deps.assets.build();
    const asset = build.byPath.get(`${ASSET_PREFIX}${file}`);
    if (!asset) throw new LadingError('NOT_FOUND', `No file ${ASSET_PREFIX}${file}: reload the app's page.`);
    reply.headers({
      'content-type': asset.contentType,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      etag: asset.etag,
    });
    // NOTE: weak comparison (RFC 9110 13.1.2): a compressed answer carried the ETag as a weak one.
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)) return reply.code(304).send();
    return reply.send(keepCompressed(asset.body));
  };

  return { sendPage };
}
