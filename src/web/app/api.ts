/**
 * The app's one way to the API: `fetch` on the same origin with the session cookie, the CSRF
 * header on every unsafe request, and every refusal turned into an `ApiError` carrying the
 * envelope's title and message, so the pages show what the API said and never a raw answer.
 */

/** A refusal of the API (its envelope's title and message), or a request that got no answer (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

let csrfToken: string | null = null;
let onUnauthenticated: (() => void) | null = null;

/** The CSRF token of the session (from `/auth/session`), sent on every unsafe request. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function csrfHeaders(): Record<string, string> {
  return csrfToken ? { 'X-CSRF-Token': csrfToken } : {};
}

/** What to do when the API says the session is gone (401 on a request that had one). */
export function whenSignedOut(handler: () => void): void {
  onUnauthenticated = handler;
}

/** The envelope's first error as an `ApiError`; a generic one when the body is not the envelope. */
export async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { Response?: { errors?: Record<string, string>[] | null } };
    const first = body.Response?.errors?.[0];
    if (first) {
      const [title, message] = Object.entries(first)[0] ?? ['Error', ''];
      return new ApiError(res.status, title, message);
    }
  } catch {
    // Not the envelope (a proxy's page, say): fall through to the status.
  }
  return new ApiError(res.status, res.statusText || 'Error', `The server answered ${res.status}${res.status >= 500 ? '; try again in a moment' : ''}.`);
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Sends a request and resolves with the response when its status is 2xx (or 304); rejects with `ApiError` otherwise. */
export async function request(method: string, url: string, init: { json?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json', ...init.headers };
  if (UNSAFE.has(method)) Object.assign(headers, csrfHeaders());
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: 'same-origin', signal: init.signal ?? null });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'No connection', 'The server cannot be reached. Check your network connection and try again.');
  }
  if (res.ok || res.status === 304) return res;
  const error = await errorOf(res);
  if (res.status === 401 && onUnauthenticated) onUnauthenticated();
  throw error;
}

/** `Response.data` of a JSON envelope answer. */
export async function api<T>(method: string, url: string, init: { json?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const res = await request(method, url, init);
  const body = (await res.json()) as { Response: { data: T } };
  return body.Response.data;
}

/** A path's segments, each percent-encoded, for URLs: `/a b/c` → `/a%20b/c`. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** The last segment of a path. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The parent of a path (`/` for a top-level one). */
export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

/** `parent/name`. */
export function join(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

/** The registered URL of a path. */
export function registeredUrl(path: string): string {
  return `/api/registered${encodePath(path)}`;
}

// NOTE: the API's messages advise scripts ("Use force=true to overwrite it.", "(DELETE
// /api/shares/<id>)"); a person in the app has buttons for that instead, so that advice goes.
const API_ADVICE = [/\s*Use force=true[^.]*\./g, /\s*\((?:GET|PUT|POST|PATCH|DELETE) \/api\/[^)]*\)/g];

/** An API message for people: without the advice meant for scripts. */
export function forPeople(message: string): string {
  return API_ADVICE.reduce((text, advice) => text.replace(advice, ''), message);
}

/** The message to show for any error. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return forPeople(err.title && err.status !== 0 ? `${err.title}: ${err.message}` : err.message);
  return err instanceof Error ? err.message : String(err);
}

/** The message for a name taken where a folder or file is created, renamed or moved. */
export function nameTaken(name: string): string {
  return `A folder or file named “${name}” already exists here. Choose another name.`;
}
