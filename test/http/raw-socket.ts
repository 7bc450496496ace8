/**
 * Sends exact bytes over a TCP socket and reads what comes back, for requests `fetch` cannot
 * send (malformed framing, duplicate headers, half-closes). Parses only the first response.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote, as latin1 text. */
  raw: string;
  /** 0 when the server wrote nothing before closing. */
  status: number;
  /** Header names in lower case; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: string;
}

export interface RawOptions {
  /** Half-close (send FIN) after writing, as `shutdown(SHUT_WR)` does. */
  halfClose?: boolean;
  /** Give up waiting after this many ms and return what arrived (default 5000). */
  timeoutMs?: number;
  /** Bytes written after `pauseMs`, e.g. the rest of a body. */
  later?: string | Buffer;
  pauseMs?: number;
}

function parse(raw: string): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (!raw.startsWith('HTTP/') || end < 0) return { raw, status: 0, headers: {}, body: '' };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.slice(end + 4);
  if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']));
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunked(body).body;
  return { raw, status: Number(statusLine!.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}

/** The data of a chunked body (RFC 9112 7.1), and whether its last chunk arrived. */
function dechunked(framed: string): { body: string; ended: boolean } {
  let body = '';
  let at = 0;
  for (;;) {
    const line = framed.indexOf('\r\n', at);
    if (line < 0) return { body, ended: false };
    const size = parseInt(framed.slice(at, line), 16);
    if (Number.isNaN(size)) return { body, ended: false };
    if (size === 0) return { body, ended: true };
    if (framed.length < line + 2 + size + 2) return { body: body + framed.slice(line + 2), ended: false };
    body += framed.slice(line + 2, line + 2 + size);
    at = line + 2 + size + 2;
  }
}

/** Whether `raw` holds one complete response, framed by Content-Length or chunked. */
function complete(raw: string): boolean {
  const answer = parse(raw);
  if (answer.status === 0) return false;
  const length = answer.headers['content-length'];
  if (length === undefined && /chunked/i.test(answer.headers['transfer-encoding'] ?? '')) return dechunked(raw.slice(raw.indexOf('\r\n\r\n') + 4)).ended;
  if (length === undefined) return answer.headers['transfer-encoding'] === undefined && /^(1\d\d|204|304)$/.test(String(answer.status));
  return Buffer.byteLength(raw.slice(raw.indexOf('\r\n\r\n') + 4), 'latin1') >= Number(length);
}

/**
 * Connects to the host of `base`, writes `bytes`, and resolves with the first response once it
 * is complete, the server closes, or `timeoutMs` passes.
 */
export function rawExchange(base: string, bytes: string | Buffer, options: RawOptions = {}): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
    let raw = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(raw));
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5000);
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('latin1');
      if (complete(raw)) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', finish);
    socket.once('connect', () => {
      socket.write(bytes);
      const rest = () => {
        if (options.later !== undefined) socket.write(options.later);
        if (options.halfClose) socket.end();
      };
      if (options.pauseMs) setTimeout(rest, options.pauseMs);
      else rest();
    });
  });
}
