/**
 * Resource driver for a local (or shared POSIX) directory. A write streams into `tmp/` and is
 * renamed into `blobs/` once flushed to disk, so a key is either whole or absent; rename is
 * atomic on one file system, which is also what makes a shared mount safe for several nodes.
 * A staged write (resumable upload) grows in `staging/<key>`, out of reach of the sweeper of
 * `tmp/`, flushed at each checkpoint, and is renamed into `blobs/` when complete. With `fsync`
 * on, a write resolves only once its bytes and its name in `blobs/` are on disk.
 * Adapts the file system only; it knows nothing of paths in the namespace or of the catalog.
 *
 * It declares `copyTo`: a stream returned by `read` copies into a destination the caller owns,
 * such as a socket, through two reused buffers, where consuming the stream would allocate a
 * fresh buffer per chunk.
 */
import { constants } from 'node:fs';
import { type FileHandle, copyFile, mkdir, open, readdir, rename, stat, statfs, truncate, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { LadingError, isLadingError } from '../../core/errors.ts';
import { type FileFlushGroup, fileFlushGroup } from '../flush-group.ts';
import type { ByteRange, Resource, ResourceStream, StagedState, StagedWrites } from '../../core/ports.ts';
import { nextChunk } from '../staged-source.ts';
import { type SourceListeners, asBuffer, listen, prematureClose, unlisten } from '../source-listeners.ts';

export interface FsResourceOptions {
  /** Directory holding `blobs/` and `tmp/`; created when missing. */
  root: string;
  /** Flush each object to disk before it becomes visible (default true). */
  fsync?: boolean;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{7,127}$/;
const CHUNK = 1 << 20;
// NOTE: each chunk costs a hand-off to the thread pool for the read and a socket write, and on
// loopback a wake-up of the receiver. Against 256 KiB, 512 KiB chunks made downloads 10-13%
// faster at 10 MiB and 35-52% at 1 GiB, with a quarter less CPU; 1 MiB was within 5% of
// 512 KiB either way, but 16 downloads at once raised the peak RSS by 60-79 MiB against
// 20-25 MiB with 512 KiB, and 2 MiB was slower (bench/README.md, 2026-11-25).
const COPY_CHUNK = 512 * 1024;

/** Copies `[start, end]` (inclusive; `end` undefined: to end of file) of `handle` into `dest`. */
async function copyRange(handle: FileHandle, start: number, end: number | undefined, dest: Writable): Promise<void> {
  // NOTE: a destination destroyed mid-copy (client gone) may never call back a pending write;
  // racing every wait against its 'close' keeps the copy from hanging with the file open.
  let abandon: (err: Error) => void = () => {};
  const gone = new Promise<never>((_resolve, reject) => {
    abandon = reject;
  });
  gone.catch(() => {});
  const onClose = (): void => abandon(new Error('The destination closed before the copy ended.'));
  const onError = (err: Error): void => abandon(err);
  dest.once('close', onClose);
  dest.once('error', onError);
  try {
    if (dest.destroyed) onClose();
    // Two buffers in turn: the next read overlaps the previous write, and a buffer is only
    // refilled after the write that used it has completed (the socket may hold it until then).
    // Each is made at its first use, no larger than a known range needs: a small range or
    // file costs one small buffer, not two chunks.
    const size = end === undefined ? COPY_CHUNK : Math.min(COPY_CHUNK, end - start + 1);
    const buffers: Buffer[] = [];
    let writing: Promise<void> = Promise.resolve();
    let pos = start;
    for (let turn = 0; ; turn++) {
      const want = end === undefined ? COPY_CHUNK : Math.min(COPY_CHUNK, end - pos + 1);
      if (want <= 0) break;
      const buffer = (buffers[turn & 1] ??= Buffer.allocUnsafeSlow(size));
      const { bytesRead } = await Promise.race([handle.read(buffer, 0, want, pos), gone]);
      if (bytesRead === 0) break;
      pos += bytesRead;
      await Promise.race([writing, gone]);
      const chunk = bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      writing = new Promise<void>((resolve, reject) => {
        dest.write(chunk, (err) => (err ? reject(err) : resolve()));
      });
      // NOTE: awaited at the next turn or after the loop; this only keeps a failure that
      // happens meanwhile from being reported as unhandled.
      writing.catch(() => {});
    }
    await Promise.race([writing, gone]);
  } finally {
    dest.off('close', onClose);
    dest.off('error', onError);
  }
}

// NOTE: without it the kernel keeps an upload in the page cache until the final flush, which
// then writes all of it while the client waits; flushing from the thread pool whenever 2 MiB
// more arrived (one flush at a time, so they batch themselves to the disk's pace) overlaps
// most of that disk work with the transfer. The final flush still decides. Measured
// (bench/README.md): a 10 MiB upload ~25% faster than with a flush every 64 MiB, a 1 GiB one
// the same.
const EARLY_FLUSH = 2 * 1024 * 1024;

/** Writes all of `chunks` at `position` of `handle`, going on after a short write. */
async function writeAll(handle: FileHandle, chunks: Buffer[], position: number): Promise<void> {
  let rest = chunks;
  for (;;) {
    let wanted = 0;
    for (const chunk of rest) wanted += chunk.length;
    const { bytesWritten } = rest.length === 1 ? await handle.write(rest[0]!, 0, wanted, position) : await handle.writev(rest, position);
    if (bytesWritten === wanted) return;
    if (bytesWritten <= 0) throw new Error('A write to the file made no progress.');
    position += bytesWritten;
    let skip = bytesWritten;
    while (skip >= rest[0]!.length) skip -= rest.shift()!.length;
    rest = [rest[0]!.subarray(skip), ...rest.slice(1)];
  }
}

/**
 * Streams `source` into the file `opening` opens, new and empty, from its start, with backpressure;
 * with `fsync`, also starts a flush each time another `EARLY_FLUSH` bytes were written and
 * none runs (never waiting for it), and flushes once more at the end. Resolves with the bytes
 * written once all are written (and flushed). Rejects with the source's error, a premature
 * close of the source, the signal's reason, or the file's error (of `opening` too), a failed
 * early flush included (Linux reports a writeback error to only one flush of a file
 * description, so the final one would not see it again); the source is then destroyed. The
 * caller closes the file (which waits for a write or flush still running) and removes it.
 *
 * NOTE: in place of `pipeline(source, flusher, createWriteStream(...))`: for a small upload
 * those three streams, their listeners and `pipeline`'s AbortController (which it aborts even
 * on success, making an AbortError with its stack) were a tenth of the upload's CPU
 * (bench/README.md, 2026-11-25). As a WriteStream does, chunks that arrive while a write runs
 * are written together, in one `writev`.
 */
function drainInto(source: Readable, opening: Promise<FileHandle>, fsync: boolean, signal?: AbortSignal): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let handle: FileHandle | null = null;
    let queue: Buffer[] = [];
    let queued = 0;
    let written = 0;
    let writing = false;
    let ended = false;
    let done = false;
    let paused = false;
    let sinceFlush = 0;
    let flushing: Promise<void> | null = null;
    let flushFailed: { err: unknown } | null = null;

    const detach = (): void => unlisten(source, listeners, signal);
    function fail(err: unknown): void {
      if (done) return;
      done = true;
      detach();
      source.destroy();
      reject(err);
    }
    const finish = async (file: FileHandle): Promise<void> => {
      done = true;
      detach();
      try {
        await flushing;
        if (flushFailed) throw flushFailed.err;
        if (fsync) await file.datasync();
        resolve(written);
      } catch (err) {
        reject(err);
      }
    };
    const pump = (): void => {
      if (done || writing || !handle) return;
      const file = handle;
      if (flushFailed) {
        fail(flushFailed.err);
        return;
      }
      if (queue.length === 0) {
        if (ended) void finish(file);
        return;
      }
      const chunks = queue;
      const bytes = queued;
      queue = [];
      queued = 0;
      writing = true;
      // The queue is empty again: let the source refill it while this write runs.
      if (paused) {
        paused = false;
        source.resume();
      }
      writeAll(file, chunks, written).then(() => {
        writing = false;
        written += bytes;
        sinceFlush += bytes;
        if (fsync && sinceFlush >= EARLY_FLUSH && !flushing && !flushFailed) {
          sinceFlush = 0;
          flushing = file.datasync().then(() => {
            flushing = null;
          }, (err: unknown) => {
            flushing = null;
            flushFailed = { err };
          });
        }
        pump();
      }, fail);
    };
    function onData(chunk: Buffer | Uint8Array | string): void {
      const buffer = asBuffer(chunk);
      if (buffer.length === 0) return;
      queue.push(buffer);
      queued += buffer.length;
      if (queued >= CHUNK && !paused) {
        paused = true;
        source.pause();
      }
      pump();
    }
    function onEnd(): void {
      ended = true;
      pump();
    }
    const listeners: SourceListeners = {
      data: onData,
      end: onEnd,
      close: () => {
        if (!ended) fail(prematureClose());
      },
      abort: () => fail(signal?.reason ?? new Error('The write was aborted.')),
      fail,
    };
    // NOTE: a source that fails while the file is being opened is seen at once (`listen`
    // listens for errors first); the file's own failure to open fails the write as well.
    listen(source, listeners, signal);
    opening.then((file) => {
      handle = file;
      pump();
    }, fail);
  });
}

/**
 * Flushes the entries of directories (a rename into one is not on disk until the directory is
 * flushed, whatever was done to the file), sharing one flush among the writes waiting on the
 * same directory. Keeps one descriptor per directory: `blobs/` has at most 256 below it.
 */
function directoryFlusher(): { flush(dir: string): Promise<void>; close(): Promise<void> } {
  const dirs = new Map<string, FileFlushGroup>();
  return {
    flush(dir) {
      let group = dirs.get(dir);
      if (!group) {
        group = fileFlushGroup(dir, 'sync');
        dirs.set(dir, group);
      }
      return group.flush();
    },
    async close() {
      const groups = [...dirs.values()];
      dirs.clear();
      await Promise.all(groups.map((g) => g.close()));
    },
  };
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** Whether `err` says the file system has no room left (no space, or the quota is used up). */
function isNoSpace(err: unknown): boolean {
  const c = code(err);
  return c === 'ENOSPC' || c === 'EDQUOT';
}

/**
 * Creates a file-system resource under `options.root`, creating its directories. Rejects (with
 * a plain `Error` naming the option) when `root` is missing or not a string, `fsync` is not a
 * boolean, or the directories cannot be created (e.g. `root` is a file or not writable).
 */
export async function createFsResource(options: FsResourceOptions): Promise<Resource> {
  if (typeof options.root !== 'string' || options.root === '') throw new Error('fs resource: option `root` is required');
  if (options.fsync !== undefined && typeof options.fsync !== 'boolean') throw new Error('fs resource: option `fsync` must be true or false');
  const blobs = join(options.root, 'blobs');
  const tmp = join(options.root, 'tmp');
  const staging = join(options.root, 'staging');
  try {
    await mkdir(blobs, { recursive: true });
    await mkdir(tmp, { recursive: true });
    await mkdir(staging, { recursive: true });
  } catch (err) {
    throw new Error(`fs resource: option \`root\`: cannot create directories under '${options.root}' (${code(err) ?? 'error'})`, { cause: err });
  }
  const fsync = options.fsync ?? true;
  const directories = directoryFlusher();
  // The directories below `blobs/` known to exist, so a write does not ask again.
  const made = new Set<string>();
  /** Moves `from` to `to` in `blobs/`, creating its directory; with fsync, flushes the entries. */
  const publish = async (from: string, to: string): Promise<void> => {
    const dir = dirname(to);
    if (!made.has(dir)) {
      const first = await mkdir(dir, { recursive: true });
      if (first !== undefined && fsync) await directories.flush(blobs);
      made.add(dir);
    }
    await rename(from, to);
    if (fsync) await directories.flush(dir);
  };

  const finalPath = (key: string): string => {
    if (!KEY.test(key)) throw new LadingError('INTERNAL', 'Invalid resource key.');
    return join(blobs, key.slice(0, 2), key);
  };

  const stagedPath = (key: string): string => {
    finalPath(key);
    return join(staging, key);
  };

  return {
    driver: 'fs',
    capabilities: { rangeRead: true, copyTo: true, deleteSparesOpenReads: true, copy: true },
    staging: fsStaging({ stagedPath, finalPath, fsync, publish }),

    async write(key, source: Readable, opts = {}) {
      const dest = finalPath(key);
      // NOTE: a v4 UUID's last 12 hex digits are random; randomUUID draws from a buffer filled
      // once per 128 calls, where randomBytes asks OpenSSL on every call (~6 µs alone, several
      // times that on a busy event loop: 2% of a small upload's main-thread time).
      const temp = join(tmp, `${key}.${randomUUID().slice(24)}`);
      // NOTE: awaited only after the bytes are flushed; a rejection before then is this write's.
      const publishable = opts.publishAfter?.();
      publishable?.catch(() => {});
      try {
        const opening = open(temp, 'wx');
        let size: number;
        try {
          size = await drainInto(source, opening, fsync, opts.signal);
        } finally {
          // NOTE: after a failure of the source the file may still be opening; closing waits
          // for a write or flush still running.
          await (await opening.catch(() => null))?.close();
        }
        await publishable;
        await publish(temp, dest);
        return { size };
      } catch (err) {
        await unlink(temp).catch(() => {});
        if (isLadingError(err)) throw err;
        if (isNoSpace(err)) throw new LadingError('STORAGE_FULL', 'The storage is full; nothing was stored.', { cause: err });
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
      const file = handle;
      const stream = file.createReadStream({ start: range?.start, end: range?.end, highWaterMark: CHUNK });
      const copyTo = (dest: Writable): Promise<void> =>
        // Destroying the stream closes the handle (autoClose), whether the copy succeeded or not.
        copyRange(file, range?.start ?? 0, range?.end, dest).finally(() => stream.destroy());
      return Object.assign(stream, { copyTo }) satisfies ResourceStream;
    },

    async copy(from, to, opts = {}) {
      const source = finalPath(from);
      const dest = finalPath(to);
      const temp = join(tmp, `${to}.${randomUUID().slice(24)}`);
      const publishable = opts.publishAfter?.();
      publishable?.catch(() => {});
      try {
        // NOTE: a reflink where the file system has them (Btrfs, XFS), else Node's copy, which
        // uses copy_file_range: the bytes stay in the kernel either way. Into `tmp/` first, so
        // a crash leaves a temporary the sweeper removes, never a half copy under a key.
        await copyFile(source, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
        if (fsync) {
          const file = await open(temp, 'r+');
          try {
            await file.datasync();
          } finally {
            await file.close();
          }
        }
        const { size } = await stat(temp);
        await publishable;
        await publish(temp, dest);
        return { size };
      } catch (err) {
        await unlink(temp).catch(() => {});
        if (isLadingError(err)) throw err;
        if (code(err) === 'ENOENT' && !(await stat(source).catch(() => null))) {
          throw new LadingError('NOT_FOUND', 'The content to copy is missing.', { cause: err });
        }
        if (isNoSpace(err)) throw new LadingError('STORAGE_FULL', 'The storage is full; nothing was stored.', { cause: err });
        throw err;
      }
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

    async *list() {
      // NOTE: `blobs/<first two characters>/<key>`; anything else there (a stray file) is no key.
      for (const dir of (await readdir(blobs, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
        const names = await readdir(join(blobs, dir)).catch((err: unknown) => {
          if (code(err) === 'ENOENT') return [] as string[];
          throw err;
        });
        for (const name of names.sort()) {
          if (!KEY.test(name) || name.slice(0, 2) !== dir) continue;
          const info = await stat(join(blobs, dir, name)).catch(() => null);
          if (info?.isFile()) yield { key: name, size: info.size, modifiedAt: info.mtime };
        }
      }
    },

    async sweepTemporaries(before, keep) {
      let removed = 0;
      for (const name of await readdir(tmp)) {
        // NOTE: a temporary is named `<key>.<12 hex digits>` (see `write`).
        if (keep?.(name.replace(/\.[0-9a-f]{12}$/, ''))) continue;
        const file = join(tmp, name);
        const info = await stat(file).catch(() => null);
        if (info && info.mtimeMs < before.getTime()) {
          await unlink(file).catch(() => {});
          removed++;
        }
      }
      return removed;
    },

    async probe() {
      await stat(blobs).catch((err: unknown) => {
        throw new LadingError('UNAVAILABLE', `The storage directory cannot be read (${code(err) ?? 'error'}).`, { cause: err });
      });
    },

    async space() {
      const fs = await statfs(options.root);
      return { free: fs.bavail * fs.bsize, total: fs.blocks * fs.bsize };
    },

    async close() {
      await directories.close();
    },
  };
}

/**
 * Staged writes in `staging/<key>`: an append truncates the file to the recorded offset (bytes
 * a crash left past it were never acknowledged), writes at that position and flushes before
 * each checkpoint; `complete` renames the file into place. Appends to one key are refused
 * while one runs in this process; across nodes the caller's lease keeps them apart.
 */
function fsStaging(o: {
  stagedPath(key: string): string; finalPath(key: string): string; fsync: boolean; publish(from: string, to: string): Promise<void>;
}): StagedWrites {
  const appending = new Set<string>();
  const storageError = (err: unknown): unknown => {
    if (isNoSpace(err)) return new LadingError('STORAGE_FULL', 'The storage is full; the bytes past the last checkpoint were not kept.', { cause: err });
    return err;
  };
  const missing = (err: unknown): unknown =>
    code(err) === 'ENOENT' ? new LadingError('NOT_FOUND', 'The staged bytes of this upload are missing.', { cause: err }) : err;
  return {
    async begin(key) {
      const file = await open(o.stagedPath(key), 'wx').catch((err: unknown) => { throw storageError(err); });
      await file.close();
      return {};
    },

    async append(key, _state, offset, source, { checkpointBytes, onCheckpoint }) {
      if (appending.has(key)) throw new LadingError('CONFLICT', 'Another request is appending to this upload.');
      appending.add(key);
      let file: FileHandle | null = null;
      try {
        file = await open(o.stagedPath(key), 'r+').catch((err: unknown) => { throw missing(err); });
        const handle = file;
        await handle.truncate(offset);
        let pos = offset;
        let recorded = offset;
        const checkpoint = async (): Promise<void> => {
          if (o.fsync) await handle.datasync().catch((err: unknown) => { throw storageError(err); });
          await onCheckpoint(pos, {});
          recorded = pos;
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
          const chunk = next.value;
          for (let done = 0; done < chunk.length;) {
            const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, pos + done).catch((err: unknown) => { throw storageError(err); });
            done += bytesWritten;
          }
          pos += chunk.length;
          if (pos - recorded >= checkpointBytes) await checkpoint();
        }
        // NOTE: what arrived before the source failed (the client went away) is kept too.
        if (pos > recorded) await checkpoint();
        if (sourceError) throw sourceError.err;
        return { offset: recorded, state: {} };
      } finally {
        await file?.close().catch(() => {});
        appending.delete(key);
      }
    },

    async readStaged(key, _state, length) {
      if (length === 0) {
        await stat(o.stagedPath(key)).catch((err: unknown) => { throw missing(err); });
        return Readable.from([]);
      }
      const file = await open(o.stagedPath(key), 'r').catch((err: unknown) => { throw missing(err); });
      return file.createReadStream({ start: 0, end: length - 1, highWaterMark: CHUNK });
    },

    async complete(key, _state: StagedState, length) {
      const staged = o.stagedPath(key);
      const dest = o.finalPath(key);
      const info = await stat(staged).catch(() => null);
      if (!info) {
        // NOTE: completed already (a crash came before the catalog heard of it).
        const done = await stat(dest).catch(() => null);
        if (done?.size === length) return;
        throw new LadingError('NOT_FOUND', 'The staged bytes of this upload are missing.');
      }
      if (info.size < length) throw new LadingError('INTERNAL', 'The staged bytes of this upload are fewer than were acknowledged.');
      if (info.size > length) await truncate(staged, length);
      if (o.fsync) {
        const file = await open(staged, 'r+');
        try {
          await file.datasync();
        } finally {
          await file.close();
        }
      }
      await o.publish(staged, dest);
    },

    async abort(key) {
      for (const file of [o.stagedPath(key), o.finalPath(key)]) {
        await unlink(file).catch((err: unknown) => {
          if (code(err) !== 'ENOENT') throw err;
        });
      }
    },
  };
}
