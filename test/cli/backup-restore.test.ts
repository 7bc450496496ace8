/**
 * `lading backup` copies a running embedded deployment and `lading restore` brings it back:
 * a backup taken while several writers upload and overwrite objects restores into an empty
 * directory, where a server starts, every object of the restored catalog downloads with the
 * SHA-256 the catalog records and is one of the versions a writer uploaded, every object
 * uploaded before the backup began is there, and the same user logs in — with the same
 * password, and with a token issued before the backup. While a backup holds the data
 * directory, the server deletes no bytes. Operator mistakes are one line each.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnServe, stopProcess } from '../helpers/process.ts';
import { json } from '../helpers/server.ts';
import { takeBackupHold } from '../../src/wiring/backup-hold.ts';
import { cleanEnv, oneLineError, runLading } from './run-lading.ts';

const env = cleanEnv({ LADING_LOG_LEVEL: 'warn' });
const sha = (b: Buffer): string => `sha2:${createHash('sha256').update(b).digest('base64')}`;

async function login(url: string, user: string, password: string): Promise<string> {
  const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ username: user, password }) });
  assert.equal(res.status, 200);
  return (await json(res)).Response.data.token as string;
}

async function put(url: string, token: string, name: string, body: Buffer): Promise<number> {
  const res = await fetch(`${url}/api/registered/lading/home/ann/${name}?force=true`, {
    method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** The data objects of a catalog file: path → checksum. */
function objectsIn(file: string): Map<string, string> {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const rows = db.prepare("SELECT path, checksum FROM entities WHERE kind = 'dataobject' AND path LIKE '/lading/home/%'").all();
    return new Map(rows.map((r) => [String(r.path), String(r.checksum)]));
  } finally {
    db.close();
  }
}

describe('backup and restore', () => {
  const dirs: string[] = [];
  const temp = async (prefix: string): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('restores a backup taken during uploads, with every object verified and the same logins', async () => {
    const data = await temp('lading-backup-data-');
    const backup = join(await temp('lading-backup-'), 'copy');
    const restored = join(await temp('lading-restored-'), 'data');
    assert.equal((await runLading(['user', 'add', 'ann', '--data', data], { input: 'ann-pw\n' })).code, 0);
    const server = await spawnServe(data, env);
    /** Every version uploaded of each path: path → checksums. */
    const versions = new Map<string, Set<string>>();
    const record = (name: string, body: Buffer): void => {
      const path = `/lading/home/ann/${name}`;
      if (!versions.has(path)) versions.set(path, new Set());
      versions.get(path)!.add(sha(body));
    };
    let token = '';
    let before: Set<string>;
    let duringBackup = 0;
    try {
      token = await login(server.url, 'ann', 'ann-pw');
      // Small objects live in the catalog, larger ones in files: both kinds are in a backup.
      const body = (i: number): Buffer => randomBytes(i % 3 === 0 ? 1000 : 100_000 + i);
      for (let i = 0; i < 12; i++) {
        const b = body(i);
        record(`first-${i}.bin`, b);
        assert.equal(await put(server.url, token, `first-${i}.bin`, b), 200);
      }
      before = new Set(versions.keys());
      let stop = false;
      let backingUp = false;
      // Writers add new objects and overwrite old ones (whose replaced bytes the server deletes).
      const writer = async (w: number): Promise<void> => {
        for (let i = 0; !stop; i++) {
          const name = i % 2 === 0 ? `w${w}-${i}.bin` : `first-${(w * 7 + i) % 12}.bin`;
          const b = body(i + w);
          record(name, b);
          const status = await put(server.url, token, name, b);
          assert.ok(status === 200 || status === 201, `upload of ${name}: ${status}`);
          if (backingUp) duringBackup++;
        }
      };
      const writers = [0, 1, 2, 3].map(writer);
      await sleep(200);
      backingUp = true;
      const ran = await runLading(['backup', '--data', data, backup], { env: { LADING_LOG_LEVEL: 'warn' } });
      backingUp = false;
      stop = true;
      await Promise.all(writers);
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stdout, /^backup written to .*: \d+ objects \(\d+ as files\), \d+ bytes; catalog snapshot, CA and keys copied\n$/);
      assert.equal(ran.stderr, '');
      assert.ok(duringBackup > 0, 'uploads completed while the backup ran');
    } finally {
      await stopProcess(server.proc);
    }

    const res = await runLading(['restore', backup, '--data', restored]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^restored into .*: (\d+) objects \(\d+ as files\), \d+ bytes; every object matches its SHA-256\n$/);

    const objects = objectsIn(join(restored, 'catalog.sqlite'));
    for (const path of before) assert.ok(objects.has(path), `${path}, uploaded before the backup, is restored`);
    const again = await spawnServe(restored, env);
    try {
      // A token issued before the backup is in the restored catalog (stored hashed), and the
      // master key came with it, so the session's sealed proxy still opens.
      for (const [path, checksum] of objects) {
        assert.ok(versions.get(path)?.has(checksum), `${path} holds a version a writer uploaded`);
        const got = await fetch(`${again.url}/api/registered${path}?download=true`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(got.status, 200, path);
        assert.equal(sha(Buffer.from(await got.arrayBuffer())), checksum, `${path} downloads with its SHA-256`);
      }
      const fresh = await login(again.url, 'ann', 'ann-pw');
      assert.equal(await put(again.url, fresh, 'after-restore.bin', Buffer.from('new')), 200);
    } finally {
      await stopProcess(again.proc);
    }
  });

  it('deletes no bytes while a backup holds the data directory, and again once it ends', async () => {
    const data = await temp('lading-backup-hold-');
    assert.equal((await runLading(['user', 'add', 'ann', '--data', data], { input: 'ann-pw\n' })).code, 0);
    const server = await spawnServe(data, env);
    try {
      const token = await login(server.url, 'ann', 'ann-pw');
      const blobOf = (): string => {
        const db = new DatabaseSync(join(data, 'catalog.sqlite'), { readOnly: true });
        try {
          return String(db.prepare("SELECT blob FROM entities WHERE path = '/lading/home/ann/x.bin'").get()!.blob);
        } finally {
          db.close();
        }
      };
      const file = (blob: string): string => join(data, 'resource', 'blobs', blob.slice(0, 2), blob);
      assert.equal(await put(server.url, token, 'x.bin', randomBytes(200_000)), 200);
      const v1 = blobOf();
      // NOTE: the hold is taken by this process, the server is another one: the kernel's locks
      // are per process.
      const hold = takeBackupHold(data);
      try {
        assert.equal(await put(server.url, token, 'x.bin', randomBytes(200_000)), 200);
      } finally {
        hold.release();
      }
      const v2 = blobOf();
      assert.equal(await put(server.url, token, 'x.bin', randomBytes(200_000)), 200);
      // Deletions go on once the hold has ended: the bytes replaced after it go.
      for (let i = 0; i < 100 && await stat(file(v2)).then(() => true, () => false); i++) await sleep(50);
      await assert.rejects(stat(file(v2)), { code: 'ENOENT' });
      // The bytes replaced during the hold are still there, tracked for the sweeper.
      await stat(file(v1));
      const db = new DatabaseSync(join(data, 'catalog.sqlite'), { readOnly: true });
      try {
        assert.ok(db.prepare('SELECT 1 FROM blobs WHERE blob = ?').get(v1), 'the kept bytes stay tracked');
      } finally {
        db.close();
      }
    } finally {
      await stopProcess(server.proc);
    }
  });

  it('answers operator mistakes with one line', async () => {
    const data = await temp('lading-backup-errors-');
    assert.equal((await runLading(['init', '--data', data])).code, 0);
    const missing = join(data, 'nothing-here');
    assert.equal(oneLineError(await runLading(['backup', '--data', missing, join(data, '..', 'b1')]), 2, /'.*nothing-here' does not exist/), null);

    const full = await temp('lading-backup-full-');
    await writeFile(join(full, 'keep.txt'), 'mine');
    assert.equal(oneLineError(await runLading(['backup', '--data', data, full]), 1, /backup: '.*' is not empty; name a new or empty directory/), null);
    assert.equal(oneLineError(await runLading(['backup', '--data', data, join(data, 'inside')]), 1, /is inside the data directory/), null);

    const copy = join(await temp('lading-backup-ok-'), 'copy');
    assert.equal((await runLading(['backup', '--data', data, copy])).code, 0);
    assert.equal(oneLineError(await runLading(['restore', copy, '--data', full]), 1, /restore: '.*' is not empty; name a new or empty directory/), null);
    assert.deepEqual(await readdir(full), ['keep.txt'], 'a refused restore changes nothing');

    const notBackup = await temp('lading-not-backup-');
    await mkdir(join(notBackup, 'ca'));
    assert.equal(oneLineError(await runLading(['restore', notBackup, '--data', join(notBackup, '..', 'r1')]), 1, /is not a finished lading backup \(no backup\.json\)/), null);
    assert.equal(oneLineError(
      await runLading(['backup', '--data', data, join(full, 'x')], { env: { LADING_CATALOG_DRIVER: 'postgres', LADING_CATALOG_URL: 'postgresql://nobody@127.0.0.1:1/none' } }),
      1, /lading backup covers the SQLite catalog with files on disk; with PostgreSQL or S3 follow "Backup and restore" in docs\/operators\.md/,
    ), null);
  });
});
