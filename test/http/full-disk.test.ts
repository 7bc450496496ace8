/**
 * A full disk: the upload is refused with 507 in the envelope, nothing becomes visible, no
 * temporary remains, and the space is usable again at once. The resource lives on a real
 * 4 MiB tmpfs (mounting needs root, as in CI).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, json } from '../helpers/server.ts';

function mountTmpfs(dir: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err).trim();
  }
}

describe('full disk', () => {
  it('refuses the upload with 507 and leaves nothing behind', async (t) => {
    const mnt = await mkdtemp(join(tmpdir(), 'lading-full-'));
    const problem = mountTmpfs(mnt);
    if (problem) {
      await rm(mnt, { recursive: true, force: true });
      if (process.env.CI) assert.fail(`cannot mount a tmpfs to fill (${problem}); this test needs root`);
      return t.skip(`cannot mount a tmpfs (${problem}); run as root`);
    }
    const s = await startTestServer({ 'resource.path': join(mnt, 'resource') });
    try {
      const auth = await s.bearer('ivy');
      const put = (name: string, size: number) => fetch(s.home('ivy', name), {
        method: 'PUT', headers: { authorization: auth, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, 1),
      });
      const res = await put('too-big.bin', 8 * 1024 * 1024);
      assert.equal(res.status, 507);
      const body = await json(res);
      assert.equal(body.Meta.status, 507);
      assert.equal(body.Response.data, null);
      assert.equal((await fetch(s.home('ivy', 'too-big.bin'), { headers: { authorization: auth } })).status, 404);
      assert.deepEqual(await readdir(join(mnt, 'resource', 'tmp')), []);
      assert.deepEqual(await s.deps.catalog.trackedBlobs(new Date(Date.now() + 1000)), []);
      assert.equal((await put('fits.bin', 1024 * 1024)).status, 200, 'the space is free again');
    } finally {
      await s.stop();
      execFileSync('umount', [mnt]);
      await rm(mnt, { recursive: true, force: true });
    }
  });
});
