/**
 * Where `lading put` remembers the resumable uploads it began, so that running the same command
 * again continues them: one small JSON file per upload under
 * `$XDG_STATE_HOME/lading/uploads/` (else `~/.local/state/lading/uploads/`), named by a hash of
 * the server, the local file (path, size, modification time) and the target path. A file that
 * changed gets another name, so its old upload is never continued with new bytes. Holds no
 * token: an upload URL is useless without one.
 *
 * A store reads the directory once, at its first `get`, and after that opens only the records it
 * saw there or wrote itself: a tree of many small files then costs one `readdir`, not one failed
 * open per file. A record another process writes later is not seen by this store; that process
 * continues its own upload.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface ResumeRecord {
  /** The upload's URL (the Location of its creation). */
  url: string;
  local: string;
  remote: string;
  size: number;
  mtimeMs: number;
  created: string;
}

export interface ResumeKey {
  server: string;
  local: string;
  remote: string;
  size: number;
  mtimeMs: number;
}

/** The directory of the resume records, from the environment (XDG base directories). */
export function resumeDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(state, 'lading', 'uploads');
}

export class ResumeStore {
  readonly dir: string;

  /** The names of the records in `dir`, read once. */
  #names: Promise<Set<string>> | null = null;

  constructor(dir: string = resumeDir()) {
    this.dir = dir;
  }

  #name(key: ResumeKey): string {
    const id = createHash('sha256').update(JSON.stringify([key.server, key.local, key.remote, key.size, key.mtimeMs])).digest('hex');
    return `${id.slice(0, 32)}.json`;
  }

  #file(key: ResumeKey): string {
    return join(this.dir, this.#name(key));
  }

  #listed(): Promise<Set<string>> {
    this.#names ??= readdir(this.dir).then((names) => new Set(names), () => new Set<string>());
    return this.#names;
  }

  /** The record of an upload begun for `key`, or null. An unreadable record counts as none. */
  async get(key: ResumeKey): Promise<ResumeRecord | null> {
    if (!(await this.#listed()).has(this.#name(key))) return null;
    try {
      const record = JSON.parse(await readFile(this.#file(key), 'utf8')) as ResumeRecord;
      return typeof record.url === 'string' ? record : null;
    } catch {
      return null;
    }
  }

  /** Remembers `url` for `key`, atomically (a crash leaves the old record or the new one). */
  async put(key: ResumeKey, url: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.#file(key);
    const record: ResumeRecord = { url, local: key.local, remote: key.remote, size: key.size, mtimeMs: key.mtimeMs, created: new Date().toISOString() };
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(record) + '\n', { mode: 0o600 });
    await rename(temp, file);
    (await this.#listed()).add(this.#name(key));
  }

  async delete(key: ResumeKey): Promise<void> {
    await rm(this.#file(key), { force: true });
    (await this.#listed()).delete(this.#name(key));
  }
}
