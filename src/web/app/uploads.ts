/**
 * The upload queue: files and folders go to `/api/uploads` through tus-js-client, a few at a
 * time, each resumable — after a dropped connection or a server restart the client asks the
 * server for the offset and sends the rest; after a page reload the app finds the unfinished
 * uploads in localStorage (tus-js-client's fingerprints) and resumes them once the user picks
 * the same files again (a page cannot reopen a file by itself). Before anything is sent, the
 * targets are checked: existing ones are reported as conflicts, and `force` goes into the
 * upload's metadata only for those the user chose to replace. Holds no DOM: the pages render
 * its state and call its methods.
 */
import * as tus from 'tus-js-client';
import { ApiError, api, baseName, csrfHeaders, join, parentOf, registeredUrl, request } from './api.ts';
import { type RecordFields, entryOf } from './types.ts';

export type UploadState = 'waiting' | 'uploading' | 'paused' | 'done' | 'failed' | 'skipped' | 'cancelled';

export interface UploadItem {
  id: number;
  file: File;
  /** The data object it becomes. */
  target: string;
  /** What the user sees: the path relative to where it was dropped. */
  label: string;
  state: UploadState;
  sent: number;
  total: number;
  /** Bytes per second, smoothed. */
  rate: number;
  /** The offset the upload resumed from after a reload, a dropped connection or a restart. */
  resumedFrom: number | null;
  replace: boolean;
  error: string | null;
  pid: string | null;
  checksum: string | null;
  upload: tus.Upload | null;
  /** The URL of an upload the server has and this browser did not store, to go on with. */
  resumeUrl: string | null;
  /** When it finished (ms since the epoch). */
  finishedAt: number | null;
  /** When progress was last measured (ms), for the rate. */
  lastAt: number;
  lastSent: number;
  /** Whether the last request failed and the upload waits to try again (the server gone, busy). */
  stalled: boolean;
}

/** A file to upload and its path relative to the collection it goes into (`a/b.txt` for a folder's member). */
export interface Picked {
  file: File;
  relative: string;
}

/** A picked file with its target, before it is queued. */
export interface Planned extends Picked {
  target: string;
  exists: boolean;
  /** The names in the target's collection (shared by the files going there), to find a free one beside it. */
  siblings: Set<string>;
}

/** What to do with a file whose target exists: replace it, skip the file, or keep both (the new one as `name (2).ext`). */
export type ConflictChoice = 'replace' | 'skip' | 'both';

/** `name (2).ext`, `name (3).ext`, …: the first such name not in `taken`. */
export function freeName(name: string, taken: Set<string>): string {
  const dot = name.lastIndexOf('.');
  for (let n = 2; ; n++) {
    const candidate = dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * An open upload of the user's that no page is sending: one a reload or a closed tab left (as
 * tus-js-client stored it), or one this browser never knew (another browser's, the CLI's).
 */
export interface Unfinished {
  /** tus-js-client's storage key (`local`), else `server:<id>`. */
  key: string;
  url: string;
  target: string;
  label: string;
  /** Its length, null while deferred (a stream whose end the sender did not know yet). */
  size: number | null;
  replace: boolean;
  offset: number | null;
  /** When the server created it (ISO 8601). */
  created: string | null;
  /** Whether this browser stored it (else picking the file again resumes it by its URL). */
  local: boolean;
}

/** An upload as `GET /api/uploads` lists it. */
interface ServerUpload { url: string; id: string; state: 'open' | 'complete'; offset: number; length: number | null; path: string; created?: string }

const ENDPOINT = '/api/uploads';
// NOTE: enough retries to outlast a server restart, and a node's lease on an upload whose
// holder died (uploads.lease, 60 s by default), during which the server answers 409.
const RETRY_DELAYS = [0, 1000, 2000, 3000, 5000, 5000, 5000, 10000, 10000, 10000, 10000, 10000, 10000, 15000, 15000, 20000, 30000];
const PARALLEL = 3;

/** Whether tus-js-client should try again after `err`: network errors, 409 (another request holds the upload), 423, 429 and 5xx. */
function shouldRetry(err: tus.DetailedError): boolean {
  const status = err.originalResponse?.getStatus() ?? 0;
  return status === 0 || status === 409 || status === 423 || status === 429 || status >= 500;
}

/** The envelope's message of a tus error, or its own. */
function tusMessage(err: Error | tus.DetailedError): string {
  const res = 'originalResponse' in err ? err.originalResponse : null;
  if (res) {
    try {
      const body = JSON.parse(res.getBody()) as { Response?: { errors?: Record<string, string>[] } };
      const first = body.Response?.errors?.[0];
      if (first) {
        const [title, message] = Object.entries(first)[0]!;
        return `${title}: ${message}`;
      }
    } catch {
      // Not the envelope.
    }
    return `The server answered ${res.getStatus()}.`;
  }
  return /network|xhr|connection/i.test(err.message) ? 'The connection was lost; the upload will continue when you resume it.' : err.message;
}

export class UploadManager {
  items: UploadItem[] = [];
  unfinished: Unfinished[] = [];
  #user = '';
  #next = 1;
  #listeners = new Set<() => void>();
  #scheduled = false;

  /** Calls `listener` (at most once a frame) whenever the queue changes; returns the unsubscriber. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Goes up by one at every change of the queue, at once (listeners hear of it a frame later):
   * a view that rendered an earlier version and subscribed since knows it missed one.
   */
  version = 0;

  #changed(): void {
    this.version++;
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => {
      this.#scheduled = false;
      for (const listener of this.#listeners) listener();
    });
  }

  /** Binds the queue to the signed-in user and finds their unfinished uploads. */
  async signedIn(user: string): Promise<void> {
    this.#user = user;
    await this.findUnfinished();
  }

  #fingerprint(target: string) {
    // NOTE: the target is part of the fingerprint, so the same file sent to two places is two
    // uploads; the user too, so another user of the browser never resumes it.
    return async (file: File) => ['lading', this.#user, target, file.size, file.lastModified].join('|');
  }

  /**
   * Lists the user's open uploads the server has that no page of this app is sending: those
   * tus-js-client stored here (its entries of uploads the server no longer has — finished,
   * expired or terminated — are removed) and those this browser never knew.
   */
  async findUnfinished(): Promise<void> {
    const storage = tus.defaultOptions.urlStorage;
    const stored = (await storage.findAllUploads()).filter((u) => u.urlStorageKey.startsWith(`tus::lading|${this.#user}|`));
    let listed: ServerUpload[];
    try {
      listed = await api<ServerUpload[]>('GET', ENDPOINT);
    } catch {
      return;
    }
    const open = listed.filter((o) => o.state === 'open');
    const idOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    const active = new Set([...this.items.filter((i) => i.upload?.url).map((i) => idOf(i.upload!.url!)), ...this.items.flatMap((i) => (i.resumeUrl ? [idOf(i.resumeUrl)] : []))]);
    const found: Unfinished[] = [];
    const known = new Set<string>();
    for (const u of stored) {
      const server = u.uploadUrl ? open.find((o) => o.id === idOf(u.uploadUrl!)) : undefined;
      if (!server || !u.uploadUrl) {
        await storage.removeUpload(u.urlStorageKey);
        continue;
      }
      known.add(server.id);
      if (active.has(server.id)) continue;
      found.push({
        key: u.urlStorageKey, url: u.uploadUrl, target: u.metadata.path ?? server.path, label: u.metadata.label ?? baseName(u.metadata.path ?? server.path),
        size: u.size ?? server.length, replace: u.metadata.force === 'true', offset: server.offset, created: server.created ?? null, local: true,
      });
    }
    for (const server of open) {
      if (known.has(server.id) || active.has(server.id)) continue;
      found.push({
        key: `server:${server.id}`, url: server.url, target: server.path, label: baseName(server.path),
        size: server.length, replace: false, offset: server.offset, created: server.created ?? null, local: false,
      });
    }
    this.unfinished = found;
    this.#changed();
  }

  /**
   * Resumes the unfinished uploads whose file is among `files` (same name and size); returns
   * how many it resumed.
   */
  resumeWith(files: File[]): number {
    let resumed = 0;
    for (const u of [...this.unfinished]) {
      const file = files.find((f) => f.name === baseName(u.target) && f.size === u.size);
      if (!file) continue;
      this.unfinished = this.unfinished.filter((x) => x !== u);
      const item = this.#add(file, u.target, u.label, u.replace);
      // NOTE: one this browser did not store goes on by its URL (tus-js-client's uploadUrl).
      if (!u.local) item.resumeUrl = u.url;
      resumed++;
    }
    this.#pump();
    return resumed;
  }

  /**
   * Gives up an unfinished upload: terminates it on the server (one already gone counts as
   * terminated), then forgets it. Rejects with `ApiError` when the server refused, keeping it.
   */
  async discard(u: Unfinished): Promise<void> {
    try {
      await request('DELETE', u.url, { headers: { 'Tus-Resumable': '1.0.0' } });
    } catch (err) {
      if (!(err instanceof ApiError && (err.status === 404 || err.status === 410))) throw err;
    }
    this.unfinished = this.unfinished.filter((x) => x !== u);
    this.#changed();
    if (u.local) await tus.defaultOptions.urlStorage.removeUpload(u.key);
  }

  /**
   * Where `picked` would go inside `collection`, and which targets exist already. Lists each
   * target collection once, going down from `collection`: a collection missing from its
   * parent's listing holds nothing yet and is not asked for (no request that can only fail).
   */
  async plan(picked: Picked[], collection: string): Promise<Planned[]> {
    const targets = picked.map((p) => ({ ...p, target: join(collection, p.relative) }));
    const listings = new Map<string, Promise<Set<string>>>();
    const names = (dir: string): Promise<Set<string>> => {
      let known = listings.get(dir);
      if (!known) {
        known = (async () => {
          const inside = dir.length > collection.length && dir.startsWith(collection === '/' ? '/' : `${collection}/`);
          if (inside && !(await names(parentOf(dir))).has(baseName(dir))) return new Set<string>();
          try {
            const records = await api<Record<string, RecordFields>[]>('GET', `${registeredUrl(dir)}/`);
            return new Set(records.map((r) => entryOf(r).name));
          } catch (err) {
            // NOTE: it may have gone since its parent was listed.
            if (err instanceof ApiError && err.status === 404) return new Set<string>();
            throw err;
          }
        })();
        listings.set(dir, known);
      }
      return known;
    };
    const siblings = await Promise.all(targets.map((t) => names(parentOf(t.target))));
    return targets.map((t, i) => ({ ...t, exists: siblings[i]!.has(baseName(t.target)), siblings: siblings[i]! }));
  }

  /**
   * Creates the collections `planned` needs inside `collection` (parents first), then queues
   * each file; one whose target exists as `choose` says for it: replacing it, skipped, or
   * beside it under the first free `name (n).ext`.
   */
  async enqueue(planned: Planned[], collection: string, choose: (target: string) => ConflictChoice): Promise<void> {
    const dirs = new Set<string>();
    for (const p of planned) {
      for (let dir = parentOf(p.target); dir.length > collection.length && dir.startsWith(collection); dir = parentOf(dir)) dirs.add(dir);
    }
    for (const dir of [...dirs].sort((a, b) => a.split('/').length - b.split('/').length)) {
      await api('POST', '/api/registered', { json: { path: dir, force: true } });
    }
    for (const p of planned) {
      const choice = p.exists ? choose(p.target) : 'replace';
      if (choice === 'skip') {
        const item = this.#add(p.file, p.target, p.relative, false);
        item.state = 'skipped';
        continue;
      }
      if (choice === 'both') {
        const name = freeName(baseName(p.target), p.siblings);
        p.siblings.add(name);
        const target = join(parentOf(p.target), name);
        this.#add(p.file, target, p.relative.slice(0, p.relative.lastIndexOf('/') + 1) + name, false);
        continue;
      }
      this.#add(p.file, p.target, p.relative, p.exists);
    }
    this.#pump();
  }

  #add(file: File, target: string, label: string, replace: boolean): UploadItem {
    const item: UploadItem = {
      id: this.#next++, file, target, label, state: 'waiting', sent: 0, total: file.size, rate: 0, resumedFrom: null, stalled: false, resumeUrl: null, finishedAt: null,
      replace, error: null, pid: null, checksum: null, upload: null, lastAt: 0, lastSent: 0,
    };
    this.items = [...this.items, item];
    this.#changed();
    return item;
  }

  #pump(): void {
    let running = this.items.filter((i) => i.state === 'uploading').length;
    for (const item of this.items) {
      if (running >= PARALLEL) break;
      if (item.state !== 'waiting') continue;
      running++;
      void this.#start(item);
    }
    this.#changed();
  }

  async #start(item: UploadItem): Promise<void> {
    item.state = 'uploading';
    item.error = null;
    item.lastAt = performance.now();
    if (!item.upload) {
      const metadata: Record<string, string> = { path: item.target, label: item.label, filetype: item.file.type || 'application/octet-stream' };
      if (item.replace) metadata.force = 'true';
      const upload = new tus.Upload(item.file, {
        endpoint: `${location.origin}${ENDPOINT}`,
        ...(item.resumeUrl ? { uploadUrl: item.resumeUrl } : {}),
        metadata,
        headers: csrfHeaders(),
        retryDelays: RETRY_DELAYS,
        fingerprint: this.#fingerprint(item.target),
        storeFingerprintForResuming: true,
        removeFingerprintOnSuccess: true,
        onShouldRetry: (err) => {
          const again = item.state === 'uploading' && shouldRetry(err);
          // NOTE: between tries nothing moves: no rate, no time left, but "waiting for the server".
          if (again && !item.stalled) {
            item.stalled = true;
            item.rate = 0;
            this.#changed();
          }
          return again;
        },
        onAfterResponse: (req, res) => {
          if (item.stalled && res.getStatus() < 400) {
            item.stalled = false;
            item.lastAt = performance.now();
            item.lastSent = item.sent;
            this.#changed();
          }
          // NOTE: a HEAD is how the client resumes: its offset is where it goes on from.
          if (req.getMethod() === 'HEAD' && res.getStatus() === 200) {
            item.resumedFrom = Number(res.getHeader('Upload-Offset') ?? 0);
            item.sent = item.resumedFrom;
            item.lastSent = item.sent;
            item.lastAt = performance.now();
            this.#changed();
          }
        },
        onProgress: (sent, total) => {
          if (sent > item.sent) item.stalled = false;
          const now = performance.now();
          const dt = (now - item.lastAt) / 1000;
          if (dt >= 0.5) {
            const current = Math.max(0, sent - item.lastSent) / dt;
            item.rate = item.rate === 0 ? current : item.rate * 0.7 + current * 0.3;
            item.lastAt = now;
            item.lastSent = sent;
          }
          item.sent = sent;
          item.total = total;
          this.#changed();
        },
        onSuccess: () => {
          item.state = 'done';
          item.finishedAt = Date.now();
          item.sent = item.total;
          item.rate = 0;
          this.#pump();
          void this.#finished(item);
        },
        onError: (err) => {
          if (item.state !== 'uploading') return;
          item.state = 'failed';
          item.rate = 0;
          item.error = tusMessage(err);
          this.#pump();
        },
      });
      item.upload = upload;
      if (!item.resumeUrl) {
        const previous = await upload.findPreviousUploads();
        if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
      }
    }
    item.upload.start();
  }

  /** Reads the finished upload's data object: its checksum and, once the rules assign it, its PID. */
  async #finished(item: UploadItem): Promise<void> {
    const url = item.upload?.url;
    if (!url) return;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const state = await api<{ object: RecordFields | null }>('GET', `${url}?pid_await=true`);
        if (state.object) {
          const entry = entryOf({ [state.object.dataobject]: state.object });
          item.pid = entry.pid;
          item.checksum = entry.checksum;
          this.#changed();
        }
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  pause(item: UploadItem): void {
    if (item.state !== 'uploading' && item.state !== 'waiting') return;
    item.state = 'paused';
    item.rate = 0;
    void item.upload?.abort(false);
    this.#pump();
  }

  resume(item: UploadItem): void {
    if (item.state !== 'paused' && item.state !== 'failed') return;
    item.state = 'waiting';
    item.error = null;
    this.#pump();
  }

  /** Stops an upload and removes what the server kept of it. */
  cancel(item: UploadItem): void {
    if (item.state === 'done' || item.state === 'cancelled' || item.state === 'skipped') return;
    item.state = 'cancelled';
    item.rate = 0;
    const upload = item.upload;
    if (upload?.url) void upload.abort(true).catch(() => {});
    else void upload?.abort(false);
    this.#pump();
  }

  pauseAll(): void {
    for (const item of this.items) this.pause(item);
  }

  resumeAll(): void {
    for (const item of this.items) if (item.state === 'paused' || item.state === 'failed') { item.state = 'waiting'; item.error = null; }
    this.#pump();
  }

  /** Removes finished, skipped and cancelled uploads from the list. */
  clearFinished(): void {
    this.items = this.items.filter((i) => i.state !== 'done' && i.state !== 'skipped' && i.state !== 'cancelled');
    this.#changed();
  }

  /** Totals over what is queued, running or paused (finished ones count as sent). */
  totals(): { sent: number; total: number; rate: number; active: number; done: number; failed: number; stalled: number } {
    let sent = 0;
    let total = 0;
    let rate = 0;
    let active = 0;
    let done = 0;
    let failed = 0;
    let stalled = 0;
    for (const i of this.items) {
      if (i.state === 'skipped' || i.state === 'cancelled') continue;
      sent += i.sent;
      total += i.total;
      rate += i.rate;
      if (i.state === 'uploading' || i.state === 'waiting') active++;
      if (i.state === 'done') done++;
      if (i.state === 'failed') failed++;
      if (i.state === 'uploading' && i.stalled) stalled++;
    }
    return { sent, total, rate, active, done, failed, stalled };
  }

  /** After the network comes back, uploads that failed for want of it go on. */
  online(): void {
    for (const item of this.items) {
      if (item.state === 'failed' && item.error?.startsWith('The connection was lost')) {
        item.state = 'waiting';
        item.error = null;
      }
    }
    this.#pump();
  }
}

export const uploads = new UploadManager();
addEventListener('online', () => uploads.online());

/** The files of a drop, with their paths relative to the drop (folders walked). */
export async function droppedFiles(data: DataTransfer): Promise<Picked[]> {
  const entries = [...data.items].map((i) => i.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  if (entries.length === 0) return [...data.files].map((file) => ({ file, relative: file.name }));
  const out: Picked[] = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      out.push({ file, relative: `${prefix}${entry.name}` });
      return;
    }
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
    }
  };
  for (const entry of entries) await walk(entry, '');
  return out;
}

/** The files of a file input, with their paths relative to the picked folder when it picked one. */
export function pickedFiles(input: HTMLInputElement): Picked[] {
  return [...(input.files ?? [])].map((file) => ({ file, relative: file.webkitRelativePath || file.name }));
}

