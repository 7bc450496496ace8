/**
 * Starts a whole lading node for a test — the same `startServer` as `lading serve` — on port 0
 * with a temporary data directory, plus small HTTP helpers.
 */
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/wiring/config.ts';
import { hashPassword } from '../../src/identity/secrets/password.ts';
import type { DepsOverrides } from '../../src/wiring/deps.ts';
import { startServer, type RunningServer } from '../../src/wiring/server.ts';

export interface TestServer extends RunningServer {
  dataDir: string;
  zone: string;
  /** Creates a local user with a password. */
  addUser(name: string, password?: string): Promise<void>;
  /** Logs in through POST /auth/login and returns the bearer token. */
  login(name: string, password?: string): Promise<string>;
  /** Creates a user and logs in; returns the Authorization header value. */
  bearer(name: string): Promise<string>;
  /** `${url}/api/registered/<zone>/home/<user>/<rest>` */
  home(user: string, rest?: string): string;
  stop(): Promise<void>;
}

export async function startTestServer(
  flags: Record<string, unknown> = {},
  options: { dataDir?: string; overrides?: DepsOverrides; keepData?: boolean } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'lading-test-')));
  const config = loadConfig({ env: {}, flags: { data: dataDir, listen: '127.0.0.1:0', 'log.level': 'silent', zone: 'tz', ...flags } });
  // NOTE: every test server fails a response its schema would silently change.
  const server = await startServer(config, { checkResponses: true, ...options.overrides });
  const t: TestServer = {
    ...server,
    dataDir,
    zone: config.zone,
    async addUser(name, password = `pw-${name}`) {
      await server.deps.backend.addUser(name, { passwordHash: await hashPassword(password) });
    },
    async login(name, password = `pw-${name}`) {
      const res = await fetch(`${server.url}/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name, password }),
      });
      const body = (await res.json()) as { Response: { data: { token: string } } };
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`);
      return body.Response.data.token;
    },
    async bearer(name) {
      await t.addUser(name);
      return `Bearer ${await t.login(name)}`;
    },
    home(user, rest = '') {
      return `${server.url}/api/registered/${config.zone}/home/${user}${rest ? '/' + rest : ''}`;
    },
    async stop() {
      await server.close(1000);
      if (!options.keepData) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

export interface EnvelopeBody {
  Meta: { data_type: string; elements: number; errors: number; status: number; continuation_token?: string | null };
  Response: { data: any; errors: Record<string, string>[] | null };
}

export async function json(res: Response): Promise<EnvelopeBody> {
  const text = await res.text();
  try {
    return JSON.parse(text) as EnvelopeBody;
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

/**
 * Sends a request with the path exactly as given (fetch and curl resolve `..` and `%2e%2e`
 * before sending, which would hide what a hostile client can send).
 */
export async function rawRequest(
  base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string,
): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http');
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Starts a PUT (or `method`, with `headers` added: a tus PATCH) of a raw body that the test
 * feeds itself (`write`, then `end`), so something can happen while the upload is in flight:
 * chunked, or with `contentLength` announced. `write` resolves once its chunk is handed to the
 * socket; `answer` with the status and the body text.
 */
export function heldUpload(url: string, authorization: string, options: { contentLength?: number; method?: string; headers?: Record<string, string> } = {}): {
  write(chunk: Buffer): Promise<void>;
  end(chunk?: Buffer): void;
  answer: Promise<{ status: number; body: string }>;
} {
  const headers: Record<string, string | number> = { authorization, 'content-type': 'application/octet-stream', ...options.headers };
  if (options.contentLength !== undefined) headers['content-length'] = options.contentLength;
  const req = request(new URL(url), { method: options.method ?? 'PUT', headers });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  return { write: (chunk) => new Promise((resolve) => { req.write(chunk, () => resolve()); }), end: (chunk) => void req.end(chunk), answer };
}
