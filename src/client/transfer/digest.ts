/**
 * SHA-256 for transfers: of a file or a byte range of it (read in large blocks, never held
 * whole), and the conversions between the forms the API uses — the catalog's `sha2:<base64>`,
 * RFC 9530 `sha-256=:<base64>:` (Content-Digest, Repr-Digest) and hex (ETag, manifests).
 */
import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

const BLOCK = 1 << 20;

/**
 * Feeds bytes `[start, end)` of `file` to every hash in `hashes`, in order, a block at a time.
 * Rejects when the file is shorter than `end` (it changed under us).
 */
export async function hashRange(file: string, start: number, end: number, hashes: Hash[]): Promise<void> {
  if (end <= start) return;
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(Math.min(BLOCK, end - start));
    for (let at = start; at < end;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - at), at);
      if (bytesRead === 0) throw new Error(`${file} is shorter than ${end} bytes: it changed during the transfer`);
      const chunk = buffer.subarray(0, bytesRead);
      for (const h of hashes) h.update(chunk);
      at += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/** The raw SHA-256 of a whole file. */
export async function sha256File(file: string, size: number): Promise<Buffer> {
  const hash = createHash('sha256');
  await hashRange(file, 0, size, [hash]);
  return hash.digest();
}

// The worker of `TrailingHash`: plain JavaScript (it is evaluated, not loaded as a module).
const TRAILING_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { openSync, readSync, closeSync } = require('node:fs');
const fd = openSync(workerData, 'r');
const hash = createHash('sha256');
const buffer = Buffer.allocUnsafe(${BLOCK});
let at = 0;
parentPort.on('message', (upTo) => {
  if (upTo < 0) {
    closeSync(fd);
    parentPort.postMessage(hash.digest());
    return;
  }
  while (at < upTo) {
    const n = readSync(fd, buffer, 0, Math.min(buffer.length, upTo - at), at);
    if (n === 0) throw new Error(workerData + ' is shorter than the ' + upTo + ' bytes written to it');
    hash.update(buffer.subarray(0, n));
    at += n;
  }
});
`;

/**
 * The SHA-256 of a file being written front to back, computed by a worker thread that reads
 * the file behind the writer, so hashing and receiving use two cores. What is hashed is what
 * the file holds, the bytes the user gets. Call `written` as the prefix grows, then `digest`
 * once, or `close` to give up.
 */
export class TrailingHash {
  readonly #worker: Worker;
  readonly #result: Promise<Buffer>;

  constructor(file: string) {
    this.#worker = new Worker(TRAILING_WORKER, { eval: true, workerData: file });
    this.#result = new Promise((resolve, reject) => {
      this.#worker.once('message', (digest: Uint8Array) => resolve(Buffer.from(digest)));
      this.#worker.once('error', reject);
      this.#worker.once('exit', () => reject(new Error('the hashing thread ended without a digest')));
    });
    // NOTE: a rejection nobody awaits yet (the download broke first) is not an unhandled one.
    this.#result.catch(() => {});
  }

  /** The first `bytes` bytes of the file are written. */
  written(bytes: number): void {
    this.#worker.postMessage(bytes);
  }

  /** The digest of what was declared written; ends the thread. */
  async digest(): Promise<Buffer> {
    this.#worker.postMessage(-1);
    try {
      return await this.#result;
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    await this.#worker.terminate();
  }
}

/** The raw digest in a catalog checksum (`sha2:<base64>`), or null for another algorithm. */
export function digestOfChecksum(checksum: string | null | undefined): Buffer | null {
  if (!checksum?.startsWith('sha2:')) return null;
  const digest = Buffer.from(checksum.slice(5), 'base64');
  return digest.length === 32 ? digest : null;
}

/** `sha-256=:<base64>:` for Content-Digest. */
export function contentDigest(sha256: Buffer): string {
  return `sha-256=:${sha256.toString('base64')}:`;
}

/** The sha-256 member of a Repr-Digest or Content-Digest value, or null when it has none. */
export function digestOfHeader(value: string | null): Buffer | null {
  if (!value) return null;
  for (const member of value.split(',')) {
    const m = /^\s*sha-256\s*=\s*:([A-Za-z0-9+/]*={0,2}):\s*$/i.exec(member);
    if (m) {
      const digest = Buffer.from(m[1]!, 'base64');
      if (digest.length === 32) return digest;
    }
  }
  return null;
}
