/**
 * The HTTP/1.1 message rules lading enforces below its routes: refusals of Node's parser and of
 * CONNECT written as the envelope on the raw socket, Host, versions and transfer codings a
 * route cannot serve, the idle timeout of request bodies, and answers to half-closed
 * connections. It reads no body and decides nothing about paths or permissions.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LadingError } from '../core/errors.ts';
import { JSON_TYPE, errorEnvelopeOf } from './errors.ts';
import { PRIVATE_NO_STORE } from './caching.ts';

// NOTE: taken from the module object rather than imported: an ES import of node:http makes
// Node evaluate all its exports, and its WebSocket ones load the whole of undici (~10 MiB).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

type ParserError = Error & { code?: string; reason?: string; rawPacket?: unknown };

/** A request line naming a well-formed HTTP version (other than 1.x, when the parser refused it). */
const VERSIONED_LINE = /^[!-~]+ [!-~]+ HTTP\/\d\.\d\r\n/;

/** The error a request Node's parser (llhttp) refused is answered with. */
function parserRefusal(err: ParserError): LadingError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new LadingError('HEADERS_TOO_LARGE', 'The request line and headers are larger than 16 KiB.', { cause: err });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new LadingError('REQUEST_TIMEOUT', 'The request headers did not arrive in time.', { cause: err });
    case 'HPE_INVALID_VERSION':
      // NOTE: a line ending in a bare LF is refused with the same code: only a well-formed
      // version is one lading does not speak.
      if (Buffer.isBuffer(err.rawPacket) && VERSIONED_LINE.test(err.rawPacket.toString('latin1'))) {
        return new LadingError('HTTP_VERSION_NOT_SUPPORTED', 'lading speaks HTTP/1.1 and HTTP/1.0.', { cause: err });
      }
      break;
    default:
  }
  const reason = (err.reason ?? err.message).replace(/\.$/, '');
  return new LadingError('BAD_REQUEST', `The request is not valid HTTP/1.1: ${reason}.`, { cause: err });
}

/** The whole HTTP/1.1 response carrying `err` as the envelope, closing the connection. */
function rawResponse(err: LadingError): string {
  const { status, body } = errorEnvelopeOf(err);
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_TYPE}\r\n`
    + `X-Content-Type-Options: nosniff\r\nCache-Control: ${PRIVATE_NO_STORE}\r\n`
    + `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

/** Writes `err` to a socket no response is under way on, then closes it. */
function answerOnSocket(socket: Duplex, err: LadingError): void {
  const busy = (socket as Duplex & { _httpMessage?: { headersSent: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !busy) socket.end(rawResponse(err), () => socket.destroy());
  else socket.destroy();
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (bad framing, bad characters,
 * headers over the limit, …) is answered with the envelope: 431 for headers over the limit,
 * 505 for another HTTP version, 408 for headers that took too long, 400 for everything else.
 * A connection the client reset gets nothing.
 */
export function clientErrorHandler(this: FastifyInstance, err: ParserError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const mapped = parserRefusal(err);
  this.log.info({ code: mapped.code, parser: err.code }, 'request refused by the parser');
  answerOnSocket(socket, mapped);
}

export interface ProtocolOptions {
  /** How long a request body may send no byte before the request is dropped, in ms. */
  bodyIdleTimeoutMs: number;
}

/** Whether a request with `headers` frames a body with content (RFC 9112 §6.3): chunked, or a length above 0. */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/**
 * Registers the rules on `app`, before its routes. Answers CONNECT with 501; refuses an
 * HTTP/1.1 request without Host (400), a version other than 1.0/1.1 (505), and a
 * Transfer-Encoding other than `chunked` (501, RFC 9112 §6.1: lading decodes no other coding,
 * and storing the coded bytes would change the object); drops a request whose body sends
 * nothing for `bodyIdleTimeoutMs` (408, the upload's temporary blob is discarded); and keeps
 * the connection writable when the client half-closes after its request, so it gets its answer.
 */
export function registerProtocolRules(app: FastifyInstance, options: ProtocolOptions): void {
  const server = app.server;
  // NOTE: without this Node ends the socket as soon as the client half-closes (sends FIN
  // after its body), and the answer to a request already being served is lost although the
  // upload commits; then its retry gets 409. `httpAllowHalfOpen` is the http server's own
  // switch for this (Node's `_http_server.js`, `socketOnEnd`), set by no constructor option.
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    answerOnSocket(socket, new LadingError('NOT_IMPLEMENTED', 'lading is not a proxy: CONNECT is not implemented.'));
  });

  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw;
    if (raw.httpVersionMajor !== 1) {
      throw new LadingError('HTTP_VERSION_NOT_SUPPORTED', `lading speaks HTTP/1.1 and HTTP/1.0, not HTTP/${raw.httpVersion}.`);
    }
    if (raw.httpVersionMinor >= 1 && raw.headers.host === undefined) {
      throw new LadingError('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header.');
    }
    const codings = raw.headers['transfer-encoding']?.split(',').map((c) => c.trim().toLowerCase());
    if (codings && codings.some((c) => c !== 'chunked')) {
      throw new LadingError('NOT_IMPLEMENTED', `lading decodes no transfer coding but chunked, not '${codings.filter((c) => c !== 'chunked').join(', ')}'; send the body as it is.`);
    }
    if (hasBody(raw.headers) && !raw.complete) watchBodyIdle(request, options.bodyIdleTimeoutMs);
    done();
  });
}

/**
 * Fails the body of `request` with `REQUEST_TIMEOUT` when no byte of it arrives for `ms`: the
 * reader of the body (an upload) fails, discards what it wrote and answers 408. The watch ends
 * with the body. It does not limit how long a moving transfer may take.
 */
function watchBodyIdle(request: FastifyRequest, ms: number): void {
  const raw = request.raw;
  const socket = raw.socket;
  // NOTE: Node's parser refreshes the socket's timer on every chunk it reads, and emits
  // 'timeout' on the request while the request is incomplete.
  socket.setTimeout(ms);
  // NOTE: only the body's end stops the watch: after the answer Node sets the socket's timer
  // to the keep-alive timeout, which a later stop would clear.
  const stop = () => socket.setTimeout(0);
  raw.once('end', stop);
  raw.once('timeout', () => {
    stop();
    request.log.warn({ idleSeconds: ms / 1000 }, 'request body idle: dropped, its temporary data discarded');
    const err = new LadingError('REQUEST_TIMEOUT', `The request body sent nothing for ${ms / 1000} s; nothing was stored.`);
    // NOTE: the readers of the body (the upload's meter, the multipart parser, Fastify's body
    // reader) listen for 'error' on the request and fail with this error, so the route
    // answers 408; destroying the request would close the socket before any answer.
    if (raw.listenerCount('error') > 0) raw.emit('error', err);
    else raw.destroy();
  });
}
