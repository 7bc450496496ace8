/**
 * What the end-to-end tests of resumable uploads share: a large file generated on disk by
 * streaming (never held in memory), a TCP relay in front of the lading nodes that counts the
 * bytes clients send, can cut a connection or run a step (kill -9) once a number of bytes went
 * through, and can switch to another node; and one upload by the real tus client.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { type AddressInfo, Socket, createServer } from 'node:net';
import { once } from 'node:events';
import * as tus from 'tus-js-client';

const MIB = 1024 * 1024;

/** Writes `bytes` random bytes to `path` a MiB at a time; resolves with their SHA-256 (base64). */
export async function generateFile(path: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let written = 0; written < bytes;) {
    const chunk = randomBytes(Math.min(MIB, bytes - written));
    hash.update(chunk);
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return hash.digest('base64');
}

/** A step the relay runs once clients have sent `at` bytes through it in total. */
export interface RelayTrigger {
  at: number;
  /** Cut the connection that crossed the mark (both sides), or run `run`. */
  action: 'cut' | ((bytes: number) => void | Promise<void>);
  fired?: boolean;
}

/** A TCP relay on 127.0.0.1 to a lading node (`target`, switchable). */
export class Relay {
  readonly #server = createServer((client) => this.#connect(client));
  readonly #sockets = new Set<Socket>();
  target: { host: string; port: number };
  /** Bytes clients sent through the relay. */
  sent = 0;
  cuts = 0;
  readonly triggers: RelayTrigger[] = [];

  constructor(targetUrl: string) {
    this.target = hostPort(targetUrl);
  }

  /** Listens on 127.0.0.1 (`port`, or any free port); resolves with the relay's URL. */
  async listen(port = 0): Promise<string> {
    this.#server.listen(port, '127.0.0.1');
    await once(this.#server, 'listening');
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  switchTo(targetUrl: string): void {
    this.target = hostPort(targetUrl);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#server.close();
    await once(this.#server, 'close').catch(() => {});
  }

  #connect(client: Socket): void {
    const upstream = new Socket();
    upstream.connect(this.target.port, this.target.host);
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on('close', () => {
        this.#sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
      s.on('error', () => {});
    }
    upstream.on('data', (chunk: Buffer) => {
      if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    client.on('data', (chunk: Buffer) => {
      this.sent += chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
      for (const trigger of this.triggers) {
        if (trigger.fired || this.sent < trigger.at) continue;
        trigger.fired = true;
        if (trigger.action === 'cut') {
          this.cuts++;
          client.destroy();
          upstream.destroy();
        } else {
          client.pause();
          void Promise.resolve(trigger.action(this.sent)).finally(() => client.resume());
        }
      }
    });
  }
}

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/** What the tus client did, seen from its requests. */
export interface TusRun {
  /** The upload's URL. */
  url: string;
  /** Upload-Offset of each HEAD the client sent to resume. */
  resumedAt: number[];
  /** Status of every answer, in order. */
  statuses: string[];
}

/**
 * Uploads `file` with tus-js-client to `endpoint`, with the file handed over as a
 * `fs.ReadStream` (which the client reopens at any offset to resume), retrying for a while
 * after every failure. Resolves once the client reports success.
 */
export function tusUpload(file: string, endpoint: string, authorization: string, metadata: Record<string, string>, retries = 120): Promise<TusRun> {
  const run: TusRun = { url: '', resumedAt: [], statuses: [] };
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(createReadStream(file), {
      endpoint,
      headers: { Authorization: authorization },
      metadata,
      retryDelays: Array.from({ length: retries }, (_, i) => (i === 0 ? 0 : 500)),
      onAfterResponse(req, res) {
        run.statuses.push(`${req.getMethod()} ${res.getStatus()}`);
        if (req.getMethod() === 'HEAD' && res.getStatus() === 200) run.resumedAt.push(Number(res.getHeader('Upload-Offset')));
      },
      onSuccess() {
        run.url = upload.url ?? '';
        resolve(run);
      },
      onError(err) {
        reject(new Error(`the tus client gave up: ${err.message}\n${run.statuses.slice(-20).join(', ')}`));
      },
    });
    upload.start();
  });
}

/** The SHA-256 (base64) of a download. */
export async function downloadHash(url: string, authorization: string): Promise<string> {
  const res = await fetch(url, { headers: { authorization } });
  if (res.status !== 200 || !res.body) throw new Error(`download answered ${res.status}`);
  const hash = createHash('sha256');
  for await (const chunk of res.body) hash.update(chunk);
  return hash.digest('base64');
}
