/**
 * Stands between this process's `FileHandle.prototype.datasync` and its callers for one test,
 * so that a test can see which files are flushed, in what order, hold a flush back or fail it.
 */
import { type FileHandle, open, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Until the end of test `t`, every `datasync` of a FileHandle calls `around` with the flushed
 * file's path (read from /proc; '?' when it cannot be) and the original flush, and returns
 * what `around` returns.
 */
export async function onDatasync(
  t: { after(fn: () => void): void },
  around: (path: string, original: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const probePath = join(tmpdir(), `lading-datasync-probe-${process.pid}`);
  const probe = await open(probePath, 'w');
  const proto = Object.getPrototypeOf(probe) as { datasync(this: FileHandle): Promise<void> };
  await probe.close();
  await rm(probePath, { force: true });
  const original = proto.datasync;
  proto.datasync = async function (this: FileHandle) {
    const path = await readlink(`/proc/self/fd/${this.fd}`).catch(() => '?');
    return around(path, () => original.call(this));
  };
  t.after(() => {
    proto.datasync = original;
  });
}
