/**
 * A collection in one download: its members as a ZIP archive, or as a BagIt bag (RFC 8493) in
 * a ZIP, written as the members are read. Every member's bytes are checked against the
 * checksum the catalog stored for them while they pass; a member that cannot be read whole, or
 * whose bytes are not the ones stored, fails the archive (the caller then cuts the transfer),
 * so a smaller archive never looks whole. Takes a `CollectionWalk`; knows nothing of HTTP.
 */
import { createHash } from 'node:crypto';
import type { CollectionWalk } from './backend.ts';
import { LadingError } from './errors.ts';
import { checkedBytes, checksumDigest } from './meter.ts';
import type { DataObject, Entity } from './types.ts';
import { ZipWriter } from './zip-writer.ts';

export type ArchiveFormat = 'zip' | 'bag';

export interface ArchiveOptions {
  format: ArchiveFormat;
  /** When the archive is made (the bag's Bagging-Date). */
  now: Date;
  /** Where the collection is read from (a URL), for the bag's `Source` line. */
  source: string;
}

/** The name of the archive's top folder (and file): the collection's name. */
export function archiveName(walk: CollectionWalk): string {
  return walk.collection.name || 'collection';
}

/**
 * How many members the archive of `walk` would have (every entity below the collection),
 * counted from the catalog before anything is sent. Rejects with `PAYLOAD_TOO_LARGE` as soon
 * as the count passes `max`.
 */
export async function countMembers(walk: CollectionWalk, max: number): Promise<number> {
  let count = 0;
  for await (const _ of walk.entries()) {
    count++;
    if (count > max) {
      throw new LadingError('PAYLOAD_TOO_LARGE', `The collection holds more than ${max} files and collections, the most one archive may have (archives.max_entries); download parts of it, or its members one by one.`);
    }
  }
  return count;
}

/** `path` of `entity` relative to the walked collection, without a leading '/'. */
function relativeOf(walk: CollectionWalk, entity: Entity): string {
  const root = walk.collection.path;
  return entity.path.slice(root === '/' ? 1 : root.length + 1);
}

/** A path in a tag file, with CR, LF and '%' percent-encoded (RFC 8493 §2.1.3). */
function tagPath(path: string): string {
  return path.replace(/[%\r\n]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * The archive of `walk`'s collection, as chunks to send in order. The top folder is the
 * collection's name; inside it, for `zip`, the members at their paths relative to the
 * collection (collections as directory entries, so empty ones are kept); for `bag`, a BagIt
 * bag: `bagit.txt`, the members under `data/`, `manifest-sha256.txt` (from the stored
 * checksums, each checked against the bytes), `pids.txt` (`<PID> data/<path>` for every member
 * with a PID), `bag-info.txt` (source, date, Payload-Oxum, the collection's PID as
 * External-Identifier) and `tagmanifest-sha256.txt`. Throws — and the bytes yielded so far
 * are not an archive — when a member cannot be read whole or its bytes are not the stored
 * ones (`CHECKSUM_MISMATCH`), or with what `walk` throws (`FORBIDDEN` when read access is
 * taken away meanwhile, …). The tag files' lines are held until the end (about 100 bytes a
 * member), as is the ZIP's central directory.
 */
export async function* collectionArchive(walk: CollectionWalk, options: ArchiveOptions): AsyncGenerator<Buffer> {
  const zip = new ZipWriter();
  const top = archiveName(walk);
  const bag = options.format === 'bag';
  const payload = bag ? `${top}/data/` : `${top}/`;
  const manifest: string[] = [];
  const pids: string[] = [];
  let octets = 0;
  let files = 0;
  const tags = new Map<string, string>();
  if (bag) {
    const text = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
    tags.set('bagit.txt', text);
    yield* zip.file(`${top}/bagit.txt`, options.now, Buffer.byteLength(text), [Buffer.from(text, 'utf8')]);
  }
  yield* zip.directory(payload, walk.collection.modifiedAt);
  for await (const entity of walk.entries()) {
    const relative = relativeOf(walk, entity);
    if (entity.kind === 'collection') {
      yield* zip.directory(`${payload}${relative}/`, entity.modifiedAt);
      if (entity.pid) pids.push(`${entity.pid} ${tagPath(`data/${relative}/`)}\n`);
      continue;
    }
    const { object, stream } = await walk.open(entity);
    try {
      yield* zip.file(`${payload}${relative}`, object.modifiedAt, object.size, checkedBytes(object, stream));
    } finally {
      stream.destroy();
    }
    octets += object.size;
    files++;
    if (bag) {
      manifest.push(`${checksumDigest(object.checksum).toString('hex')}  ${tagPath(`data/${relative}`)}\n`);
      if (object.pid) pids.push(`${object.pid} ${tagPath(`data/${relative}`)}\n`);
    }
  }
  if (bag) {
    tags.set('manifest-sha256.txt', manifest.join(''));
    tags.set('pids.txt', pids.join(''));
    const info = [
      `Source: ${options.source}`,
      `External-Description: The collection ${walk.collection.path}`,
      ...(walk.collection.pid ? [`External-Identifier: ${walk.collection.pid}`] : []),
      `Bagging-Date: ${options.now.toISOString().slice(0, 10)}`,
      'Bag-Software-Agent: lading',
      `Payload-Oxum: ${octets}.${files}`,
    ].map((line) => line.replace(/[\r\n]/g, ' ')).join('\n') + '\n';
    tags.set('bag-info.txt', info);
    for (const name of ['manifest-sha256.txt', 'pids.txt', 'bag-info.txt']) {
      const bytes = Buffer.from(tags.get(name)!, 'utf8');
      yield* zip.file(`${top}/${name}`, options.now, bytes.length, [bytes]);
    }
    const tagmanifest = [...tags].map(([name, text]) => `${createHash('sha256').update(text, 'utf8').digest('hex')}  ${name}\n`).join('');
    const bytes = Buffer.from(tagmanifest, 'utf8');
    yield* zip.file(`${top}/tagmanifest-sha256.txt`, options.now, bytes.length, [bytes]);
  }
  yield* zip.finish();
}
