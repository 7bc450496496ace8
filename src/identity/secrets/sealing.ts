/**
 * Encryption at rest for secrets lading must keep (private keys, refresh tokens): AES-256-GCM
 * under one master key. Sealed values are self-describing strings `v1.<iv>.<tag>.<ciphertext>`
 * (base64url), bound to a purpose label so a value sealed for one use cannot be replayed as
 * another. The master key comes from the configuration or, on embedded defaults, from a file
 * created in the data directory with mode 0600.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LadingError } from '../../core/errors.ts';

export interface Sealer {
  seal(plaintext: string | Buffer, purpose: string): string;
  /** Rejects with `INTERNAL` when the value was tampered with or sealed under another key or purpose. */
  open(sealed: string, purpose: string): Buffer;
}

export function createSealer(masterKey: Buffer): Sealer {
  if (masterKey.length !== 32) throw new Error('sealing: the master key must be 32 bytes');
  // NOTE: one key object for the process, rather than one made from the bytes on every call.
  const key = createSecretKey(masterKey);
  return {
    seal(plaintext, purpose) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    open(sealed, purpose) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new LadingError('INTERNAL', 'A sealed secret is malformed.');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(purpose));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
      } catch (cause) {
        throw new LadingError('INTERNAL', 'A sealed secret could not be opened (wrong master key or tampered data).', { cause });
      }
    },
  };
}

/**
 * Loads the 32-byte master key from `file` (base64 or raw), creating it with fresh random
 * bytes and mode 0600 when it does not exist and `create` is true.
 */
export async function loadMasterKey(file: string, create: boolean): Promise<Buffer> {
  try {
    const raw = await readFile(file);
    const text = raw.toString('utf8').trim();
    const key = /^[A-Za-z0-9+/=_-]{43,44}$/.test(text) ? Buffer.from(text, 'base64') : raw;
    if (key.length !== 32) throw new Error(`${file}: the master key must be 32 bytes (or their base64)`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw err;
    const key = randomBytes(32);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' }).catch(async (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    });
    return loadMasterKey(file, false);
  }
}
