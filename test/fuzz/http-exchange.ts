/**
 * Sends one fuzz request exactly as planned (path bytes, headers and body untouched: no `..`
 * resolution, no re-encoding, no connection reuse) and writes an exchange up as a readable block
 * with a curl line that reproduces it. Decides nothing about whether a response is right.
 */
import { request as httpRequest } from 'node:http';

export interface ConcreteRequest {
  method: string;
  /** The request target as sent: path and query, already percent-encoded (or deliberately not). */
  target: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** Header values to print in place of secrets, e.g. `authorization` → `Bearer $ALICE_TOKEN`. */
  redacted: Record<string, string>;
}

interface ConcreteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface Exchange {
  /** Which step of the scenario, e.g. `step 3` or `step 3, follow-up: listing of the parent`. */
  label: string;
  /** The operation of the document the request belongs to (`PUT /api/registered/{*}`). */
  operationId: string;
  request: ConcreteRequest;
  /** `null` when no response came (timeout, reset before the status line). */
  response: ConcreteResponse | null;
  error: string | null;
  ms: number;
}

/** Longest wait for a complete response; a server that takes longer is reported as hanging. */
const TIMEOUT_MS = 10_000;

/**
 * Sends `req` to `base` on a new connection and resolves with the exchange; never rejects. A
 * response that arrives while the body is still being written (an early refusal) counts.
 */
export function send(base: string, req: ConcreteRequest, label: string, operationId: string): Promise<Exchange> {
  const url = new URL(base);
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (response: ConcreteResponse | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ label, operationId, request: req, response, error, ms: Date.now() - started });
    };
    const headers = { ...req.headers };
    if (req.body) headers['content-length'] = String(req.body.length);
    let responding = false;
    const r = httpRequest({ host: url.hostname, port: url.port, method: req.method, path: req.target, headers, agent: false }, (res) => {
      responding = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }, null));
      res.on('error', (err) => finish({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }, `response cut: ${err.message}`));
    });
    const timer = setTimeout(() => {
      finish(null, `no complete response within ${TIMEOUT_MS} ms`);
      r.destroy();
    }, TIMEOUT_MS);
    // NOTE: after an early response the server may close while the body is still being
    // written (EPIPE, ECONNRESET); that is only an error when no response came at all, and a
    // response may start just after the write fails.
    r.on('error', (err) => setTimeout(() => {
      if (!responding) finish(null, `request failed: ${err.message}`);
    }, 50));
    r.end(req.body ?? undefined);
  });
}

/** `bytes` as a bash ANSI-C string (`$'…'`), so control characters and invalid UTF-8 are exact. */
function ansiC(bytes: Buffer): string {
  let out = '';
  const text = bytes.toString('latin1');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x27) out += "\\'";
    else if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20 && c < 0x7f) out += text[i];
    else out += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `$'${out}'`;
}

const SHOWN_BODY_BYTES = 600;
const SHOWN_TARGET_CHARS = 300;
/** Longest body or URL a curl line carries; longer ones are replayed with the seed and path. */
const CURL_BYTES = 4096;

function showBody(body: Buffer): string {
  const shown = body.subarray(0, SHOWN_BODY_BYTES);
  const text = shown.toString('utf8');
  const printable = Buffer.from(text, 'utf8').equals(shown) && !/[\u0000-\u0008\u000e-\u001f]/.test(text);
  const more = body.length > SHOWN_BODY_BYTES ? ` … (${body.length} bytes in all)` : '';
  return `${printable ? JSON.stringify(text) : ansiC(shown)}${more}`;
}

/** A curl command that sends the same request (secrets as shell variables). */
function curlLine(base: string, req: ConcreteRequest): string {
  const parts = ['curl -sS -i --path-as-is', '-X', req.method];
  for (const [name, value] of Object.entries(req.headers)) {
    parts.push('-H', req.redacted[name] ? `"${name}: ${req.redacted[name]}"` : ansiC(Buffer.from(`${name}: ${value}`)));
  }
  if (req.body) {
    parts.push('--data-binary', req.body.length <= CURL_BYTES ? ansiC(req.body) : `"(${req.body.length} bytes: replay with the seed and path above)"`);
  }
  const url = Buffer.from(`${base}${req.target}`);
  parts.push(url.length <= CURL_BYTES ? ansiC(url) : `"(a ${url.length}-byte URL: replay with the seed and path above)"`);
  return parts.join(' ');
}

/** The exchange as an indented block: request line, headers, body, then the response. */
export function describeExchange(base: string, ex: Exchange): string {
  const { request: req, response: res } = ex;
  const target = JSON.stringify(req.target.slice(0, SHOWN_TARGET_CHARS)).slice(1, -1);
  const more = req.target.length > SHOWN_TARGET_CHARS ? ` … (${req.target.length} characters in all)` : '';
  const lines = [`${ex.label} (${ex.operationId}):`, `  > ${req.method} ${target}${more}`];
  for (const [name, value] of Object.entries(req.headers)) lines.push(`  > ${name}: ${req.redacted[name] ?? JSON.stringify(value).slice(1, -1)}`);
  if (req.body) lines.push(`  > body (${req.body.length} bytes): ${showBody(req.body)}`);
  if (res) {
    lines.push(`  < ${res.status} ${String(res.headers['content-type'] ?? '(no content-type)')}`);
    if (res.body.length > 0) lines.push(`  < ${showBody(res.body)}`);
  }
  if (ex.error) lines.push(`  ! ${ex.error}`);
  lines.push(`  $ ${curlLine(base, req)}`);
  return lines.join('\n');
}
