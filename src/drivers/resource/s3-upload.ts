/**
 * Streams a body into one S3 object for the S3 resource driver: one PutObject when the body
 * is at most one part, else a multipart upload of `partSize` parts with at most `queueSize` of
 * them in flight. The body's chunks are copied into part buffers that the write allocates once
 * and reuses — at most `queueSize + 1` of them, `partSize` bytes each, however large the
 * object — so a large upload makes no new large buffer per part: the socket's chunks die young
 * (a cheap young collection frees them), where parts assembled from them anew would each be
 * promoted to the old generation and wait there for a full collection.
 *
 * It knows S3's requests only: which errors are the store's, and what they mean to lading, is
 * the caller's to say (`storeError`).
 */
import { addAbortSignal, type Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, PutObjectCommand, UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

export interface StreamUploadOptions {
  client: S3Client;
  Bucket: string;
  Key: string;
  partSize: number;
  queueSize: number;
  signal?: AbortSignal | undefined;
  /**
   * Settles before the object can become visible (its PutObject or CompleteMultipartUpload is
   * sent only then); a rejection fails the write with that error.
   */
  publishAfter?: Promise<unknown> | undefined;
  /** Turns a failure of the store into the error the write rejects with. */
  storeError(err: unknown): unknown;
}

/**
 * Uploads `source` to `Key`; resolves with the number of bytes stored once the object is
 * visible. Rejects with the source's own error when it fails or `signal` aborts (an
 * `AbortError`), with the error of `publishAfter` when that rejects, and with `storeError` of
 * the store's failure when the store fails first (the source is then destroyed, so no more of
 * it is read). Before it rejects, the parts in flight have settled and the multipart upload,
 * if one was begun, is aborted (a refused abort is left to the caller's sweep).
 */
export async function uploadStream(source: Readable, o: StreamUploadOptions): Promise<number> {
  const { client, Bucket, Key, partSize, queueSize } = o;
  if (o.signal) addAbortSignal(o.signal, source);
  let size = 0;
  // The chunks of a body not yet larger than one part: a small body is sent as they are.
  let small: Buffer[] | null = [];
  let uploadId: Promise<string> | null = null;
  const free: Buffer[] = [];
  let part: Buffer | null = null;
  let fill = 0;
  let partNumber = 0;
  const etags: string[] = [];
  const inFlight = new Set<Promise<void>>();
  let storeFailure = null as { err: unknown } | null;
  const failStore = (err: unknown): void => {
    storeFailure ??= { err };
    // NOTE: stops reading a source that is still flowing (or waiting for its client).
    if (!source.destroyed) source.destroy(err instanceof Error ? err : new Error('the store failed'));
  };

  /** Throws the store's failure, once there was one. */
  const check = (): void => {
    if (storeFailure) throw storeFailure.err;
  };

  const dispatch = async (): Promise<void> => {
    while (inFlight.size >= queueSize) await Promise.race(inFlight);
    check();
    const buffer = part!;
    const body = fill === buffer.length ? buffer : buffer.subarray(0, fill);
    const n = ++partNumber;
    part = null;
    fill = 0;
    const sending = (async () => {
      const UploadId = await uploadId!;
      const res = await client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: n, Body: body, ContentLength: body.length }));
      etags[n - 1] = res.ETag ?? '';
      // NOTE: the request has sent the whole body by the time it answers, so the buffer is free.
      free.push(buffer);
    })().catch(failStore);
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  };

  const put = async (chunk: Buffer): Promise<void> => {
    for (let offset = 0; offset < chunk.length;) {
      part ??= free.pop() ?? Buffer.allocUnsafeSlow(partSize);
      const copied = chunk.copy(part, fill, offset);
      fill += copied;
      offset += copied;
      if (fill === partSize) await dispatch();
    }
  };

  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (small) {
        small.push(chunk);
        if (size <= partSize) continue;
        // NOTE: larger than one part: from here on a multipart upload.
        uploadId = client.send(new CreateMultipartUploadCommand({ Bucket, Key })).then((res) => res.UploadId!);
        uploadId.catch(() => {});
        const chunks = small;
        small = null;
        for (const c of chunks) await put(c);
      } else {
        await put(chunk);
      }
    }
    check();
    if (small) {
      await o.publishAfter;
      const body = small.length === 1 ? small[0]! : Buffer.concat(small, size);
      try {
        await client.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentLength: body.length }));
      } catch (err) {
        storeFailure = { err };
        throw err;
      }
      return size;
    }
    if (fill > 0) await dispatch();
    while (inFlight.size > 0) await Promise.race(inFlight);
    check();
    await o.publishAfter;
    try {
      await client.send(new CompleteMultipartUploadCommand({
        Bucket, Key, UploadId: await uploadId!,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
      }));
    } catch (err) {
      storeFailure = { err };
      throw err;
    }
    return size;
  } catch (err) {
    await Promise.all(inFlight);
    const UploadId = await uploadId?.catch(() => null);
    if (UploadId) await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
    throw storeFailure ? o.storeError(storeFailure.err) : err;
  }
}
