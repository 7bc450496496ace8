/**
 * The one way lading answers a download: validators (ETag, Last-Modified, Repr-Digest),
 * conditional requests, a single byte range, `Content-Disposition`, and the bytes through the
 * resource's `copyTo` when it has one. Every download endpoint — registered paths, PIDs, share
 * links, published data — hands this an `open` function that decides who may read what.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ReadPlan } from '../core/backend.ts';
import { checksumDigest } from '../core/meter.ts';
import type { ByteRange, ResourceStream } from '../core/ports.ts';
import type { DataObject } from '../core/types.ts';
import { contentDisposition, evaluatePreconditions, selectRange } from './conditional.ts';

/** Opens the object to download once `plan` has seen it (see `Backend.openObjectAs`). */
export type OpenForDownload = (plan: (object: DataObject) => ReadPlan) => Promise<{
  object: DataObject; range: ByteRange | undefined; stream: ResourceStream | null;
}>;

/** The strong ETag of a data object: its SHA-256, hex, quoted. */
export function etagOf(object: DataObject): string {
  return `"${checksumDigest(object.checksum).toString('hex')}"`;
}

/**
 * Answers `request` (GET or HEAD) with the object `open` yields: 200 with the whole object,
 * 206 with the range asked for, 304 when a conditional header says the client's copy is
 * current. Rejects (before anything is sent) with what `open` rejects with, and with
 * `PRECONDITION_FAILED` or `RANGE_NOT_SATISFIABLE`; once the status line is out, a failure of
 * the resource cuts the connection.
 */
export async function sendDownload(request: FastifyRequest, reply: FastifyReply, open: OpenForDownload): Promise<FastifyReply> {
  const head = request.method === 'HEAD';
  let notModified = false;
  const { object, range, stream } = await open((obj) => {
    const validators = { etag: etagOf(obj), lastModified: obj.modifiedAt, size: obj.size };
    if (evaluatePreconditions(request.headers, validators) === 'not-modified') {
      notModified = true;
      return { skipBody: true };
    }
    return { range: selectRange(request.headers, validators), skipBody: head };
  });
  reply.header('ETag', etagOf(object));
  reply.header('Last-Modified', object.modifiedAt.toUTCString());
  reply.header('Accept-Ranges', 'bytes');
  reply.header('Repr-Digest', `sha-256=:${checksumDigest(object.checksum).toString('base64')}:`);
  if (notModified) return reply.code(304).send();
  reply.header('Content-Type', 'application/octet-stream');
  reply.header('Content-Disposition', contentDisposition(object.name));
  if (range) {
    reply.code(206);
    reply.header('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
    reply.header('Content-Length', range.end - range.start + 1);
  } else {
    reply.header('Content-Length', object.size);
  }
  if (stream?.copyTo) {
    // NOTE: the resource copies into the socket through reused buffers; piping the stream
    // allocates a buffer per chunk, which halves throughput and grows the memory held by
    // garbage with the size of the download (bench/throughput.sh). The reply is hijacked, so
    // headers must be set before this point: onSend hooks do not run for it (onResponse do).
    reply.hijack();
    const res = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) res.setHeader(name, value);
    }
    res.writeHead(reply.statusCode);
    try {
      await stream.copyTo(res);
      res.end();
    } catch (err) {
      // The status line is sent: all that can be said to the client is a cut connection.
      request.log.info({ err }, 'download interrupted');
      res.destroy();
    }
    return reply;
  }
  return reply.send(stream ?? undefined);
}
