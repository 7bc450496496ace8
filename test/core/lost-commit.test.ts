/**
 * An upload whose catalog commit lost its answer (the connection to the catalog broke during
 * the COMMIT) is answered with the catalog's `UNAVAILABLE`, but keeps its bytes: the commit
 * may have made the object visible, and deleting them would leave a visible object without
 * content. One whose commit surely failed still leaves nothing behind.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { Backend } from '../../src/core/backend.ts';
import { LadingError, isLadingError } from '../../src/core/errors.ts';
import { parsePath } from '../../src/core/path.ts';
import { type Catalog, systemClock } from '../../src/core/ports.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { createFsResource } from '../../src/drivers/resource/fs.ts';
import { trustedAuthority } from '../helpers/trusted.ts';

it('an upload whose commit lost its answer keeps the bytes of the object the commit may have made visible', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lading-lost-commit-'));
  const real = createSqliteCatalog({ file: join(dir, 'c.sqlite') });
  let commits: 'carried out, answer lost' | 'failed' = 'carried out, answer lost';
  const catalog: Catalog = {
    ...real,
    async commitObject(input) {
      const lost = commits === 'carried out, answer lost';
      if (lost) await real.commitObject(input);
      throw new LadingError('UNAVAILABLE', 'The catalog (PostgreSQL) cannot be reached right now; retry later.', { details: lost ? { maybeCommitted: true } : {} });
    },
  };
  const resource = await createFsResource({ root: join(dir, 'r') });
  const backend = new Backend({ catalog, resource, authority: trustedAuthority, clock: systemClock, zone: 'z', maxUploadBytes: 1 << 20 });
  const cred = { kind: 'trusted', user: 'u' };
  const upload = (name: string) => backend.upload(cred, parsePath(`/z/home/u/${name}`), Readable.from([Buffer.from('content')]), { overwrite: false })
    .then(() => null, (err: unknown) => err);
  try {
    await backend.init(new Date());
    await backend.addUser('u');

    const failure = await upload('kept');
    assert.ok(isLadingError(failure, 'UNAVAILABLE'), String(failure));
    const object = await backend.stat(cred, parsePath('/z/home/u/kept'));
    assert.ok(object.kind === 'dataobject');
    assert.equal(await text(await resource.read(object.blob)), 'content', 'the visible object has its bytes');

    commits = 'failed';
    assert.ok(isLadingError(await upload('gone'), 'UNAVAILABLE'));
    await assert.rejects(backend.stat(cred, parsePath('/z/home/u/gone')), (err: unknown) => isLadingError(err, 'NOT_FOUND'));
    assert.deepEqual((await real.trackedBlobs(new Date(Date.now() + 1000))).map((b) => b.blob), [], 'a commit that surely failed leaves nothing behind');
  } finally {
    await real.close();
    await rm(dir, { recursive: true, force: true });
  }
});
