/**
 * A collection in one download on a PostgreSQL catalog and an S3 object store (Swift's S3 API
 * in CI): a collection of a few hundred members in sub-collections read back by Python's
 * `zipfile` and `7z t` with every member's SHA-256 equal to the catalog's, a BagIt bag that
 * the independent check validates, and a member whose object in the store became shorter or
 * changed under the catalog, which cuts the transfer instead of ending a smaller archive that
 * looks whole. (Archives past the classic ZIP bounds are read back on the embedded defaults, in
 * `archives.test.ts`.) Needs `.ci/services/postgres.sh` and `.ci/services/swift.sh`; skips
 * without them, except under CI, where that fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { parsePath } from '../../src/core/path.ts';
import { emptyS3Prefix } from '../helpers/cluster.ts';
import { postgresS3 } from '../helpers/postgres-s3.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PY_BAG, download, expected, pythonRead, run, sevenZipTest } from './archive-readers.ts';

/** Members of the collection: enough for many S3 reads in one archive, spread over sub-collections. */
const MEMBERS = 300;

const services = postgresS3('archives on PostgreSQL and S3', 'archives on PostgreSQL and S3 need', 'archives');
if (services) {
  const { s3 } = services;
  const prefix = `${services.schema}/`;
  const client = new S3Client({
    endpoint: s3.endpoint, region: s3.region, forcePathStyle: true,
    credentials: { accessKeyId: s3.key, secretAccessKey: s3.secret },
  });

  describe('a collection in one download on PostgreSQL and S3', () => {
    let s: TestServer;
    let alice: string;
    let dir: string;
    const base = '/tz/home/alice/survey';

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lading-archives-pg-'));
      s = await startTestServer(services.flags);
      alice = await s.bearer('alice');
      const actor = await s.deps.backend.actorFor('alice');
      for (const c of [base, `${base}/raw`, `${base}/raw/ctd`, `${base}/docs`, `${base}/empty`]) {
        const res = await fetch(`${s.url}/api/registered`, { method: 'POST', headers: { authorization: alice, 'content-type': 'application/json' }, body: JSON.stringify({ path: c }) });
        assert.equal(res.status, 200, c);
      }
      // NOTE: in process, several at a time; one member of 3 MB, so a transfer is well under way when it is read.
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        for (let i = next++; i < MEMBERS; i = next++) {
          const where = ['raw', 'raw/ctd', 'docs', ''][i % 4];
          const name = i === 150 ? 'big-cast.bin' : i === 7 ? 'Grüße 100%.txt' : `m${String(i).padStart(3, '0')}.dat`;
          const body = i === 150 ? randomBytes(3_000_000) : randomBytes(i % 17 === 0 ? 0 : 100 + ((i * 7919) % 60_000));
          const path = parsePath(`${base}/${where ? `${where}/` : ''}${name}`);
          await s.deps.backend.uploadAs(actor, path, Readable.from([body]), { overwrite: false });
        }
      }));
    });
    after(async () => {
      await s?.stop();
      await rm(dir, { recursive: true, force: true });
      await services.dropSchema();
      await emptyS3Prefix(client, s3.bucket, prefix);
      client.destroy();
    });

    it(`download=zip of ${MEMBERS} members: zipfile and 7z read every one back with the catalog's SHA-256`, async () => {
      const file = join(dir, 'survey.zip');
      const res = await download(`${s.home('alice', 'survey')}?download=zip`, file, { authorization: alice });
      assert.equal(res.status, 200);
      const read = await pythonRead(file, dir);
      const want = await expected(s, base, 'survey/');
      want.set('survey/', null);
      assert.equal([...want.values()].filter((v) => v !== null).length, MEMBERS);
      assert.deepEqual(read, want);
      assert.ok(read.has('survey/empty/'), 'an empty collection is a directory entry');
      sevenZipTest(file);
    });

    it('download=bag: the bag validates, with the PIDs the catalog holds', async () => {
      await s.deps.catalog.addMeta(parsePath(`${base}/docs/m002.dat`), { attribute: 'PID', value: '21.T99999/m002', unit: '' });
      await s.deps.catalog.addMeta(parsePath(base), { attribute: 'PID', value: '21.T99999/survey', unit: '' });
      const file = join(dir, 'survey-bag.zip');
      assert.equal((await download(`${s.home('alice', 'survey')}?download=bag`, file, { authorization: alice })).status, 200);
      const info = JSON.parse((await run('python3', ['-c', PY_BAG, file], { maxBuffer: 1 << 24 })).stdout) as Record<string, string>;
      assert.equal(info['External-Identifier'], '21.T99999/survey');
      assert.equal(info['Payload-Oxum']!.split('.')[1], String(MEMBERS));
      assert.equal(info['pids.txt'], '21.T99999/m002 data/docs/m002.dat\n');
    });

    /** Reads the whole answer; says whether the transfer broke. */
    const fetchAll = (url: string, file: string) => new Promise<{ status: number; broken: boolean }>((resolve, reject) => {
      request(url, { headers: { authorization: alice } }, (res) => {
        pipeline(res, createWriteStream(file)).then(() => resolve({ status: res.statusCode ?? 0, broken: false }), () => resolve({ status: res.statusCode ?? 0, broken: true }));
      }).on('error', reject).end();
    });

    for (const [damage, change] of [
      ['shorter than the catalog says (cut in the store)', (bytes: Buffer) => bytes.subarray(0, 1_000_000)],
      ['changed in the store (same size, other bytes)', (bytes: Buffer) => Buffer.concat([bytes.subarray(0, 2_500_000), Buffer.from('corrupt'), bytes.subarray(2_500_007)])],
    ] as const) {
      for (const kind of ['zip', 'bag'] as const) {
        it(`download=${kind} with a member ${damage}: a broken transfer, which zipfile refuses`, async () => {
          const entity = await s.deps.catalog.getEntity(parsePath(`${base}/docs/big-cast.bin`));
          assert.ok(entity?.kind === 'dataobject');
          const Key = prefix + entity.blob;
          const original = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key }))).Body!.transformToByteArray());
          assert.equal(original.length, 3_000_000);
          await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: change(original) }));
          try {
            const file = join(dir, 'broken.zip');
            const { status, broken } = await fetchAll(`${s.home('alice', 'survey')}?download=${kind}`, file);
            assert.equal(status, 200, 'the failure comes after the status line');
            assert.equal(broken, true, 'the transfer is cut, not ended');
            await assert.rejects(pythonRead(file, dir), 'zipfile refuses the partial archive');
          } finally {
            await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: original }));
          }
          const file = join(dir, 'whole.zip');
          assert.deepEqual(await fetchAll(`${s.home('alice', 'survey')}?download=${kind}`, file), { status: 200, broken: false });
          await (kind === 'zip' ? pythonRead(file, dir) : run('python3', ['-c', PY_BAG, file], { maxBuffer: 1 << 24 }));
        });
      }
    }
  });
}
