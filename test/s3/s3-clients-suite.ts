/**
 * The S3 listener as the real clients from Debian use it — aws-cli (`s3 cp/ls/sync`, `s3
 * presign` fetched by curl, `s3api head-object`), s3cmd, rclone's `s3` backend (copy and check
 * of a 1,000-file tree) and boto3 — against whatever lading nodes a test file starts: each
 * client is pointed at an S3 URL of its own (with two nodes, writes go to one and reads to the
 * other). The keys come from the API (`POST /api/s3/keys`).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface S3Target {
  /** The S3 listeners to use, in turn (one or several nodes over one catalog). */
  s3Urls: string[];
  /** An API URL and a bearer header of the user `alice`. */
  apiUrl: string;
  bearer: string;
  /** Whether PIDs are assigned by rules (then head-object shows one). */
  pids: boolean;
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a client program with `env`, resolving with its exit code and outputs. */
export function run(file: string, args: string[], env: Record<string, string> = {}, input?: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.HOME ?? tmpdir(), ...env }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
    child.stdin!.end(input ?? '');
  });
}

function ok(res: Ran, what: string): string {
  assert.equal(res.code, 0, `${what} failed: ${res.stderr}${res.stdout}`);
  return res.stdout;
}

/** Makes an S3 key of the bearer's user through the API. */
export async function makeKey(apiUrl: string, bearer: string, label?: string): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${apiUrl}/api/s3/keys`, {
    method: 'POST', headers: { authorization: bearer, 'content-type': 'application/json' }, body: JSON.stringify(label ? { label } : {}),
  });
  const body = await res.json() as { Response: { data: { access_key_id: string; secret_access_key: string } } };
  assert.equal(res.status, 201, JSON.stringify(body));
  return { id: body.Response.data.access_key_id, secret: body.Response.data.secret_access_key };
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

export function s3ClientsSuite(name: string, target: () => S3Target): void {
  describe(`S3 clients: ${name}`, () => {
    let dir: string;
    let key: { id: string; secret: string };
    let t: S3Target;
    const url = (i: number) => t.s3Urls[i % t.s3Urls.length]!;
    const awsEnv = () => ({
      AWS_ACCESS_KEY_ID: key.id, AWS_SECRET_ACCESS_KEY: key.secret, AWS_DEFAULT_REGION: 'us-east-1',
      AWS_CONFIG_FILE: join(dir, 'aws-config'), AWS_SHARED_CREDENTIALS_FILE: '/dev/null', HOME: dir,
    });
    const aws = (i: number, ...args: string[]) => run('/usr/bin/aws', ['--endpoint-url', url(i), ...args], awsEnv());

    before(async () => {
      t = target();
      dir = await mkdtemp(join(tmpdir(), 'lading-s3-clients-'));
      key = await makeKey(t.apiUrl, t.bearer, 'clients');
      // NOTE: 8 MiB parts, aws-cli's default, so that the 20 MB file below goes in parts.
      await writeFile(join(dir, 'aws-config'), '[default]\ns3 =\n  multipart_threshold = 8MB\n  multipart_chunksize = 8MB\n');
    });
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('aws s3 cp up and down (a 20 MB file goes as a multipart upload), ls and sync, across nodes', async () => {
      const big = randomBytes(20 * 1024 * 1024 + 12345);
      await writeFile(join(dir, 'big.bin'), big);
      ok(await aws(0, 's3', 'cp', '--only-show-errors', join(dir, 'big.bin'), 's3://alice/aws/big.bin'), 'aws s3 cp up');
      ok(await aws(1, 's3', 'cp', '--only-show-errors', 's3://alice/aws/big.bin', join(dir, 'big.back')), 'aws s3 cp down');
      assert.ok(big.equals(await readFile(join(dir, 'big.back'))), 'the bytes came back the same');
      const head = JSON.parse(ok(await aws(1, 's3api', 'head-object', '--bucket', 'alice', '--key', 'aws/big.bin'), 'head-object')) as { ETag: string; ContentLength: number };
      assert.equal(head.ContentLength, big.length);
      assert.match(head.ETag, /^"[0-9a-f]{32}-3"$/, 'a multipart upload of three parts has the md5-of-parts-3 ETag');

      const tree = join(dir, 'tree');
      // NOTE: S3 gives times in whole seconds (as AWS does), and aws s3 sync sends again a file
      // whose time is after the object's: files written in the second of their upload would be
      // sent again by any S3 server. These were written a while ago.
      const past = new Date(Date.now() - 60_000);
      for (let i = 0; i < 12; i++) {
        await mkdir(join(tree, `d${i % 3}`), { recursive: true });
        await writeFile(join(tree, `d${i % 3}`, `f${i}.txt`), `file ${i}\n`);
        await utimes(join(tree, `d${i % 3}`, `f${i}.txt`), past, past);
      }
      ok(await aws(0, 's3', 'sync', '--only-show-errors', tree, 's3://alice/synced'), 'aws s3 sync up');
      const listed = ok(await aws(1, 's3', 'ls', '--recursive', 's3://alice/synced/'), 'aws s3 ls --recursive');
      assert.equal(listed.trim().split('\n').length, 12, listed);
      const top = ok(await aws(1, 's3', 'ls', 's3://alice/synced/'), 'aws s3 ls');
      assert.deepEqual(top.trim().split('\n').map((l) => l.trim()), ['PRE d0/', 'PRE d1/', 'PRE d2/'], 'collections are common prefixes');
      // Nothing changed: a second sync has nothing to send.
      const again = ok(await aws(1, 's3', 'sync', tree, 's3://alice/synced'), 'aws s3 sync again');
      assert.equal(again.trim(), '', 'sizes and dates match, so nothing is sent again');
      const back = join(dir, 'tree-back');
      ok(await aws(1, 's3', 'sync', '--only-show-errors', 's3://alice/synced', back), 'aws s3 sync down');
      assert.equal(await readFile(join(back, 'd1', 'f4.txt'), 'utf8'), 'file 4\n');
    });

    it('aws s3 presign gives a URL curl fetches without a key, until it expires', async () => {
      await writeFile(join(dir, 'p.txt'), 'presigned bytes\n');
      ok(await aws(0, 's3', 'cp', '--only-show-errors', join(dir, 'p.txt'), 's3://alice/p.txt'), 'cp');
      const signed = ok(await aws(1, 's3', 'presign', 's3://alice/p.txt', '--expires-in', '300'), 'presign').trim();
      const got = await run('/usr/bin/curl', ['-sS', '-f', signed]);
      assert.equal(ok(got, 'curl'), 'presigned bytes\n');
      const ranged = await run('/usr/bin/curl', ['-sS', '-f', '-r', '0-8', signed]);
      assert.equal(ok(ranged, 'curl range'), 'presigned');
      const tampered = await run('/usr/bin/curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', signed.replace('p.txt', 'q.txt')]);
      assert.equal(tampered.stdout, '403', 'another key than the one signed is refused');
    });

    it('aws s3api head-object shows the user metadata and the PID', async () => {
      await writeFile(join(dir, 'm.txt'), 'with metadata\n');
      ok(await aws(0, 's3api', 'put-object', '--bucket', 'alice', '--key', 'meta/m.txt', '--body', join(dir, 'm.txt'), '--metadata', 'project=ocean,run=7'), 'put-object');
      let head: { Metadata: Record<string, string>; ETag: string } = { Metadata: {}, ETag: '' };
      for (let i = 0; i < 50; i++) {
        head = JSON.parse(ok(await aws(1, 's3api', 'head-object', '--bucket', 'alice', '--key', 'meta/m.txt'), 'head-object'));
        if (!t.pids || head.Metadata.pid) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(head.Metadata.project, 'ocean');
      assert.equal(head.Metadata.run, '7');
      assert.equal(head.ETag, `"${md5(Buffer.from('with metadata\n'))}"`, 'the ETag is the MD5 of a single-part object');
      if (t.pids) assert.match(head.Metadata.pid ?? '', /^21\.T99999\/[0-9a-f-]{36}$/, 'the PID the rules gave');
      const api = await fetch(`${t.apiUrl}/api/metadata/lading/home/alice/meta/m.txt`, { headers: { authorization: t.bearer } }).catch(() => null);
      if (api && api.status === 200) assert.match(await api.text(), /ocean/, 'the metadata is the object\'s AVUs');
    });

    it('s3cmd put, get and ls', async () => {
      const cfg = join(dir, 's3cfg');
      const host = new URL(url(0)).host;
      await writeFile(cfg, `[default]\naccess_key = ${key.id}\nsecret_key = ${key.secret}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nsignature_v2 = False\nbucket_location = us-east-1\n`, { mode: 0o600 });
      const body = randomBytes(300_000);
      await writeFile(join(dir, 's3cmd.bin'), body);
      ok(await run('/usr/bin/s3cmd', ['-c', cfg, 'put', join(dir, 's3cmd.bin'), 's3://alice/s3cmd/one.bin'], { HOME: dir }), 's3cmd put');
      ok(await run('/usr/bin/s3cmd', ['-c', cfg, 'get', '--force', 's3://alice/s3cmd/one.bin', join(dir, 's3cmd.back')], { HOME: dir }), 's3cmd get');
      assert.ok(body.equals(await readFile(join(dir, 's3cmd.back'))));
      const ls = ok(await run('/usr/bin/s3cmd', ['-c', cfg, 'ls', 's3://alice/s3cmd/'], { HOME: dir }), 's3cmd ls');
      assert.match(ls, /300000\s+s3:\/\/alice\/s3cmd\/one\.bin/);
    });

    it('rclone copies a 1,000-file tree and checks it', async () => {
      const tree = join(dir, 'rtree');
      for (let d = 0; d < 10; d++) {
        await mkdir(join(tree, `dir${d}`), { recursive: true });
        await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(join(tree, `dir${d}`, `file${i}.dat`), randomBytes(100 + i))));
      }
      const env = (i: number) => ({
        HOME: dir, RCLONE_CONFIG: '/dev/null', RCLONE_CONFIG_LAD_TYPE: 's3', RCLONE_CONFIG_LAD_PROVIDER: 'Other',
        RCLONE_CONFIG_LAD_ACCESS_KEY_ID: key.id, RCLONE_CONFIG_LAD_SECRET_ACCESS_KEY: key.secret, RCLONE_CONFIG_LAD_ENDPOINT: url(i),
        RCLONE_CONFIG_LAD_REGION: 'us-east-1',
      });
      ok(await run('/usr/bin/rclone', ['copy', '--transfers', '8', tree, 'lad:alice/rclone'], env(0)), 'rclone copy');
      const check = await run('/usr/bin/rclone', ['check', tree, 'lad:alice/rclone'], env(1));
      ok(check, 'rclone check');
      assert.match(check.stderr, /0 differences found/);
      assert.match(check.stderr, /1000 matching files/);
      const size = JSON.parse(ok(await run('/usr/bin/rclone', ['size', '--json', 'lad:alice/rclone'], env(1)), 'rclone size')) as { count: number };
      assert.equal(size.count, 1000);
    });

    it('boto3: put and get with metadata, ranges, conditionals, paging, copy, delete_objects and refused digests', async () => {
      const script = join(import.meta.dirname, 'boto3-check.py');
      const res = await run('/usr/bin/python3', [script], { S3_URL: url(0), S3_URL_2: url(1), AWS_ACCESS_KEY_ID: key.id, AWS_SECRET_ACCESS_KEY: key.secret, HOME: dir });
      assert.equal(res.code, 0, res.stderr + res.stdout);
      assert.match(res.stdout, /boto3 checks passed/);
    });

    it('a revoked key is refused at the next request on every node', async () => {
      const other = await makeKey(t.apiUrl, t.bearer);
      const env = { ...awsEnv(), AWS_ACCESS_KEY_ID: other.id, AWS_SECRET_ACCESS_KEY: other.secret };
      for (let i = 0; i < t.s3Urls.length; i++) ok(await run('/usr/bin/aws', ['--endpoint-url', url(i), 's3', 'ls'], env), 'ls with the new key');
      const res = await fetch(`${t.apiUrl}/api/s3/keys/${other.id}`, { method: 'DELETE', headers: { authorization: t.bearer } });
      assert.equal(res.status, 200);
      for (let i = 0; i < t.s3Urls.length; i++) {
        const refused = await run('/usr/bin/aws', ['--endpoint-url', url(i), 's3', 'ls'], env);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /InvalidAccessKeyId/);
      }
    });
  });
}
