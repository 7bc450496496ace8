/**
 * The one reader of secret files the configuration names (connection strings, keys, client
 * secrets, passwords): the first line, trimmed. Its errors name the configuration key and the
 * file, never the content; it logs and prints nothing.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from './config.ts';

export interface SecretFileOptions {
  /** The configuration key naming the file, for messages (`catalog.url_file`, …). */
  key: string;
  file: string;
  /** When the file does not exist, create it with 32 random bytes (base64url), mode 0600. */
  create?: boolean;
  /** What `create` writes instead of random bytes (a secret derived from another one). */
  initial?: string;
}

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'error';
}

/**
 * Resolves with the file's first line, trimmed. Rejects with `ConfigError` naming `key` and the
 * file when it cannot be read (or, with `create`, created) or its first line is empty. Safe when
 * several processes create the same file at once: all of them read the one that won.
 */
export async function readSecretFile(o: SecretFileOptions): Promise<string> {
  let text: string;
  try {
    text = await readFile(o.file, 'utf8');
  } catch (err) {
    if (errorCode(err) !== 'ENOENT' || !o.create) throw new ConfigError(`${o.key}: cannot read '${o.file}' (${errorCode(err)}).`);
    await createSecretFile(o.file, o.initial ?? randomBytes(32).toString('base64url')).catch((e: unknown) => {
      throw new ConfigError(`${o.key}: cannot create '${o.file}' (${errorCode(e)}).`);
    });
    return readSecretFile({ key: o.key, file: o.file });
  }
  const line = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (!line) throw new ConfigError(`${o.key}: '${o.file}' is empty.`);
  return line;
}

async function createSecretFile(file: string, content: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // NOTE: written aside and hard-linked into place, so a process starting at the same time
  // never reads a half-written file, and the first one to link wins.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, content + '\n', { mode: 0o600 });
  await link(tmp, file).catch((e: unknown) => {
    if (errorCode(e) !== 'EEXIST') throw e;
  }).finally(() => unlink(tmp));
}

/**
 * A secret given either as a file (which wins) or as a value from the environment: the file's
 * first line, the value, or null when neither is set. Rejects as `readSecretFile` does.
 */
export async function secretSetting(o: { fileKey: string; file: string | null; value: string | null }): Promise<string | null> {
  return o.file ? readSecretFile({ key: o.fileKey, file: o.file }) : o.value;
}
