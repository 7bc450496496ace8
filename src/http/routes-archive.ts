/**
 * `POST /api/archive`: several data objects and collections in one ZIP download, for a JSON
 * body (scripts) or an HTML form (the web app submits one, so the archive streams to the
 * browser's disk rather than into a page's memory). The core checks read access to every
 * path (`core/selection-archive.ts`); this route only translates.
 */
import type { Backend } from '../core/backend.ts';
import { type Path, parsePath } from '../core/path.ts';
import { MAX_SELECTION_PATHS, openSelection, selectionArchive } from '../core/selection-archive.ts';
import { type ArchiveLimits, sendSelectionArchive } from './archive-download.ts';
import { type Authenticate, viaOf } from './authorization.ts';
import { Bytes, type TypedApp, errorResponses } from './schemas.ts';
import { Type } from './typebox.ts';

interface ArchiveRouteDeps {
  backend: Backend;
  authenticate: Authenticate;
  archives: ArchiveLimits;
}

const ArchiveBody = Type.Object({
  paths: Type.Union([
    Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'A JSON body: the paths.' }),
    Type.String({ minLength: 1, description: 'A form: the paths, one a line.' }),
  ], { description: `The data objects and collections to put in the archive (at most ${MAX_SELECTION_PATHS}), each under its own name; no two with the same name, none inside another.` }),
  name: Type.Optional(Type.String({ minLength: 1, description: 'The archive\'s name: its top folder, and the file is <name>.zip (default "selection").' })),
  csrf_token: Type.Optional(Type.String({ description: 'A form sent with the browser session\'s cookie: the csrf_token of GET /auth/session (a form cannot send X-CSRF-Token).' })),
}, { additionalProperties: false, examples: [{ paths: ['/lading/home/alice/results', '/lading/home/alice/notes.txt'], name: 'for-bob' }] });

/** The paths a body names: the JSON array, or the form field's lines (CR LF or LF; blank lines skipped). `INVALID_PATH`. */
function pathsOf(paths: string | string[]): Path[] {
  const given = typeof paths === 'string' ? paths.split(/\r?\n/).filter((line) => line !== '') : paths;
  return given.map(parsePath);
}

export function registerArchiveRoutes(app: TypedApp, deps: ArchiveRouteDeps): void {
  const { backend } = deps;
  app.post('/api/archive', {
    schema: {
      tags: ['registered'], security: [{ bearer: [] }, { session: [] }], operationId: 'archiveSelection',
      summary: 'Several data objects and collections as one ZIP archive',
      description: 'Send JSON {"paths": [...], "name": "..."} or a form (application/x-www-form-urlencoded: paths one a line, name, and with the session cookie csrf_token). The archive holds a top folder named `name` and in it each entity under its own name, a collection with everything below it: members stored, Zip64, UTF-8 names, each checked against its stored SHA-256 as it passes; a member that cannot be read whole cuts the transfer. Read access to every path is checked before any byte is sent: 403 or 404 names the first path refused; 400 for no path, more than ' + MAX_SELECTION_PATHS + ', two with one name or one inside another; 413 beyond archives.max_entries members, 429 beyond archives.concurrent_per_user archives at once.',
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      body: ArchiveBody,
      response: {
        200: { description: 'The archive.', content: { 'application/zip': { schema: Bytes } } },
        ...errorResponses(401, 403, 404, 413, 415, 429),
      },
    },
  }, async (request, reply) => {
    await deps.authenticate(request);
    const actor = await backend.actorOf(request.auth!.credential, viaOf(request));
    const paths = pathsOf(request.body.paths);
    return sendSelectionArchive(request, reply, deps.archives, {
      key: `user:${actor.user}`,
      open: () => openSelection(backend, actor, paths, request.body.name),
      write: (selection) => selectionArchive(selection, backend, actor, new Date()),
    });
  });
}
