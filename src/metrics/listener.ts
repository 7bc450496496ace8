/**
 * The metrics listener: a `node:http` server of its own on `metrics.listen`, never the public
 * port, answering `GET /metrics` (the Prometheus text format) and `GET /ready` (readiness, as
 * `/api/ready` answers it). Nothing else is served on it, and it takes no credential: bind it
 * to an address only the monitoring network reaches.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLadingError, LadingError } from '../core/errors.ts';
import { envelope } from '../http/envelope.ts';
import { JSON_TYPE, errorEnvelopeOf, retryAfterOf } from '../http/errors.ts';
import type { Metrics } from './metrics.ts';

export interface MetricsListener {
  /** The address it listens on, e.g. `127.0.0.1:9464`. */
  address: AddressInfo;
  close(): Promise<void>;
}

/**
 * Listens on `host:port`. Rejects with the listening error (`EADDRINUSE`, …) for the caller to
 * word. A scrape that fails answers 500 with one line; it never takes the node down.
 */
export async function listenMetrics(metrics: Metrics, readiness: { check(): Promise<void> }, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET and HEAD.\n');
      return;
    }
    if (path === '/metrics') {
      metrics.text().then((text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }).end(method === 'HEAD' ? undefined : text);
      }, (err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`Collecting the metrics failed: ${(err as Error)?.message ?? err}\n`);
      });
      return;
    }
    if (path === '/ready') {
      readiness.check().then(() => {
        res.writeHead(200, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' }).end(JSON.stringify(envelope('ready')));
      }, (err: unknown) => {
        const error = isLadingError(err) ? err : new LadingError('INTERNAL', 'The readiness check failed.', { cause: err });
        const { status, body } = errorEnvelopeOf(error);
        const retryAfter = retryAfterOf(error);
        res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store', ...(retryAfter ? { 'Retry-After': retryAfter } : {}) }).end(JSON.stringify(body));
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: this listener serves /metrics and /ready.\n');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
