/**
 * The HTTP figures of every front: requests by front, route pattern, method and status, their
 * latency, the bytes received and sent, and the uploads in flight. A front on the API's Fastify
 * app is counted by `instrumentApp` without code of its own; a front on a listener of its own
 * (S3) hands each exchange to `HttpMeter.track`. Labels take few values: a route's pattern
 * (never a path), a known method, a status, a front's name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { CounterFamily, HistogramFamily } from './series.ts';

/** The methods a label may name; any other is `other` (an unmatched request may carry anything). */
const METHODS = new Set([
  'GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS',
  // WebDAV's.
  'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK',
]);

/** Latency buckets, in seconds: a cached metadata answer (~1 ms) up to a long transfer. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The route label of a request no route matched. */
export const UNMATCHED = 'unmatched';

/** The status label of an exchange that ended (the client went away) before its answer was sent whole. */
export const ABORTED = 'aborted';

/**
 * What a front on a listener of its own calls for each exchange. `route` is read when the
 * exchange ends, so a front may route after `track` (return `UNMATCHED` for none); it must be a
 * pattern (`/{bucket}/{key+}`), never the request's path.
 */
export interface HttpMeter {
  track(front: string, req: IncomingMessage, res: ServerResponse, route: () => string): void;
}

/** What the previous exchange on a connection had read and written when it ended. */
interface SocketMark {
  read: number;
  written: number;
}

export class HttpMetrics implements HttpMeter {
  readonly #requests: CounterFamily;
  readonly #duration: HistogramFamily;
  readonly #received: CounterFamily;
  readonly #sent: CounterFamily;
  readonly #uploads: Gauge<'front'>;
  // NOTE: bytes are counted on the connection, between the end of its previous exchange and the
  // end of this one, so headers count and no body chunk read before the request's start is lost.
  readonly #marks = new WeakMap<Socket, SocketMark>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.#requests = new CounterFamily(registry, {
      name: 'lading_http_requests_total', help: 'HTTP requests answered, by front, route pattern, method and status (aborted: the client left before the answer was sent whole).',
      labelNames: ['front', 'route', 'method', 'status'],
    });
    this.#duration = new HistogramFamily(registry, {
      name: 'lading_http_request_duration_seconds', help: 'Time from a request\'s arrival to the end of its answer, by front, route pattern and method.',
      labelNames: ['front', 'route', 'method'], buckets: LATENCY_BUCKETS,
    });
    this.#received = new CounterFamily(registry, { name: 'lading_http_received_bytes_total', help: 'Bytes received from clients (headers and bodies), by front.', labelNames: ['front'] });
    this.#sent = new CounterFamily(registry, { name: 'lading_http_sent_bytes_total', help: 'Bytes sent to clients (headers and bodies), by front.', labelNames: ['front'] });
    this.#uploads = new Gauge({ name: 'lading_http_uploads_in_flight', help: 'Uploads being received or stored now (PUT, POST and PATCH requests with a body other than JSON or a URL-encoded form), by front.', labelNames: ['front'], registers });
  }

  /**
   * Counts every request of `app`, including those of routes registered later and of fronts
   * registered on it (call before any route): a route's `config.front` names its front, `api`
   * by default.
   */
  instrumentApp(app: FastifyInstance): void {
    app.addHook('onRequest', (request, reply, done) => {
      const started = performance.now();
      const raw = request.raw;
      const uploading = carriesBody(raw);
      if (uploading) this.#uploads.inc({ front: frontOf(request.routeOptions.config) });
      reply.raw.once('close', () => {
        const options = request.routeOptions;
        const front = frontOf(options.config);
        if (uploading) this.#uploads.dec({ front });
        this.#record(front, options.url ?? UNMATCHED, raw, reply.raw, started);
      });
      done();
    });
  }

  track(front: string, req: IncomingMessage, res: ServerResponse, route: () => string): void {
    const started = performance.now();
    const uploading = carriesBody(req);
    if (uploading) this.#uploads.inc({ front });
    res.once('close', () => {
      if (uploading) this.#uploads.dec({ front });
      this.#record(front, route(), req, res, started);
    });
  }

  #record(front: string, route: string, req: IncomingMessage, res: ServerResponse, started: number): void {
    const method = METHODS.has(req.method ?? '') ? req.method! : 'other';
    const status = res.writableFinished ? String(res.statusCode) : ABORTED;
    this.#requests.series(front, route, method, status).value += 1;
    this.#duration.series(front, route, method).observe((performance.now() - started) / 1000);
    const socket = req.socket;
    const mark = this.#marks.get(socket);
    // NOTE: a destroyed socket still reports what it had read and written.
    const read = socket.bytesRead;
    const written = socket.bytesWritten;
    this.#received.series(front).value += read - (mark?.read ?? 0);
    this.#sent.series(front).value += written - (mark?.written ?? 0);
    if (mark) {
      mark.read = read;
      mark.written = written;
    } else {
      this.#marks.set(socket, { read, written });
    }
  }
}

function frontOf(config: unknown): string {
  const front = (config as { front?: unknown } | undefined)?.front;
  return typeof front === 'string' ? front : 'api';
}

/**
 * Whether `req` sends data to store: PUT, POST or PATCH with a body (a length above 0 or a
 * chunked one) that is not a small JSON or form-encoded API call (a login, a metadata change).
 */
function carriesBody(req: IncomingMessage): boolean {
  const m = req.method;
  if (m !== 'PUT' && m !== 'POST' && m !== 'PATCH') return false;
  const type = req.headers['content-type'];
  if (type !== undefined && /^application\/(?:json|x-www-form-urlencoded)\b/i.test(type)) return false;
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}
