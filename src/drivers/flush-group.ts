/**
 * Group commit for flushes to disk, shared by the drivers: many callers that each need "what I
 * wrote before now is on disk" share one flush, instead of one each. It runs the flush it is
 * given and knows nothing of what is flushed (a SQLite write-ahead log, a directory).
 */
import { type FileHandle, open } from 'node:fs/promises';

/** Shares flushes among concurrent callers. */
export interface FlushGroup {
  /**
   * Resolves once a flush that started after this call has completed, so everything written
   * before the call is on disk; rejects with the flush's error (the writes may then be lost).
   * Callers arriving while a flush runs share the next one: at most one runs and one waits.
   */
  flush(): Promise<void>;
  /** Flushes run so far (tests assert that concurrent callers share them). */
  readonly flushes: number;
}

/** A group around `run`, which flushes once and resolves when that is done. */
export function flushGroup(run: () => Promise<void>): FlushGroup {
  let running: Promise<void> | null = null;
  let waiting: Promise<void> | null = null;
  let flushes = 0;
  const start = (): Promise<void> => {
    flushes++;
    const current: Promise<void> = run().finally(() => {
      if (running === current) running = null;
    });
    running = current;
    return current;
  };
  return {
    flush() {
      if (!running) return start();
      // NOTE: the flush running may have started before the caller's write reached the page
      // cache, so it proves nothing for this caller: wait for it, then share the next one.
      waiting ??= running.catch(() => {}).then(() => {
        waiting = null;
        return start();
      });
      return waiting;
    },
    get flushes() {
      return flushes;
    },
  };
}

/** A flush group for one file or directory, and the descriptor it keeps open for it. */
export interface FileFlushGroup extends FlushGroup {
  /** Closes the descriptor, if one is open. The group may not be used after. */
  close(): Promise<void>;
}

/**
 * A group flushing `path`: `datasync` (a file's bytes) or `sync` (also its metadata, which a
 * directory's entries are). The path is opened read-only at the first flush and kept open, so
 * one descriptor serves every flush (a flush covers what any descriptor of the file wrote);
 * when opening fails, that flush rejects and the next one opens again.
 */
export function fileFlushGroup(path: string, how: 'datasync' | 'sync'): FileFlushGroup {
  let opened: Promise<FileHandle> | null = null;
  const group = flushGroup(async () => {
    opened ??= open(path, 'r');
    const handle = await opened.catch((err: unknown) => {
      opened = null;
      throw err;
    });
    await (how === 'sync' ? handle.sync() : handle.datasync());
  });
  return {
    flush: () => group.flush(),
    get flushes() {
      return group.flushes;
    },
    async close() {
      const handle = opened;
      opened = null;
      await handle?.then((h) => h.close(), () => {});
    },
  };
}
