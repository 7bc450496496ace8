/**
 * A pass-through stream that hashes and counts the bytes of an upload while they flow, and
 * stops the flow when a size limit is crossed. It never buffers more than one chunk.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { LadingError } from './errors.ts';

export interface MeterResult {
  size: number;
  /** Raw SHA-256 digest. */
  sha256: Buffer;
  /** Raw MD5 digest, only when asked for (to check an announced one). */
  md5: Buffer | null;
}

export class Meter extends Transform {
  #sha256: Hash = createHash('sha256');
  #md5: Hash | null;
  #size = 0;
  #limit: number;
  #result: MeterResult | null = null;

  /** `limit` is the largest accepted size in bytes; more rejects with `PAYLOAD_TOO_LARGE`. */
  constructor(options: { limit: number; md5?: boolean }) {
    // NOTE: a high watermark of one large chunk keeps backpressure tight without slowing
    // the pipe down with many tiny reads.
    super({ highWaterMark: 1 << 20 });
    this.#limit = options.limit;
    this.#md5 = options.md5 ? createHash('md5') : null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.#size += chunk.length;
    if (this.#size > this.#limit) {
      cb(new LadingError('PAYLOAD_TOO_LARGE', `The upload is larger than the limit of ${this.#limit} bytes.`));
      return;
    }
    this.#sha256.update(chunk);
    this.#md5?.update(chunk);
    cb(null, chunk);
  }

  override _flush(cb: TransformCallback): void {
    this.#result = { size: this.#size, sha256: this.#sha256.digest(), md5: this.#md5?.digest() ?? null };
    cb();
  }

  /** The figures of the whole stream; only available after it ended. */
  get result(): MeterResult {
    if (!this.#result) throw new Error('Meter.result read before the stream ended');
    return this.#result;
  }
}

/** iRODS-style checksum string: `sha2:` + base64 of the SHA-256 digest. */
export function checksumString(sha256: Buffer): string {
  return 'sha2:' + sha256.toString('base64');
}

/** The raw SHA-256 digest inside a `sha2:` checksum string. */
export function checksumDigest(checksum: string): Buffer {
  return Buffer.from(checksum.slice('sha2:'.length), 'base64');
}

/** What `checkedBytes` checks a stream against: the size and checksum the catalog recorded. */
export interface RecordedBytes {
  /** For messages: the object's path. */
  path: string;
  size: number;
  /** `sha2:` checksum. */
  checksum: string;
}

/**
 * `stream`'s bytes, checked as they pass: throws `CHECKSUM_MISMATCH` when they are more or fewer
 * than `recorded.size`, or when their SHA-256 is not the recorded checksum, before the last
 * chunk is handed on (so whoever writes the chunks never completes wrong bytes). The error's
 * `details.reason` says what differs in a few words, without the path.
 */
export async function* checkedBytes(recorded: RecordedBytes, stream: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let read = 0;
  let held: Buffer | null = null;
  const mismatch = (reason: string, message: string): LadingError => new LadingError('CHECKSUM_MISMATCH', message, { details: { reason } });
  for await (const chunk of stream) {
    read += chunk.length;
    if (read > recorded.size) throw mismatch(`more than the ${recorded.size} bytes recorded`, `'${recorded.path}' holds more than its ${recorded.size} stored bytes.`);
    hash.update(chunk);
    if (held) yield held;
    held = chunk;
  }
  if (read !== recorded.size) throw mismatch(`${read} of the ${recorded.size} bytes recorded`, `'${recorded.path}' could be read for ${read} of its ${recorded.size} bytes only.`);
  const digest = hash.digest();
  if (!digest.equals(checksumDigest(recorded.checksum))) {
    throw mismatch(`SHA-256 ${checksumString(digest)} where ${recorded.checksum} was recorded`, `The bytes of '${recorded.path}' are not the ones stored: their SHA-256 differs from the checksum ${recorded.checksum}.`);
  }
  if (held) yield held;
}
