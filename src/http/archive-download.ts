/**
 * The one way lading answers a collection as one download (`download=zip` or `download=bag`):
 * the limits (members per archive, archives at once per user), the headers, and the archive
 * streamed into the socket with backpressure. Every endpoint that offers it — registered
 * paths, share links, published data — hands this an `open` function that decides who may
 * read what; the archive itself is `core/collection-archive.ts`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CollectionWalk } from '../core/backend.ts';
import { type ArchiveFormat, archiveName, collectionArchive, countMembers } from '../core/collection-archive.ts';
import { LadingError } from '../core/errors.ts';
import { type Selection, countSelection } from '../core/selection-archive.ts';
import { contentDisposition } from './conditional.ts';

/** What a `download` query value asks for: the bytes of a data object, an archive of a collection, or nothing. */
export function downloadMode(value: string | undefined): 'bytes' | ArchiveFormat | null {
  if (value === 'zip' || value === 'bag') return value;
  if (value === undefined) return null;
  return ['true', 'True', 'TRUE', '1', 'yes', ''].includes(value) ? 'bytes' : null;
}

/** Seconds a client refused for too many archives at once is told to wait. */
const RETRY_AFTER = 30;

/**
 * Counts the archives being sent per key (a user, or a client address for callers without
 * an account) on this node, and refuses one more than `perKey`.
 */
export class ArchiveSlots {
  readonly #perKey: number;
  readonly #held = new Map<string, number>();

  constructor(perKey: number) {
    this.#perKey = perKey;
  }

  /**
   * Takes a slot for `key`; returns the function that gives it back (idempotent). Rejects
   * with `TOO_MANY_REQUESTS` (with `retryAfter`) when `key` holds all of its slots.
   */
  take(key: string): () => void {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.#perKey) {
      throw new LadingError('TOO_MANY_REQUESTS', `You are already downloading ${held} archive${held === 1 ? '' : 's'}, the most at once (archives.concurrent_per_user); try again when one has finished, in ${RETRY_AFTER} seconds or later.`, { details: { retryAfter: RETRY_AFTER } });
    }
    this.#held.set(key, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const now = (this.#held.get(key) ?? 1) - 1;
      if (now <= 0) this.#held.delete(key);
      else this.#held.set(key, now);
    };
  }
}

export interface ArchiveLimits {
  slots: ArchiveSlots;
  /** Members (files and collections) one archive may hold. */
  maxEntries: number;
}

export interface ArchiveRequest {
  format: ArchiveFormat;
  /** Whose slot the download takes (`user:<name>`, `address:<ip>`). */
  key: string;
  /** Checks access and walks the collection (rejects before anything is sent). */
  open: () => Promise<CollectionWalk>;
  /** Runs once the archive is allowed and before its bytes are sent (a share link takes its use). */
  beforeBytes?: () => Promise<void>;
  /** The URL the collection is read from (the bag's `Source`). */
  source: string;
}

/** An archive allowed to start: its file name, what to log it as, and its bytes. */
interface PreparedArchive {
  name: string;
  label: string;
  bytes: () => AsyncIterable<Buffer>;
}

/**
 * Answers `request` (GET or HEAD) with the archive of a collection: 200 with
 * `application/zip`, chunked. Rejects before anything is sent with `TOO_MANY_REQUESTS`,
 * `PAYLOAD_TOO_LARGE` (more members than `limits.maxEntries`) and what `open` rejects with.
 * Once the status line is out, a member that cannot be read whole, or whose bytes are not the
 * ones stored, cuts the connection before the archive's central directory: the client sees
 * a broken transfer, never a smaller archive that looks whole.
 */
export function sendArchive(request: FastifyRequest, reply: FastifyReply, limits: ArchiveLimits, archive: ArchiveRequest): Promise<FastifyReply> {
  return streamArchive(request, reply, limits, archive.key, async () => {
    const walk = await archive.open();
    await countMembers(walk, limits.maxEntries);
    return {
      name: archiveName(walk), label: walk.collection.path,
      bytes: () => collectionArchive(walk, { format: archive.format, now: new Date(), source: archive.source }),
    };
  }, archive.beforeBytes);
}

/**
 * Answers `request` with the archive of several entities (`core/selection-archive.ts`), as
 * `sendArchive` answers a collection's: the same slots, member bound, headers and cut on
 * failure. `open` checks read access to every entity, before anything is sent.
 */
export function sendSelectionArchive(
  request: FastifyRequest, reply: FastifyReply, limits: ArchiveLimits,
  archive: { key: string; open: () => Promise<Selection>; write: (selection: Selection) => AsyncIterable<Buffer> },
): Promise<FastifyReply> {
  return streamArchive(request, reply, limits, archive.key, async () => {
    const selection = await archive.open();
    await countSelection(selection, limits.maxEntries);
    return { name: selection.name, label: `${selection.picked.length} entities`, bytes: () => archive.write(selection) };
  });
}

async function streamArchive(
  request: FastifyRequest, reply: FastifyReply, limits: ArchiveLimits, key: string,
  prepare: () => Promise<PreparedArchive>, beforeBytes?: () => Promise<void>,
): Promise<FastifyReply> {
  const release = limits.slots.take(key);
  try {
    const { name, label, bytes: chunks } = await prepare();
    reply.header('Content-Type', 'application/zip');
    reply.header('Content-Disposition', contentDisposition(`${name}.zip`));
    reply.header('Cache-Control', 'no-store');
    if (request.method === 'HEAD') {
      release();
      return reply.code(200).send();
    }
    await beforeBytes?.();
    // NOTE: hijacked as `sendDownload` is, so that a failure after the status line can only
    // cut the connection (no error envelope can follow bytes already sent).
    reply.hijack();
    const res = reply.raw;
    for (const [header, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) res.setHeader(header, value);
    }
    res.writeHead(200);
    res.once('close', release);
    const bytes = Readable.from(chunks(), { objectMode: false });
    try {
      await pipeline(bytes, res);
    } catch (err) {
      // NOTE: a member that failed is worth a warning; a client that went away is not.
      if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') request.log.warn({ err, archive: label }, 'archive interrupted: the transfer was cut');
      else request.log.info({ err, archive: label }, 'archive interrupted');
      res.destroy();
    }
    return reply;
  } catch (err) {
    release();
    throw err;
  }
}
