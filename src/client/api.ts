/**
 * How the client commands talk to a lading server: Node's own fetch (undici) through one
 * keep-alive connection pool per client, the bearer token on every request, and the API's
 * error envelope turned into a `ClientError` with its message and the documented exit code.
 * File bodies go through `stream` (undici's own request API on the same pool: Node streams,
 * about half the CPU of fetch's web streams per byte). Never writes the token anywhere but the
 * Authorization header.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

type BodyInit = NonNullable<ConstructorParameters<typeof Request>[1]>['body'];
import { ClientError } from './errors.ts';
import { EXIT, exitCodeOfStatus } from './exit-codes.ts';

/** Where to send requests and with which token. */
export interface ServerTarget {
  /** Base URL, no trailing slash, e.g. `https://staging.example.org`. */
  url: string;
  /** The bearer token (empty for the few requests that need none, such as logging in). */
  token: string;
  /** The remembered server's name, when it came from the configuration. */
  name?: string;
  /** The user the token belongs to, when known (from the login). */
  user?: string;
  /** That user's home collection, when known (from the login). */
  home?: string;
}

export interface RequestInit {
  headers?: Record<string, string>;
  body?: BodyInit | NodeJS.ReadableStream | AsyncIterable<Uint8Array> | null;
  signal?: AbortSignal;
  /** Statuses answered as they are instead of becoming a `ClientError`. */
  accept?: number[];
  /** Required by fetch for a streamed body. */
  duplex?: 'half';
}

/** What `stream` answers: the status, the headers and the body as a Node stream (consume or destroy it). */
export interface StreamResponse {
  status: number;
  headers: { get(name: string): string | null };
  body: Readable;
}

export interface StreamInit {
  headers?: Record<string, string>;
  /** A Buffer, a Node stream or an async iterable of Buffers (sent as they come). */
  body?: Buffer | Readable | AsyncIterable<Buffer> | null;
  signal?: AbortSignal;
  /** Statuses answered as they are instead of becoming a `ClientError`. */
  accept?: number[];
  /** Bytes the response body buffers before the socket is paused. */
  highWaterMark?: number;
}

/** The subset of undici's `Dispatcher.request` (Node's bundled copy) that `stream` uses. */
type RequestFn = (options: {
  origin: string; path: string; method: string; headers: Record<string, string>; body?: StreamInit['body'];
  signal?: AbortSignal; highWaterMark?: number;
}) => Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; body: Readable & { text(): Promise<string> } }>;

/** The dispatcher (connection pool) type of Node's bundled undici, which the global fetch accepts. */
type Dispatcher = { close(): Promise<void>; request?: RequestFn };
type DispatcherClass = new (options: { connections?: number; keepAliveTimeout?: number; keepAliveMaxTimeout?: number }) => Dispatcher;

/**
 * The class of Node's bundled undici `Agent`. Node keeps undici inside and does not export it;
 * its global dispatcher is an instance, registered under a symbol once undici is loaded (which
 * creating a `Headers` does), so a pool with our own limits comes from the same class — no
 * second copy of undici to install or keep compatible.
 */
function agentClass(): DispatcherClass | null {
  const global = globalDispatcher();
  const ctor = (global as { constructor?: unknown } | undefined)?.constructor;
  return typeof ctor === 'function' && (ctor as { name?: string }).name === 'Agent' ? ctor as DispatcherClass : null;
}

/**
 * Lets go of a (small) response body nobody reads: drained, so that the connection can serve
 * the next request, and never an unhandled 'error' event.
 */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.resume();
}

/** Node's global undici dispatcher (registered once undici is loaded), or null. */
function globalDispatcher(): Dispatcher | null {
  void new Headers();
  return ((globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] as Dispatcher | undefined) ?? null;
}

/** The message of an API error envelope (`Response.errors`: `{title: message}` objects), or null. */
export function envelopeMessage(body: unknown): string | null {
  const errors = (body as { Response?: { errors?: unknown } } | null)?.Response?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return null;
  const messages = errors.flatMap((e) => (e && typeof e === 'object' ? Object.values(e as Record<string, unknown>).map(String) : []));
  return messages.length ? messages.join('; ') : null;
}

/** Seconds of a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterOf(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The `ClientError` for a non-2xx answer, with the API's own message when it sent an envelope. Consumes the body. */
export async function errorOfResponse(response: Response): Promise<ClientError> {
  return errorOfAnswer(response.status, response.statusText, response.headers, await response.text().catch(() => ''));
}

function errorOfAnswer(status: number, statusText: string, headers: { get(name: string): string | null }, text: string): ClientError {
  let message: string | null = null;
  try {
    message = envelopeMessage(JSON.parse(text));
  } catch { /* not JSON: the status says it */ }
  message ??= `the server answered ${status} ${statusText || ''}`.trim();
  return new ClientError(message, exitCodeOfStatus(status), { status, retryAfter: retryAfterOf(headers.get('retry-after')) });
}

/** The `ClientError` for a request that got no answer: interrupted (130) or a network failure (retryable, 1). */
export function errorOfFailure(err: unknown, url: string, signal?: AbortSignal): ClientError {
  if (err instanceof ClientError) return err;
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    return new ClientError('interrupted', EXIT.INTERRUPTED, { cause: err });
  }
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  // NOTE: fetch wraps the network error (`cause`); undici's request API throws it as it is.
  const why = cause?.code ?? cause?.message ?? (err as { code?: string } | null)?.code ?? (err instanceof Error ? err.message : String(err));
  return new ClientError(`cannot reach ${new URL(url).origin}: ${why}`, EXIT.FAILED, { cause: err, retryable: true });
}

/** One server's API, through one keep-alive connection pool. */
export class ApiClient {
  readonly target: ServerTarget;
  readonly #dispatcher: Dispatcher | null;

  constructor(target: ServerTarget, options: { connections?: number } = {}) {
    this.target = { ...target, url: target.url.replace(/\/+$/, '') };
    const Agent = agentClass();
    // NOTE: without the class (a Node that changed its internals) the global dispatcher is
    // used, which keeps connections alive too, only without our connection limit.
    this.#dispatcher = Agent ? new Agent({ connections: options.connections ?? 8, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 }) : null;
  }

  /**
   * Sends a request to `path` (starting with '/') with the bearer token. Non-2xx answers
   * become `ClientError` with the API's message (401/403 → AUTH, 404 → NOT_FOUND, 409/412 →
   * CONFLICT, 460 → INTEGRITY, else FAILED) unless `accept` lists the status; no answer at all
   * becomes a retryable `ClientError`, an aborted request one with exit code 130.
   */
  async request(method: string, path: string, init: RequestInit = {}): Promise<Response> {
    const url = `${this.target.url}${path}`;
    const headers: Record<string, string> = { ...init.headers };
    if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method, headers, signal: init.signal, body: init.body as BodyInit | null | undefined,
        ...(init.duplex || (init.body && typeof (init.body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') ? { duplex: 'half' } : {}),
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
        redirect: 'manual',
      } as globalThis.RequestInit);
    } catch (err) {
      throw errorOfFailure(err, url, init.signal);
    }
    if ((response.status >= 200 && response.status < 300) || init.accept?.includes(response.status)) return response;
    throw await errorOfResponse(response);
  }

  /**
   * `request` for file bodies: the same pool, token and errors, but Node streams both ways and
   * the response body buffering up to `highWaterMark` bytes. Without undici's request API (a
   * Node that changed its internals) it falls back to fetch.
   */
  async stream(method: string, path: string, init: StreamInit = {}): Promise<StreamResponse> {
    const request = (this.#dispatcher ?? globalDispatcher())?.request;
    if (typeof request !== 'function') {
      const response = await this.request(method, path, { ...init, body: init.body as RequestInit['body'] });
      return { status: response.status, headers: response.headers, body: response.body ? Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]) };
    }
    const url = `${this.target.url}${path}`;
    const { origin, pathname, search } = new URL(url);
    const headers: Record<string, string> = { ...init.headers };
    if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
    let answer: Awaited<ReturnType<RequestFn>>;
    try {
      answer = await request.call(this.#dispatcher ?? globalDispatcher(), {
        origin, path: pathname + search, method, headers, body: init.body ?? null, signal: init.signal, highWaterMark: init.highWaterMark,
      });
    } catch (err) {
      throw errorOfFailure(err, url, init.signal);
    }
    const raw = answer.headers;
    const get = (name: string): string | null => {
      const v = raw[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    };
    const response: StreamResponse = { status: answer.statusCode, headers: { get }, body: answer.body };
    if ((response.status >= 200 && response.status < 300) || init.accept?.includes(response.status)) return response;
    throw errorOfAnswer(response.status, '', response.headers, await answer.body.text().catch(() => ''));
  }

  /** `request`, then the envelope's payload (`Response.data`). */
  async json<T>(method: string, path: string, init: RequestInit = {}): Promise<T> {
    const response = await this.request(method, path, { ...init, headers: { accept: 'application/json', ...init.headers } });
    const text = await response.text();
    try {
      return (JSON.parse(text) as { Response: { data: T } }).Response.data;
    } catch (cause) {
      throw new ClientError(`the server's answer to ${method} ${path} is not a lading envelope`, EXIT.FAILED, { cause });
    }
  }

  /** '/api/registered' followed by the absolute `path`, each segment percent-encoded. */
  registeredUrl(path: string): string {
    const segments = path.split('/').filter((s) => s !== '');
    return `/api/registered/${segments.map(encodeURIComponent).join('/')}`;
  }

  /** Closes the pooled connections. */
  async close(): Promise<void> {
    await this.#dispatcher?.close();
  }
}

/** Tries after the first failure of a request, by default (`--retries`). */
export const DEFAULT_RETRIES = 10;
/** The longest pause between two tries, by default, in seconds (`--retry-wait`). */
export const DEFAULT_RETRY_WAIT_S = 30;
/** The longest one Retry-After of the server is honoured, in milliseconds: a lease is a minute by default. */
const RETRY_AFTER_MAX_MS = 300_000;
/** The longest a request waits in all while the server keeps saying when to come back. */
const RETRY_AFTER_TOTAL_MS = 3_600_000;

export interface RetryOptions {
  /** Tries after the first failure (default `DEFAULT_RETRIES`). */
  retries?: number;
  /** The longest pause between two tries, in milliseconds (default `DEFAULT_RETRY_WAIT_S` s). */
  maxWaitMs?: number;
  signal?: AbortSignal;
  onRetry?(err: ClientError, waitMs: number): void;
}

/**
 * Runs `attempt` again while it throws a retryable `ClientError`: up to `retries` more times,
 * pausing 1 s, 2 s, 4 s, … (at most `maxWaitMs`), each pause between half and all of that (so
 * that many clients do not come back at once, and never a pause of nothing). An answer with
 * Retry-After (a busy upload's lease, a 503) is waited out as the server says and does not
 * use up a try: the server is there and tells when to come back; for an hour at most. Other
 * errors and the last one are thrown.
 */
export async function withRetry<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_RETRY_WAIT_S * 1000;
  let failures = 0;
  let told = 0;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ClientError) || !err.retryable || options.signal?.aborted) throw err;
      let waitMs: number;
      if (err.retryAfter !== undefined && told < RETRY_AFTER_TOTAL_MS) {
        waitMs = Math.min(RETRY_AFTER_MAX_MS, err.retryAfter * 1000);
        told += Math.max(waitMs, 1000);
      } else {
        if (++failures > retries) throw err;
        const backoff = Math.min(maxWaitMs, 1000 * 2 ** (failures - 1));
        waitMs = Math.round(backoff / 2 + Math.random() * (backoff / 2));
      }
      options.onRetry?.(err, waitMs);
      try {
        await sleep(waitMs, undefined, { signal: options.signal });
      } catch (cause) {
        throw new ClientError('interrupted', EXIT.INTERRUPTED, { cause });
      }
    }
  }
}
