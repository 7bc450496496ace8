/**
 * Resource driver for an S3-compatible object store (AWS S3, Ceph RGW, MinIO, OpenStack Swift
 * with s3api, …) through `@aws-sdk/client-s3`, configured for stores that are not AWS:
 * path-style addressing, checksums only when an operation requires them.
 *
 * A write streams as a multipart upload of `partSize` parts with at most `queueSize` parts in
 * flight, filled in buffers the write reuses (`s3-upload.ts`): (queueSize + 1) × partSize
 * bytes (5 × 8 MiB = 40 MiB by default), however large the object; a body of at most one part
 * goes up as a single PUT. A read of more than `readRangeSize` bytes is consecutive ranged
 * GETs of that size, up to `queueSize` open at once and read in order (`s3-download.ts`): what
 * waits is in the sockets' buffers, not in lading's memory.
 * An object key is visible only once its upload completes (S3 semantics), and a failed or
 * aborted write aborts its multipart upload before it rejects; uploads a crash left behind are
 * what `sweepTemporaries` aborts. A read that has started survives a later `delete` on AWS S3
 * and Ceph RGW; on OpenStack Swift (s3api) deleting an object of several parts removes its
 * segments at once, so such a read ends early with an error (never with other bytes).
 *
 * A staged write (resumable upload) is a multipart upload begun at once: each part of at least
 * `partSize` bytes is a checkpoint, and what is left at the end of an append (or when its client
 * goes away) is kept as a small tail object `<key>.tail-<n>` that the next append puts in front
 * of its first part and `complete` sends as the last one. Bytes of completed parts are never
 * copied again; an append holds one part in memory.
 *
 * It adapts S3 only: it knows nothing of paths in the namespace or of the catalog, and never
 * logs or reports the credentials it is given.
 */
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CopyObjectCommand, CreateMultipartUploadCommand, DeleteObjectCommand,
  GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, S3Client, UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { LadingError, isLadingError } from '../../core/errors.ts';
import type { ByteRange, Resource, StagedState, StagedWrites } from '../../core/ports.ts';
import { nextChunk } from '../staged-source.ts';
import { openRanged } from './s3-download.ts';
import { uploadStream } from './s3-upload.ts';

export interface S3ResourceOptions {
  /** Base URL of the store, e.g. `https://s3.example.org` (path-style requests go to `<endpoint>/<bucket>/<key>`). */
  endpoint: string;
  bucket: string;
  /** Region the requests are signed for (`us-east-1` for most stores that are not AWS). */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Prepended to every key, e.g. `lading/`; lets several deployments share a bucket. Default ''. */
  prefix?: string;
  /** Size of each uploaded part in bytes (default 8 MiB; S3 requires at least 5 MiB). */
  partSize?: number;
  /** Parts uploaded at once, and ranged GETs a read keeps open (default 4). */
  queueSize?: number;
  /**
   * Bytes each ranged GET of a read asks for (default 64 MiB, at least 1 MiB); an object or
   * range no larger is one GET. NOTE: every GET costs the store a request's work besides its
   * bytes (on OpenStack Swift's s3api: checking the signature and reading the object's
   * manifest again); at 8 MiB, Swift spent ~20% more CPU on a 512 MiB read through lading
   * than on the same read in one GET, and the store's CPU is what bounds a transfer
   * (bench/README.md). Larger ranges cost lading no memory: a GET opened ahead is not read
   * before its turn.
   */
  readRangeSize?: number;
  /**
   * The largest object `copy` copies with one CopyObject (default and most: 5 GiB, S3's
   * limit; at least 5 MiB); a larger one is copied in parts of at most this size (UploadPartCopy).
   */
  copyObjectMax?: number;
  /**
   * Whether a request's body is hashed into its signature (SigV4's `x-amz-content-sha256`):
   * `auto` (the default) over http only, since TLS already guards the bytes of an https
   * request (as AWS's botocore does); `always`; `never` (`UNSIGNED-PAYLOAD`, for a store on a
   * network the operator trusts). A hashed body costs a pass of SHA-256 over every byte
   * uploaded, besides the one lading's checksum takes.
   */
  payloadSigning?: PayloadSigning;
}

export type PayloadSigning = 'auto' | 'always' | 'never';

/** Whether requests to `endpoint` hash their bodies into their signatures (see `S3ResourceOptions.payloadSigning`). */
export function signsPayload(endpoint: string, mode: PayloadSigning = 'auto'): boolean {
  return mode === 'always' || (mode === 'auto' && new URL(endpoint).protocol === 'http:');
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$/;
const MIB = 1024 * 1024;
export const DEFAULT_PART_SIZE = 8 * MIB;
export const DEFAULT_QUEUE_SIZE = 4;
const DEFAULT_READ_RANGE_SIZE = 64 * MIB;
const MAX_CONNECTIONS = 1024;
/** The largest object one CopyObject copies (S3's limit); larger ones are copied in parts. */
export const COPY_OBJECT_MAX = 5 * 1024 * MIB;
/** Smallest part of a copy in parts; a part is larger when 10,000 of these would not hold the object. */
const COPY_PART = 512 * MIB;

interface S3ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(err: unknown): number | undefined {
  return (err as S3ErrorLike | null)?.$metadata?.httpStatusCode;
}

function isMissing(err: unknown): boolean {
  const e = err as S3ErrorLike | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || statusOf(err) === 404;
}

/**
 * Turns a failure of the store into the error model: a full store becomes `STORAGE_FULL`; an
 * unreachable store, a missing bucket, refused credentials or a server error become
 * `UNAVAILABLE` naming S3 (the message carries the store's error name, never a credential).
 */
function storeError(err: unknown, action: string): unknown {
  if (isLadingError(err)) return err;
  const e = (err ?? {}) as S3ErrorLike;
  const status = statusOf(err);
  if (e.name === 'QuotaExceeded' || e.name === 'EntityTooLarge' || status === 413 || status === 507) {
    return new LadingError('STORAGE_FULL', 'The object store is full; nothing was stored.', { cause: err });
  }
  if (e.name === 'AbortError') return err;
  const what = e.name && e.name !== 'Error' ? e.name : (e.code ?? 'no answer');
  return new LadingError('UNAVAILABLE', `The S3 object store failed to ${action} (${what}).`, { cause: err });
}

/**
 * Creates an S3 resource. Throws (synchronously, a plain `Error` naming the option, never its
 * value) when a required option is missing, the endpoint is not an http(s) URL, or a key
 * prefix, part or range size is unusable; contacts the store only when used.
 */
export function createS3Resource(options: S3ResourceOptions): Resource {
  for (const name of ['endpoint', 'bucket', 'region', 'accessKeyId', 'secretAccessKey'] as const) {
    if (typeof options[name] !== 'string' || !options[name]) throw new Error(`s3 resource: option \`${name}\` is required`);
  }
  if (!URL.canParse(options.endpoint) || !['http:', 'https:'].includes(new URL(options.endpoint).protocol)) {
    throw new Error('s3 resource: option `endpoint` must be an http:// or https:// URL');
  }
  const prefix = options.prefix ?? '';
  if (prefix.startsWith('/') || prefix.length > 512) throw new Error('s3 resource: `prefix` must not start with / and must be short');
  const partSize = options.partSize ?? DEFAULT_PART_SIZE;
  const queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
  if (!Number.isInteger(partSize) || partSize < 5 * MIB) throw new Error('s3 resource: `partSize` must be at least 5 MiB');
  if (!Number.isInteger(queueSize) || queueSize < 1) throw new Error('s3 resource: `queueSize` must be a positive integer');
  const readRangeSize = options.readRangeSize ?? DEFAULT_READ_RANGE_SIZE;
  if (!Number.isInteger(readRangeSize) || readRangeSize < MIB) throw new Error('s3 resource: `readRangeSize` must be at least 1 MiB');
  if (!['auto', 'always', 'never', undefined].includes(options.payloadSigning)) throw new Error('s3 resource: `payloadSigning` must be auto, always or never');
  const copyObjectMax = options.copyObjectMax ?? COPY_OBJECT_MAX;
  if (!Number.isInteger(copyObjectMax) || copyObjectMax < 5 * MIB || copyObjectMax > COPY_OBJECT_MAX) {
    throw new Error('s3 resource: `copyObjectMax` must be between 5 MiB and 5 GiB');
  }
  const Bucket = options.bucket;

  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    forcePathStyle: true,
    // NOTE: stores other than AWS reject or mishandle the default CRC32 trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // NOTE: every download being streamed holds a connection until its client has read it;
    // the SDK's default of 50 would let 50 slow readers stall every other request of the node.
    requestHandler: {
      httpAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
      httpsAgent: { keepAlive: true, maxSockets: MAX_CONNECTIONS },
    },
  });

  if (!signsPayload(options.endpoint, options.payloadSigning)) {
    // NOTE: the signer hashes a body unless this header already names its hash.
    client.middlewareStack.add((next) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (request.body != null && request.headers) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    }, { step: 'build', name: 'ladingUnsignedPayload' });
  }

  const objectKey = (key: string): string => {
    if (!KEY.test(key)) throw new LadingError('INTERNAL', 'Invalid resource key.');
    return prefix + key;
  };

  /** Aborts the multipart uploads under the prefix started before `before`; returns how many. */
  const abortUploads = async (before: Date, only?: string, keep?: (key: string) => boolean): Promise<number> => {
    let aborted = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      const page = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: only ?? prefix, KeyMarker, UploadIdMarker }));
      for (const u of page.Uploads ?? []) {
        if (!u.Key || !u.UploadId || (only !== undefined && u.Key !== only)) continue;
        if (u.Initiated && u.Initiated.getTime() >= before.getTime()) continue;
        if (keep?.(u.Key.slice(prefix.length))) continue;
        try {
          await client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }));
          aborted++;
        } catch (err) {
          // NOTE: another node's sweeper, or the upload's own completion, got there first.
          if ((err as S3ErrorLike).name !== 'NoSuchUpload' && statusOf(err) !== 404) throw err;
        }
      }
      if (!page.IsTruncated) return aborted;
      KeyMarker = page.NextKeyMarker;
      UploadIdMarker = page.NextUploadIdMarker;
    }
  };

  const staging = s3Staging({ client, Bucket, partSize, objectKey });

  return {
    driver: 's3',
    staging,
    // NOTE: deleting a multipart object removes its parts at once on Swift, cutting a
    // download of a later part short, so the backend defers deleting replaced objects.
    capabilities: { rangeRead: true, copyTo: false, deleteSparesOpenReads: false, copy: true },

    async copy(from, to, opts = {}) {
      const Key = objectKey(to);
      const CopySource = `${encodeURIComponent(Bucket)}/${objectKey(from)}`;
      let size: number;
      try {
        size = (await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(from) }))).ContentLength ?? 0;
      } catch (err) {
        if (isMissing(err)) throw new LadingError('NOT_FOUND', 'The content to copy is missing.', { cause: err });
        throw storeError(err, 'look up the object to copy');
      }
      // NOTE: the copy is visible under its key as soon as the store has made it, so the
      // tracking it needs comes first.
      await opts.publishAfter?.();
      if (size <= copyObjectMax) {
        try {
          await client.send(new CopyObjectCommand({ Bucket, Key, CopySource }));
        } catch (err) {
          if (isMissing(err)) throw new LadingError('NOT_FOUND', 'The content to copy is missing.', { cause: err });
          throw storeError(err, 'copy the object');
        }
        return { size };
      }
      // NOTE: past CopyObject's limit, a multipart upload whose parts the store copies.
      const part = Math.min(copyObjectMax, Math.max(COPY_PART, Math.ceil(size / 10_000)));
      let UploadId: string | undefined;
      try {
        UploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId!;
        const Parts: { PartNumber: number; ETag: string }[] = [];
        for (let start = 0, n = 1; start < size; start += part, n++) {
          const end = Math.min(size, start + part) - 1;
          const res = await client.send(new UploadPartCopyCommand({ Bucket, Key, UploadId, PartNumber: n, CopySource, CopySourceRange: `bytes=${start}-${end}` }));
          Parts.push({ PartNumber: n, ETag: res.CopyPartResult?.ETag ?? '' });
        }
        await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }));
        return { size };
      } catch (err) {
        if (UploadId) await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
        throw storeError(err, 'copy the object');
      }
    },

    async write(key, source: Readable, opts = {}) {
      const Key = objectKey(key);
      // NOTE: the tracking starts with the body; the object becomes visible only after it.
      const publishAfter = opts.publishAfter?.();
      publishAfter?.catch(() => {});
      try {
        const size = await uploadStream(source, {
          client, Bucket, Key, partSize, queueSize, signal: opts.signal, publishAfter,
          storeError: (err) => storeError(err, 'store the object'),
        });
        return { size };
      } catch (err) {
        // NOTE: a last check, in case the store refused the abort the upload sent.
        await abortUploads(new Date(Date.now() + 60_000), Key).catch(() => {});
        throw err;
      }
    },

    async read(key, range?: ByteRange) {
      try {
        return await openRanged({ client, Bucket, Key: objectKey(key), rangeSize: readRangeSize, queueSize, storeError: (err) => storeError(err, 'read the object') }, range);
      } catch (err) {
        if (isMissing(err)) throw new LadingError('NOT_FOUND', 'The object\'s content is missing.', { cause: err });
        if (statusOf(err) === 416) throw new LadingError('RANGE_NOT_SATISFIABLE', 'The range lies outside the object.', { cause: err });
        throw storeError(err, 'read the object');
      }
    },

    async size(key) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }));
        return res.ContentLength ?? 0;
      } catch (err) {
        if (isMissing(err)) return null;
        throw storeError(err, 'look up the object');
      }
    },

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
      } catch (err) {
        if (!isMissing(err)) throw storeError(err, 'delete the object');
      }
    },

    async *list() {
      let ContinuationToken: string | undefined;
      do {
        let page;
        try {
          page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken }));
        } catch (err) {
          throw storeError(err, 'list the objects');
        }
        for (const object of page.Contents ?? []) {
          const key = object.Key?.slice(prefix.length) ?? '';
          // NOTE: the tails of staged writes (`<key>.tail-<n>`) and whatever else shares the
          // bucket under the prefix are no keys.
          if (!object.Key?.startsWith(prefix) || !KEY.test(key)) continue;
          yield { key, size: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) };
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async sweepTemporaries(before, keep) {
      try {
        return await abortUploads(before, undefined, keep);
      } catch (err) {
        throw storeError(err, 'list unfinished uploads');
      }
    },

    async probe() {
      await client.send(new HeadBucketCommand({ Bucket })).catch((err: unknown) => {
        throw storeError(err, 'answer for the bucket');
      });
    },

    async close() {
      client.destroy();
    },
  };
}

/** The state of a staged write on S3, as stored by the caller. */
interface S3Staged extends StagedState {
  uploadId: string;
  parts: { n: number; etag: string; size: number }[];
  /** Number of the tail object holding the bytes after the last part, or null. */
  tail: number | null;
  tailSize: number;
}

function isNoSuchUpload(err: unknown): boolean {
  return (err as S3ErrorLike | null)?.name === 'NoSuchUpload' || statusOf(err) === 404;
}

/** See the module's comment. Appends to one key are refused while one runs in this process. */
function s3Staging(o: { client: S3Client; Bucket: string; partSize: number; objectKey(key: string): string }): StagedWrites {
  const { client, Bucket, partSize } = o;
  const appending = new Set<string>();
  const tailKey = (key: string, n: number): string => `${o.objectKey(key)}.tail-${n}`;
  const readTail = async (key: string, n: number): Promise<Buffer> => {
    try {
      const res = await client.send(new GetObjectCommand({ Bucket, Key: tailKey(key, n) }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) throw new LadingError('NOT_FOUND', 'The staged bytes of this upload are missing.', { cause: err });
      throw storeError(err, 'read the staged bytes');
    }
  };
  const deleteTail = async (key: string, n: number): Promise<void> => {
    await client.send(new DeleteObjectCommand({ Bucket, Key: tailKey(key, n) })).catch(() => {});
  };
  const uploadPart = async (key: string, uploadId: string, n: number, body: Buffer): Promise<string> => {
    try {
      const res = await client.send(new UploadPartCommand({ Bucket, Key: o.objectKey(key), UploadId: uploadId, PartNumber: n, Body: body, ContentLength: body.length }));
      return res.ETag ?? '';
    } catch (err) {
      throw storeError(err, 'store a part of the upload');
    }
  };
  const sizeOf = async (key: string): Promise<number | null> => {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket, Key: o.objectKey(key) }))).ContentLength ?? 0;
    } catch (err) {
      if (isMissing(err)) return null;
      throw storeError(err, 'look up the object');
    }
  };

  return {
    async begin(key) {
      try {
        const res = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: o.objectKey(key) }));
        const state: S3Staged = { uploadId: res.UploadId!, parts: [], tail: null, tailSize: 0 };
        return state;
      } catch (err) {
        throw storeError(err, 'start the upload');
      }
    },

    async append(key, recordedState, offset, source, { checkpointBytes, onCheckpoint }) {
      if (appending.has(key)) throw new LadingError('CONFLICT', 'Another request is appending to this upload.');
      appending.add(key);
      try {
        let state = recordedState as S3Staged;
        let recorded = { offset, state };
        let pos = offset;
        // Tails the recorded state will no longer name once the next checkpoint is recorded.
        let obsolete: number[] = [];
        let buffer: Buffer[] = [];
        let buffered = 0;
        if (state.tail !== null) {
          buffer = [await readTail(key, state.tail)];
          buffered = state.tailSize;
        }
        const checkpoint = async (): Promise<void> => {
          await onCheckpoint(pos, state);
          recorded = { offset: pos, state };
          const gone = obsolete;
          obsolete = [];
          for (const n of gone) await deleteTail(key, n);
        };
        const flushPart = async (): Promise<void> => {
          const n = state.parts.length + 1;
          const body = buffer.length === 1 ? buffer[0]! : Buffer.concat(buffer, buffered);
          buffer = [];
          const etag = await uploadPart(key, state.uploadId, n, body);
          if (state.tail !== null) obsolete.push(state.tail);
          state = { ...state, parts: [...state.parts, { n, etag, size: body.length }], tail: null, tailSize: 0 };
          buffered = 0;
        };
        const chunks = source[Symbol.asyncIterator]();
        let sourceError: { err: unknown } | null = null;
        for (;;) {
          const next = await nextChunk(chunks);
          if ('failed' in next) {
            sourceError = { err: next.failed };
            break;
          }
          if (next.done) break;
          // NOTE: a part ends at a chunk's end (it may exceed partSize by less than a chunk),
          // so every checkpoint covers whole chunks of the source.
          buffer.push(next.value);
          buffered += next.value.length;
          pos += next.value.length;
          if (buffered >= partSize) {
            await flushPart();
            if (pos - recorded.offset >= checkpointBytes) await checkpoint();
          }
        }
        if (pos > recorded.offset) {
          let newTail: number | null = null;
          if (buffered > 0) {
            // NOTE: what is left is kept as a tail object, so it counts as acknowledged; it
            // goes in front of the next append's first part.
            const n = Math.max(state.tail ?? 0, ...obsolete, ...(recorded.state.tail === null ? [] : [recorded.state.tail])) + 1;
            const body = Buffer.concat(buffer, buffered);
            try {
              await client.send(new PutObjectCommand({ Bucket, Key: tailKey(key, n), Body: body, ContentLength: body.length }));
            } catch (err) {
              throw storeError(err, 'store the end of the upload');
            }
            if (state.tail !== null) obsolete.push(state.tail);
            state = { ...state, tail: n, tailSize: buffered };
            newTail = n;
          }
          try {
            await checkpoint();
          } catch (err) {
            if (newTail !== null) await deleteTail(key, newTail);
            throw err;
          }
        }
        if (sourceError) throw sourceError.err;
        return recorded;
      } finally {
        appending.delete(key);
      }
    },

    async complete(key, recordedState, length) {
      const state = recordedState as S3Staged;
      const done = async (): Promise<boolean> => (await sizeOf(key)) === length;
      // NOTE: the object appears only when its upload completes, so one of the right size is
      // this write, completed already (a crash came before the catalog heard of it).
      if (await done()) {
        if (state.tail !== null) await deleteTail(key, state.tail);
        return;
      }
      const tail = state.tail === null ? null : await readTail(key, state.tail);
      try {
        if (state.parts.length === 0) {
          // NOTE: S3 refuses a multipart upload of no part; a small object is one PUT.
          const body = tail ?? Buffer.alloc(0);
          await client.send(new PutObjectCommand({ Bucket, Key: o.objectKey(key), Body: body, ContentLength: body.length }));
          await client.send(new AbortMultipartUploadCommand({ Bucket, Key: o.objectKey(key), UploadId: state.uploadId })).catch(() => {});
        } else {
          const parts = [...state.parts];
          if (tail) parts.push({ n: parts.length + 1, etag: await uploadPart(key, state.uploadId, parts.length + 1, tail), size: tail.length });
          try {
            await client.send(new CompleteMultipartUploadCommand({
              Bucket, Key: o.objectKey(key), UploadId: state.uploadId,
              MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.n, ETag: p.etag })) },
            }));
          } catch (err) {
            if (!(isNoSuchUpload(err) && await done())) throw err;
          }
        }
      } catch (err) {
        throw storeError(err, 'complete the upload');
      }
      if (state.tail !== null) await deleteTail(key, state.tail);
    },

    async abort(key, recordedState) {
      const state = recordedState as S3Staged;
      try {
        await client.send(new AbortMultipartUploadCommand({ Bucket, Key: o.objectKey(key), UploadId: state.uploadId })).catch((err: unknown) => {
          if (!isNoSuchUpload(err)) throw err;
        });
        const listed = await client.send(new ListObjectsV2Command({ Bucket, Prefix: `${o.objectKey(key)}.tail-` }));
        for (const object of listed.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket, Key: object.Key! }));
        await client.send(new DeleteObjectCommand({ Bucket, Key: o.objectKey(key) })).catch((err: unknown) => {
          if (!isMissing(err)) throw err;
        });
      } catch (err) {
        throw storeError(err, 'remove the upload');
      }
    },
  };
}
