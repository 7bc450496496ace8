/**
 * Reads one S3 object for the S3 resource driver as consecutive ranged GETs of `rangeSize`
 * bytes, up to `queueSize` of them open at once, handed on strictly in order. An object stored
 * in parts is a list of segments on several stores (OpenStack Swift's s3api), and one GET
 * fetches them one after the other, waiting for each segment's first byte; GETs opened ahead
 * overlap those waits. A GET opened ahead is not read before its turn, so the bytes waiting
 * are the ones the operating system's socket buffers hold, never buffers of lading's: the
 * memory of a read does not grow with `queueSize` beyond those buffers.
 *
 * It knows S3's requests only: what the store's failures mean to lading is the caller's
 * (`storeError`).
 */
import { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ByteRange } from '../../core/ports.ts';

export interface RangedReadOptions {
  client: S3Client;
  Bucket: string;
  Key: string;
  /** Bytes each GET asks for. */
  rangeSize: number;
  queueSize: number;
  /** Turns a failure of the store while the stream flows into the error the stream emits. */
  storeError(err: unknown): unknown;
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/**
 * Opens `Key` (whole, or `range`); resolves once the store answered the first GET, and
 * rejects with the store's own error when that fails (the caller maps it: missing, range
 * outside the object). The stream's later GETs that fail before any of their bytes were
 * handed on are sent once more; a failure after that, or a GET that answers fewer bytes than
 * asked, makes the stream emit `storeError` of it. Destroying the stream releases the GETs
 * opened ahead.
 */
export async function openRanged(o: RangedReadOptions, range?: ByteRange): Promise<Readable> {
  const { client, Bucket, Key, rangeSize, queueSize } = o;
  const get = async (start: number, end: number): Promise<{ body: Readable; total: number | null }> => {
    const res = await client.send(new GetObjectCommand({ Bucket, Key, Range: `bytes=${start}-${end}` }));
    const total = /\/(\d+)$/.exec(res.ContentRange ?? '');
    return { body: res.Body as Readable, total: total ? Number(total[1]) : null };
  };
  const start = range?.start ?? 0;
  let first;
  try {
    first = await get(start, range ? Math.min(range.end, start + rangeSize - 1) : start + rangeSize - 1);
  } catch (err) {
    // NOTE: an empty object has no byte for a range to name; S3 answers 416.
    if (range || statusOf(err) !== 416) throw err;
    return (await client.send(new GetObjectCommand({ Bucket, Key }))).Body as Readable;
  }
  const end = Math.min(range?.end ?? Infinity, (first.total ?? 0) - 1);
  const firstEnd = Math.min(end, start + rangeSize - 1);
  if (first.total === null || firstEnd >= end) return first.body;

  interface Ahead { start: number; end: number; opened: Promise<{ body: Readable }> }
  const ahead: Ahead[] = [];
  let next = firstEnd + 1;
  const openNext = (): void => {
    if (next > end) return;
    const part = { start: next, end: Math.min(end, next + rangeSize - 1) };
    next = part.end + 1;
    const opened = get(part.start, part.end);
    // NOTE: a body the store breaks while it waits for its turn errs with no reader yet; its
    // reader sees the error when it gets there.
    opened.then(({ body }) => body.on('error', () => {}), () => {});
    ahead.push({ ...part, opened });
  };
  async function* parts(): AsyncGenerator<Buffer> {
    let current: Readable | null = first!.body;
    try {
      for (let i = 1; i < queueSize; i++) openNext();
      yield* current as AsyncIterable<Buffer>;
      while (ahead.length > 0) {
        const part = ahead.shift()!;
        openNext();
        let handed = 0;
        for (let attempt = 0; ; attempt++) {
          try {
            current = (attempt === 0 ? await part.opened : await get(part.start, part.end)).body;
            for await (const chunk of current as AsyncIterable<Buffer>) {
              handed += chunk.length;
              yield chunk;
            }
            break;
          } catch (err) {
            // NOTE: a GET opened ahead may have been closed by the store while it waited.
            if (handed > 0 || attempt >= 1) throw o.storeError(err);
          }
        }
        if (handed !== part.end - part.start + 1) {
          throw o.storeError(new Error(`the store answered ${handed} of the ${part.end - part.start + 1} bytes asked for`));
        }
      }
    } finally {
      current?.destroy();
      for (const part of ahead) part.opened.then(({ body }) => body.destroy(), () => {});
    }
  }
  return Readable.from(parts(), { objectMode: false });
}
