/**
 * A full disk under the SQLite catalog: the whole data directory (catalog included) lives on a
 * small tmpfs (mounting needs root, as in CI) that a filler file fills. The catalog's writes
 * fail with SQLITE_FULL: requests are refused with 507 in the envelope, and once space returns a
 * resumable upload goes on at once (no lease stays behind a failed append).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { heldUpload, startTestServer } from '../helpers/server.ts';

function mountTmpfs(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err).trim();
  }
}

/** Writes `file` until the file system has no space left. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(4096, 7);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

const OFFSET_TYPE = 'application/offset+octet-stream';

describe('full disk under the SQLite catalog', () => {
  it('answers 507 when the catalog cannot write, and a resumable upload goes on as soon as space returns', async (t) => {
    const mnt = await mkdtemp(join(tmpdir(), 'lading-full-catalog-'));
    const problem = mountTmpfs(mnt, '16m');
    if (problem) {
      await rm(mnt, { recursive: true, force: true });
      if (process.env.CI) assert.fail(`cannot mount a tmpfs to fill (${problem}); this test needs root`);
      return t.skip(`cannot mount a tmpfs (${problem}); run as root`);
    }
    const s = await startTestServer({ 'uploads.checkpoint_bytes': 1024 }, { dataDir: join(mnt, 'data') });
    const filler = join(mnt, 'filler');
    try {
      const auth = await s.bearer('ivy');
      const tus = { 'tus-resumable': '1.0.0', authorization: auth };
      const LENGTH = 200_000;
      const create = await fetch(`${s.url}/api/uploads`, {
        method: 'POST', headers: { ...tus, 'upload-length': String(LENGTH), 'upload-metadata': `filename ${Buffer.from('resumed.bin').toString('base64')}` },
      });
      assert.equal(create.status, 201);
      const url = create.headers.get('location')!;
      const patch = (offset: number, body: Buffer) =>
        fetch(url, { method: 'PATCH', headers: { ...tus, 'upload-offset': String(offset), 'content-type': OFFSET_TYPE }, body });
      const offsetNow = async () => Number((await fetch(url, { method: 'HEAD', headers: tus })).headers.get('upload-offset'));
      const refusedFull = async (status: number, text: string) => {
        const body = JSON.parse(text) as { Meta: { status: number }; Response: { data: unknown; errors: Record<string, string>[] } };
        assert.equal(status, 507, text);
        assert.equal(body.Meta.status, 507);
        assert.equal(body.Response.data, null);
        assert.match(Object.values(body.Response.errors[0]!)[0]!, /full/);
      };
      assert.equal((await patch(0, Buffer.alloc(50_000, 1))).status, 204);

      // The disk is full before the request: the catalog cannot even take the upload's lease.
      fill(filler);
      const early = await patch(50_000, Buffer.alloc(50_000, 2));
      await refusedFull(early.status, await early.text());
      await rm(filler);

      // The disk fills while a PATCH runs: the append fails, and so does releasing its lease.
      const held = heldUpload(url, auth, {
        method: 'PATCH', contentLength: 150_000, headers: { 'tus-resumable': '1.0.0', 'upload-offset': '50000', 'content-type': OFFSET_TYPE },
      });
      held.answer.catch(() => {});
      await held.write(Buffer.alloc(50_000, 2));
      for (let i = 0; i < 100 && (await offsetNow()) < 100_000; i++) await sleep(50);
      assert.equal(await offsetNow(), 100_000, 'the first bytes of the PATCH are recorded');
      fill(filler);
      held.end(Buffer.alloc(100_000, 2));
      const late = await held.answer;
      await refusedFull(late.status, late.body);

      // Space returns: the upload goes on at once, from the offset it reports.
      await rm(filler);
      const offset = await offsetNow();
      assert.ok(offset >= 100_000 && offset < LENGTH, `offset ${offset}`);
      const resumed = await patch(offset, Buffer.alloc(LENGTH - offset, 3));
      assert.equal(resumed.status, 204, `the failed append left no lease behind: ${await resumed.text()}`);
      const download = await fetch(`${s.home('ivy', 'resumed.bin')}?download=true`, { headers: { authorization: auth } });
      assert.equal(download.status, 200);
      const expected = Buffer.concat([Buffer.alloc(50_000, 1), Buffer.alloc(offset - 50_000, 2), Buffer.alloc(LENGTH - offset, 3)]);
      assert.ok(Buffer.from(await download.arrayBuffer()).equals(expected), 'the object holds the acknowledged bytes, then the resumed ones');
    } finally {
      await rm(filler, { force: true });
      await s.stop();
      execFileSync('umount', [mnt]);
      await rm(mnt, { recursive: true, force: true });
    }
  });
});
