/**
 * What an operator gets wrong, run as the operator runs it (`bin/lading`): each mistake is one
 * line on standard error naming what to fix, never a stack trace, with exit code 2 for a
 * configuration mistake and 1 otherwise; a mistyped `--data` creates nothing; unknown
 * `LADING_…` variables are named with the key most likely meant.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { oneLineError, runLading } from './run-lading.ts';

let dir = '';
let data = '';

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lading-operr-'));
  data = join(dir, 'data');
  const init = await runLading(['init', '--data', data]);
  assert.equal(init.code, 0, init.stderr);
  assert.equal(init.stdout, `data directory ${data} is ready\n`);
});
after(() => rm(dir, { recursive: true, force: true }));

describe('a data directory that does not exist', () => {
  it('is refused by every command but serve and init, and is not created', async () => {
    const missing = join(dir, 'doesnotexist');
    for (const args of [['user', 'list'], ['user', 'add', 'ann'], ['group', 'add', 'team'], ['acl', 'list', '/lading'], ['proxy', 'show', 'ann'], ['ca', 'export', join(dir, 'certs')], ['jobs']]) {
      const res = await runLading([...args, '--data', missing], { input: 'pw\n' });
      assert.equal(oneLineError(res, 2, /data: '.*doesnotexist' does not exist; .*lading init/), null, args.join(' '));
    }
    await assert.rejects(stat(missing), { code: 'ENOENT' });
  });

  it('is created by init, after which the admin commands work', async () => {
    const fresh = join(dir, 'fresh');
    assert.equal((await runLading(['init', '--data', fresh])).code, 0);
    assert.ok((await readdir(fresh)).includes('catalog.sqlite'));
    const list = await runLading(['user', 'list', '--data', fresh]);
    assert.deepEqual([list.code, list.stderr], [0, '']);
  });
});

describe('operator errors are one line, never a stack', () => {
  let busy: Server;
  before(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  after(() => new Promise((resolve) => busy.close(resolve)));

  it('says the port is in use (exit 1)', async () => {
    const { port } = busy.address() as { port: number };
    const res = await runLading(['serve', '--data', data, '--listen', `127.0.0.1:${port}`]);
    assert.equal(oneLineError(res, 1, new RegExp(`listen: 127\\.0\\.0\\.1:${port} is already in use by another process`)), null);
  });

  it('says --data names a file (exit 2)', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory\n');
    for (const args of [['serve'], ['user', 'list'], ['serve', '--check']]) {
      const res = await runLading([...args, '--data', file]);
      assert.equal(oneLineError(res, 2, /data: '.*a-file' is not a directory/), null, args.join(' '));
    }
  });

  it('says the data directory cannot be written, naming it (exit 2)', async () => {
    const parent = join(dir, 'ro-parent');
    const readOnly = join(parent, 'ro');
    await mkdir(readOnly, { recursive: true });
    await chmod(dir, 0o755);
    await chmod(parent, 0o755);
    await chmod(readOnly, 0o555);
    // NOTE: root writes anywhere, so as root the command runs as nobody.
    const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    for (const args of [['serve'], ['user', 'list']]) {
      const res = await runLading([...args, '--data', readOnly], as);
      assert.equal(oneLineError(res, 2, /data: cannot write in '.*ro-parent\/ro' \(EACCES\)/), null, args.join(' '));
    }
  });

  it('says the --config file cannot be read (exit 2)', async () => {
    const res = await runLading(['user', 'list', '--config', join(dir, 'missing.json')]);
    assert.equal(oneLineError(res, 2, /--config: cannot read '.*missing\.json' \(ENOENT\)/), null);
  });

  it('says an operator\'s CA file cannot be read, or lacks its other half (exit 2)', async () => {
    const res = await runLading(['ca', 'export', join(dir, 'anchors'), '--data', data], { env: { LADING_CA_CERT: join(dir, 'no-ca.pem'), LADING_CA_KEY: join(dir, 'no-ca.key') } });
    assert.equal(oneLineError(res, 2, /ca\.cert: cannot read '.*no-ca\.pem' \(ENOENT\)/), null);
    const half = await runLading(['ca', 'export', join(dir, 'anchors'), '--data', data], { env: { LADING_CA_CERT: join(dir, 'no-ca.pem') } });
    assert.equal(oneLineError(half, 2, /ca\.key: must be set together with ca\.cert/), null);
  });

  it('names the valid log levels (exit 2)', async () => {
    for (const args of [['serve'], ['user', 'list']]) {
      const res = await runLading([...args, '--data', data], { env: { LADING_LOG_LEVEL: 'verbose' } });
      assert.equal(oneLineError(res, 2, /LADING_LOG_LEVEL: log\.level: expected fatal, error, warn, info, debug, trace or silent, got 'verbose'/), null);
    }
  });

  it('refuses a missing or empty password on standard input, creating no user (exit 1)', async () => {
    const none = await runLading(['user', 'add', 'ann', '--data', data], { input: '' });
    assert.equal(oneLineError(none, 1, /no password on standard input/), null);
    const empty = await runLading(['user', 'add', 'ann', '--data', data], { input: '\nsecond line\n' });
    assert.equal(oneLineError(empty, 1, /the password on standard input \(its first line\) is empty/), null);
    const passwd = await runLading(['user', 'passwd', 'ann', '--data', data], { input: '' });
    assert.equal(oneLineError(passwd, 1, /no password on standard input/), null);
    assert.equal((await runLading(['user', 'list', '--data', data])).stdout, '');
  });

  it('says the port is out of range rather than the address malformed (exit 2)', async () => {
    const res = await runLading(['serve', '--data', data], { env: { LADING_LISTEN: '127.0.0.1:99999' } });
    assert.equal(oneLineError(res, 2, /listen: port 99999 is out of range \(0 to 65535\) in '127\.0\.0\.1:99999'/), null);
  });

  it('says a user does not exist rather than that it has no session (exit 1)', async () => {
    const res = await runLading(['proxy', 'show', 'nobody', '--data', data]);
    assert.equal(oneLineError(res, 1, /no user 'nobody'/), null);
  });
});

describe('unknown LADING_ variables', () => {
  it('are named on standard error with the key most likely meant, and the command goes on', async () => {
    const res = await runLading(['user', 'list', '--data', data], { env: { LADING_PORT: '9000', LADING_LOGLEVEL: 'debug' } });
    assert.equal(res.code, 0);
    assert.equal(res.stderr, [
      'lading: warning: LADING_LOGLEVEL is not a configuration variable and is ignored; did you mean LADING_LOG_LEVEL (log.level)?',
      'lading: warning: LADING_PORT is not a configuration variable and is ignored; did you mean LADING_LISTEN (listen)?',
      '',
    ].join('\n'));
  });
});

describe('serve --check', () => {
  it('prints the resolved listen address and data directory', async () => {
    const res = await runLading(['serve', '--check', '--data', data], { env: { LADING_LISTEN: '0.0.0.0:9123', LADING_ZONE: 'lading' } });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^ok {2}configuration: listen 0\.0\.0\.0:9123, zone \/lading$/m);
    assert.match(res.stdout, new RegExp(`^ok {2}data directory ${data}$`, 'm'));
  });

  it('creates no data directory and says serve will', async () => {
    const missing = join(dir, 'not-yet');
    const res = await runLading(['serve', '--check', '--data', missing]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /data directory .*not-yet: does not exist yet; lading serve creates it/);
    assert.match(res.stdout, /configuration ok\n$/);
    await assert.rejects(stat(missing), { code: 'ENOENT' });
  });
});
