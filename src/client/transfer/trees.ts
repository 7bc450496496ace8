/**
 * What a transfer covers: the files below local paths (walked on disk) and the data objects
 * below remote collections (walked through the listing endpoint), as flat lists with paths
 * relative to where the walk began. Decides nothing about where things go.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { posix } from 'node:path';
import type { ApiClient } from '../api.ts';
import { ClientError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';

export interface LocalFile {
  /** Absolute path on disk. */
  abs: string;
  /** Path relative to the walked directory, '/'-separated. */
  rel: string;
  size: number;
  mtimeMs: number;
}

/** An entry a walk left out, and why (a directory link without -L, a broken link, a FIFO…). */
export interface Skipped {
  /** Path relative to the walked directory, '/'-separated. */
  rel: string;
  why: string;
}

/**
 * Every regular file below `dir` (symbolic links to files are followed; to directories only
 * with `follow`, each real directory once, so that a link cycle cannot make the walk endless),
 * every directory (relative, '' for `dir` itself) so that empty ones are created too, and what
 * was left out, with why: a link to a directory (without `follow`), a broken link, a FIFO, a
 * socket or a device, a directory that cannot be read.
 */
export async function walkLocal(dir: string, options: { follow?: boolean } = {}): Promise<{ files: LocalFile[]; dirs: string[]; skipped: Skipped[] }> {
  const files: LocalFile[] = [];
  const dirs = [''];
  const skipped: Skipped[] = [];
  const seen = new Set<string>([await realpath(dir)]);
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (err) {
      skipped.push({ rel: rel || '.', why: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` });
      return;
    }
    for (const e of entries) {
      const path = join(abs, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        dirs.push(r);
        await walk(path, r);
      } else if (e.isFile() || e.isSymbolicLink()) {
        const s = await stat(path).catch(() => null);
        if (s?.isFile()) {
          files.push({ abs: path, rel: r, size: s.size, mtimeMs: s.mtimeMs });
        } else if (!s) {
          skipped.push({ rel: r, why: 'a broken symbolic link' });
        } else if (s.isDirectory() && options.follow) {
          const real = await realpath(path);
          if (seen.has(real)) {
            skipped.push({ rel: r, why: 'a symbolic link to a directory walked already (a loop)' });
          } else {
            seen.add(real);
            dirs.push(r);
            await walk(path, r);
          }
        } else {
          skipped.push({ rel: r, why: s.isDirectory() ? 'a symbolic link to a directory (-L follows it)' : 'a symbolic link to a special file' });
        }
      } else {
        skipped.push({ rel: r, why: e.isFIFO() ? 'a FIFO' : e.isSocket() ? 'a socket' : 'a device' });
      }
    }
  };
  await walk(dir, '');
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, dirs, skipped };
}

/** What a local path is: a file (with its size), a directory, or nothing. */
export async function localKind(path: string): Promise<{ kind: 'file'; size: number; mtimeMs: number } | { kind: 'dir' } | { kind: 'none' }> {
  const s = await stat(path).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' && (await lstat(path).catch(() => null))) throw new ClientError(`${path} is a broken symbolic link`, EXIT.NOT_FOUND);
    if (err.code === 'ENOENT') return null;
    throw new ClientError(`cannot read ${path}: ${err.code ?? err.message}`, EXIT.FAILED);
  });
  if (!s) return { kind: 'none' };
  if (s.isDirectory()) return { kind: 'dir' };
  return { kind: 'file', size: s.size, mtimeMs: s.mtimeMs };
}

/** One entity of a listing, as the API describes it (spec 2.2; size and modified when the server sends them). */
export interface RemoteEntry {
  /** Absolute path. */
  path: string;
  name: string;
  kind: 'dataobject' | 'collection';
  checksum: string | null;
  size: number | null;
  pid: string | null;
  /** When the server last changed it (ISO 8601), when it says. */
  modified: string | null;
}

interface EntityRecord {
  dataobject: string;
  path: string;
  metadata: { PID: string | null; checksum: string | null; name: string; object_type: string; size?: number; modified?: string };
}

function entryOf(record: Record<string, EntityRecord>): RemoteEntry {
  const [name, r] = Object.entries(record)[0]!;
  return {
    path: posix.join(r.path, name), name, kind: r.metadata.object_type === 'collection' ? 'collection' : 'dataobject',
    checksum: r.metadata.checksum ?? null, size: typeof r.metadata.size === 'number' ? r.metadata.size : null, pid: r.metadata.PID ?? null,
    modified: r.metadata.modified ?? null,
  };
}

/**
 * What `path` is on the server: a data object (its entry), a collection, or nothing (null).
 * A metadata GET answers a data object's record, or a collection's listing: the record that
 * names `path` itself tells them apart.
 */
export async function remoteStat(api: ApiClient, path: string, signal?: AbortSignal): Promise<RemoteEntry | null> {
  const response = await api.request('GET', api.registeredUrl(path), { accept: [404], signal, headers: { accept: 'application/json' } });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  const records = ((await response.json()) as { Response: { data: Record<string, EntityRecord>[] } }).Response.data;
  const self = records.map(entryOf).find((e) => e.path === path && e.kind === 'dataobject');
  if (self && records.length === 1) return self;
  return { path, name: posix.basename(path), kind: 'collection', checksum: null, size: null, pid: null, modified: null };
}

/** The entries of one collection. `NOT_FOUND` when it does not exist. */
export async function listRemote(api: ApiClient, path: string, signal?: AbortSignal): Promise<RemoteEntry[]> {
  const records = await api.json<Record<string, EntityRecord>[]>('GET', `${api.registeredUrl(path)}/`, { signal });
  return records.map(entryOf);
}

/**
 * Every data object and collection below the collection `root` (relative paths, '/'-separated),
 * listing up to `parallel` collections at a time. A missing `root` gives empty lists.
 */
export async function walkRemote(api: ApiClient, root: string, parallel: number, signal?: AbortSignal): Promise<{ files: (RemoteEntry & { rel: string })[]; dirs: string[] }> {
  const files: (RemoteEntry & { rel: string })[] = [];
  const dirs: string[] = [];
  const pending = [root];
  let active = 0;
  let failure: unknown = null;
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      if (failure !== null || (pending.length === 0 && active === 0)) {
        resolve();
        return;
      }
      while (active < parallel && pending.length > 0) {
        const dir = pending.shift()!;
        active++;
        listRemote(api, dir, signal).then((entries) => {
          dirs.push(posix.relative(root, dir));
          for (const e of entries) {
            if (e.kind === 'collection') pending.push(e.path);
            else files.push({ ...e, rel: posix.relative(root, e.path) });
          }
        }, (err: unknown) => {
          if (!(dir === root && err instanceof ClientError && err.exitCode === EXIT.NOT_FOUND)) failure = err;
        }).finally(() => {
          active--;
          pump();
        });
      }
    };
    pump();
  });
  if (failure !== null) throw failure;
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, dirs };
}
