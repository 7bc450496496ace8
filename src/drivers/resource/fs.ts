/**
 * Resource driver for a local (or shared POSIX) directory. A write streams into `tmp/` and is
 * renamed into `blobs/` once flushed to disk, so a key is either whole or absent; rename is
 * atomic on one file system, which is also what makes a shared mount safe for several nodes.
 * Adapts the file system only; it knows nothing of paths in the namespace or of the catalog.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { LadingError, isLadingError } from '../../core/errors.ts';
import type { ByteRange, Resource } from '../../core/ports.ts';

export interface FsResourceOptions {
  /** Directory holding `blobs/` and `tmp/`; created when missing. */
  root: string;
  /** Flush each object to disk before it becomes visible (default true). */
  fsync?: boolean;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$/;
const CHUNK = 1 << 20;

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

export async function createFsResource(options: FsResourceOptions): Promise<Resource> {
  if (!options.root) throw new Error('fs resource: option `root` is required');
  const blobs = join(options.root, 'blobs');
  const tmp = join(options.root, 'tmp');
  await mkdir(blobs, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const fsync = options.fsync ?? true;

  const finalPath = (key: string): string => {
    if (!KEY.test(key)) throw new LadingError('INTERNAL', 'Invalid resource key.');
    return join(blobs, key.slice(0, 2), key);
  };

  return {
    driver: 'fs',
    capabilities: { rangeRead: true, multipart: false },

    async write(key, source: Readable, opts = {}) {
      const dest = finalPath(key);
      const temp = join(tmp, `${key}.${randomBytes(6).toString('hex')}`);
      try {
        const out = createWriteStream(temp, { flags: 'wx', flush: fsync, highWaterMark: CHUNK });
        await pipeline(source, out, { signal: opts.signal });
        await mkdir(join(blobs, key.slice(0, 2)), { recursive: true });
        await rename(temp, dest);
        return { size: out.bytesWritten };
      } catch (err) {
        await unlink(temp).catch(() => {});
        if (isLadingError(err)) throw err;
        const c = code(err);
        if (c === 'ENOSPC' || c === 'EDQUOT') {
          throw new LadingError('STORAGE_FULL', 'The storage is full; nothing was stored.', { cause: err });
        }
        throw err;
      }
    },

    async read(key, range?: ByteRange) {
      let handle;
      try {
        handle = await open(finalPath(key), 'r');
      } catch (err) {
        if (code(err) === 'ENOENT') throw new LadingError('NOT_FOUND', 'The object\'s content is missing.', { cause: err });
        throw err;
      }
      return handle.createReadStream({ start: range?.start, end: range?.end, highWaterMark: CHUNK });
    },

    async size(key) {
      try {
        return (await stat(finalPath(key))).size;
      } catch (err) {
        if (code(err) === 'ENOENT') return null;
        throw err;
      }
    },

    async delete(key) {
      await unlink(finalPath(key)).catch((err) => {
        if (code(err) !== 'ENOENT') throw err;
      });
    },

    async sweepTemporaries(before) {
      let removed = 0;
      for (const name of await readdir(tmp)) {
        const file = join(tmp, name);
        const info = await stat(file).catch(() => null);
        if (info && info.mtimeMs < before.getTime()) {
          await unlink(file).catch(() => {});
          removed++;
        }
      }
      return removed;
    },

    async close() {},
  };
}
