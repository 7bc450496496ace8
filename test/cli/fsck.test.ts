/**
 * Fixity on the embedded defaults (SQLite, files under <data>/resource): see `fsck-suite.ts`.
 * The bytes are damaged in the files themselves.
 */
import { mkdir, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server.ts';
import { fsckSuite } from './fsck-suite.ts';

const file = (s: TestServer, key: string) => join(s.dataDir, 'resource', 'blobs', key.slice(0, 2), key);

const write = async (s: TestServer, key: string, bytes: Buffer): Promise<string> => {
  await mkdir(join(s.dataDir, 'resource', 'blobs', key.slice(0, 2)), { recursive: true });
  await writeFile(file(s, key), bytes);
  return file(s, key);
};

fsckSuite('the embedded defaults', {}, {
  async flipByte(s, key) {
    const bytes = await readFile(file(s, key));
    bytes[1000] = bytes[1000]! ^ 0x01;
    await writeFile(file(s, key), bytes);
  },
  remove: (s, key) => unlink(file(s, key)),
  async addOrphan(s, key, bytes) {
    // NOTE: older than recovery.grace (1 day): no write under way is that old.
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    await utimes(await write(s, key, bytes), twoDaysAgo, twoDaysAgo);
  },
  async addYoungKey(s, key, bytes) {
    await write(s, key, bytes);
  },
  holds: (s, key) => stat(file(s, key)).then(() => true, () => false),
});
