/**
 * The client commands as a user runs them: the real `bin/lading` as a subprocess against a
 * real `lading serve` (with the example PID rules). Logging in with a password from standard
 * input writes the configuration with mode 0600; ls, stat, mkdir -p, mv, cp, rm, trash, pid, share,
 * token and proxy work, and so does the admin's takedown, and answer failures with the API's message as one line and the documented exit
 * code; LADING_URL/LADING_TOKEN work without a configuration; after logout the server refuses
 * the token; --help lists client and administration commands under their own headings.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { SINGLE_FILE_CLIENT, lading, spawnServe, stopProcess } from '../helpers/process.ts';
import { cleanEnv, oneLineError, runClient, runLading } from '../cli/run-lading.ts';

const RULES = join(import.meta.dirname, '..', '..', 'examples', 'rules.txt');

let dir: string;
let server: { proc: ChildProcess; url: string };
/** The environment of a user with their own configuration directory. */
let env: Record<string, string>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lading-client-'));
  const data = join(dir, 'data');
  const serverEnv = cleanEnv({ LADING_PID_RULES: RULES });
  lading(['init', '--data', data], serverEnv);
  lading(['user', 'add', 'alice', '--data', data], serverEnv, 'alice password\n');
  server = await spawnServe(data, serverEnv);
  env = { XDG_CONFIG_HOME: join(dir, 'config') };
});

after(async () => {
  if (server) await stopProcess(server.proc);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const configFile = () => join(env.XDG_CONFIG_HOME!, 'lading', 'config.json');
const readConfig = async () => JSON.parse(await readFile(configFile(), 'utf8')) as { default: string; servers: Record<string, { url: string; token: string; user: string; home: string }> };

describe('lading client commands', () => {
  it(SINGLE_FILE_CLIENT ? '--help of the single-file client lists the client commands only' : '--help lists the client commands and the administration ones under their own headings', async () => {
    const res = await runClient(['--help']);
    assert.equal(res.code, 0);
    const client = res.stdout.indexOf('Client commands');
    const admin = res.stdout.indexOf('Server administration');
    if (SINGLE_FILE_CLIENT) {
      assert.ok(client >= 0 && admin < 0, res.stdout);
      for (const name of ['login', 'logout', 'ls', 'stat', 'mkdir', 'mv', 'cp', 'rm', 'trash', 'pid', 'share', 'token', 'proxy', 'acl']) {
        assert.ok(res.stdout.search(new RegExp(`^  ${name} `, 'm')) > client, `${name} is a client command`);
      }
      for (const name of ['serve', 'init', 'user', 'group', 'takedown', 'ca', 'jobs']) {
        assert.equal(res.stdout.search(new RegExp(`^  ${name} `, 'm')), -1, `${name} is not in the single-file client`);
      }
      return;
    }
    assert.ok(client >= 0 && admin > client, res.stdout);
    for (const name of ['login', 'logout', 'ls', 'stat', 'mkdir', 'mv', 'cp', 'rm', 'trash', 'pid', 'share', 'token', 'proxy']) {
      const at = res.stdout.search(new RegExp(`^  ${name} `, 'm'));
      assert.ok(at > client && at < admin, `${name} is a client command`);
    }
    for (const name of ['serve', 'init', 'user', 'group', 'acl', 'takedown', 'ca', 'jobs']) {
      assert.ok(res.stdout.search(new RegExp(`^  ${name} `, 'm')) > admin, `${name} is an administration command`);
    }
  });

  it('without a login, commands exit 3 saying to log in', async () => {
    const res = await runClient(['ls'], { env });
    assert.equal(oneLineError(res, 3, /not logged in: run 'lading login <URL>'/), null);
  });

  it('a wrong password exits 3 with the server\'s message and stores nothing', async () => {
    const res = await runClient(['login', server.url, '--user', 'alice', '--password-stdin'], { env, input: 'wrong\n' });
    assert.equal(oneLineError(res, 3, /lading: .*(password|user name)/i), null);
    await assert.rejects(stat(configFile()), { code: 'ENOENT' });
  });

  it('logs in with the password from standard input; the configuration is private (0600 in a 0700 directory)', async () => {
    const res = await runClient(['login', server.url, '--user', 'alice', '--password-stdin', '--name', 'local'], { env, input: 'alice password\n' });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /logged in to http:\/\/127\.0\.0\.1:\d+ as alice \(saved as 'local', the default/);
    assert.equal((await stat(configFile())).mode & 0o777, 0o600);
    assert.equal((await stat(join(env.XDG_CONFIG_HOME!, 'lading'))).mode & 0o777, 0o700);
    const config = await readConfig();
    assert.equal(config.default, 'local');
    assert.equal(config.servers.local!.user, 'alice');
    assert.equal(config.servers.local!.home, '/lading/home/alice');
    assert.ok(!res.stdout.includes(config.servers.local!.token) && !res.stderr.includes(config.servers.local!.token), 'the token is not printed');
  });

  it('mkdir -p, ls, ls -l, ls --json and stat show what is stored: size, date, checksum, PID', async () => {
    const mk = await runClient(['mkdir', '-p', 'run1/raw'], { env });
    assert.equal(mk.code, 0, mk.stderr);
    assert.equal(mk.stdout, 'created /lading/home/alice/run1/raw\n');
    const again = await runClient(['mkdir', '-p', '/lading/home/alice/run1/raw', '-q'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '');

    const { token } = (await readConfig()).servers.local!;
    const put = await fetch(`${server.url}/api/registered/lading/home/alice/run1/reads.txt?pid_await=true`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: 'hello world',
    });
    assert.equal(put.status, 200);
    const uploaded = (await put.json()) as { Response: { data: { PID: string; checksum: string } } };

    const short = await runClient(['ls', 'run1'], { env });
    assert.equal(short.code, 0, short.stderr);
    assert.equal(short.stdout, 'raw/\nreads.txt\n');

    const long = await runClient(['ls', '-l', 'run1'], { env });
    assert.equal(long.code, 0, long.stderr);
    const lines = long.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^d\s+-\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+raw\/\s+-\s+-$/);
    const fields = lines[1]!.split(/\s+/);
    assert.deepEqual([fields[0], fields[1], fields[4], fields[5], fields[6]], ['-', '11', 'reads.txt', uploaded.Response.data.checksum, uploaded.Response.data.PID]);

    const json = await runClient(['ls', '--json', '/lading/home/alice/run1/reads.txt'], { env });
    assert.equal(json.code, 0, json.stderr);
    const record = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(record.path, '/lading/home/alice/run1/reads.txt');
    assert.equal(record.type, 'dataobject');
    assert.equal(record.size, 11);
    assert.equal(record.checksum, uploaded.Response.data.checksum);
    assert.equal(record.pid, uploaded.Response.data.PID);
    assert.ok(Date.now() - Date.parse(String(record.modified)) < 3600_000);

    const st = await runClient(['stat', 'run1/raw'], { env });
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stdout, /^path {5}: \/lading\/home\/alice\/run1\/raw$/m);
    assert.match(st.stdout, /^type {5}: collection$/m);
  });

  it('pid prints the PID; mv renames, and the PID stays with the object', async () => {
    const pid = await runClient(['pid', 'run1/reads.txt'], { env });
    assert.equal(pid.code, 0, pid.stderr);
    assert.match(pid.stdout, /^21\.T99999\/\S+\n$/);
    const mv = await runClient(['mv', 'run1/reads.txt', 'greeting.txt'], { env });
    assert.equal(mv.code, 0, mv.stderr);
    assert.equal(mv.stdout, 'renamed /lading/home/alice/run1/reads.txt to /lading/home/alice/run1/greeting.txt\n');
    const after = await runClient(['pid', '--json', 'run1/greeting.txt'], { env });
    assert.equal(after.code, 0, after.stderr);
    assert.equal((JSON.parse(after.stdout) as { pid: string }).pid, pid.stdout.trim());
    const none = await runClient(['pid', 'run1/raw'], { env });
    assert.equal(oneLineError(none, 4, /has no PID/), null);
  });

  it('failures: a missing path exits 4 with the API\'s message, an existing one 5, a bad option 2', async () => {
    assert.equal(oneLineError(await runClient(['ls', 'no-such'], { env }), 4, /^lading: '\/lading\/home\/alice\/no-such' does not exist\.\n$/), null);
    assert.equal(oneLineError(await runClient(['mv', 'no-such', 'x'], { env }), 4, /does not exist/), null);
    assert.equal(oneLineError(await runClient(['mkdir', 'run1'], { env }), 5, /exists/), null);
    assert.equal(oneLineError(await runClient(['mv', 'run1/raw', '/elsewhere/raw'], { env }), 3, /write access to '\/elsewhere'/), null);
    assert.equal(oneLineError(await runClient(['ls', '--bogus'], { env }), 2, /unknown option/), null);
    assert.equal(oneLineError(await runClient(['ls', '/lading/home'], { env }), 3, /access/), null);
  });

  it('mv moves into a collection (a path ending in / or an existing one), cp copies (-r a collection), -f replaces', async () => {
    const { token } = (await readConfig()).servers.local!;
    const put = (rest: string, body: string) => fetch(`${server.url}/api/registered/lading/home/alice/${rest}`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body,
    });
    const ls = async (path: string) => (await runClient(['ls', path], { env })).stdout;
    assert.equal((await runClient(['mkdir', '-p', 'campaign/sub'], { env })).code, 0);
    assert.equal((await runClient(['mkdir', 'archive'], { env })).code, 0);
    assert.equal((await put('a.csv', 'x,y\n')).status, 200);
    const into = await runClient(['mv', 'a.csv', 'campaign/'], { env });
    assert.equal(into.code, 0, into.stderr);
    assert.equal(into.stdout, 'moved /lading/home/alice/a.csv to /lading/home/alice/campaign/a.csv\n');
    const existing = await runClient(['mv', 'campaign/a.csv', 'campaign/sub'], { env });
    assert.equal(existing.stdout, 'moved /lading/home/alice/campaign/a.csv to /lading/home/alice/campaign/sub/a.csv\n');
    const named = await runClient(['mv', '--json', 'campaign/sub/a.csv', '/lading/home/alice/campaign/b.csv'], { env });
    assert.deepEqual(JSON.parse(named.stdout), { from: '/lading/home/alice/campaign/sub/a.csv', to: '/lading/home/alice/campaign/b.csv' });
    assert.equal(await ls('campaign'), 'b.csv\nsub/\n');

    const cp = await runClient(['cp', 'campaign/b.csv', 'campaign/c.csv'], { env });
    assert.equal(cp.code, 0, cp.stderr);
    assert.equal(cp.stdout, 'copied /lading/home/alice/campaign/b.csv to /lading/home/alice/campaign/c.csv\n');
    assert.equal(oneLineError(await runClient(['cp', 'campaign', 'archive/'], { env }), 2, /is a collection: copy it with -r/), null);
    const tree = await runClient(['cp', '-r', 'campaign', 'archive/'], { env });
    assert.equal(tree.code, 0, tree.stderr);
    assert.equal(tree.stdout, 'copied /lading/home/alice/campaign to /lading/home/alice/archive/campaign\n');
    assert.equal(await ls('archive/campaign'), 'b.csv\nc.csv\nsub/\n');

    // Nothing is replaced unless asked.
    assert.equal((await put('campaign/c.csv?force=true', 'other\n')).status, 200);
    assert.equal(oneLineError(await runClient(['cp', 'campaign/c.csv', 'archive/campaign/'], { env }), 5, /already exists/), null);
    assert.equal(oneLineError(await runClient(['mv', 'campaign/c.csv', 'archive/campaign/b.csv'], { env }), 5, /already exists/), null);
    assert.equal((await runClient(['mv', '-f', 'campaign/c.csv', 'archive/campaign/b.csv'], { env })).code, 0);
    const moved = await fetch(`${server.url}/api/registered/lading/home/alice/archive/campaign/b.csv?download=true`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(await moved.text(), 'other\n');
    assert.equal(await ls('campaign'), 'b.csv\nsub/\n');
  });

  it('rm moves to the trash (-r for a collection), trash ls lists it, trash restore brings it back (--as when taken), trash empty purges', async () => {
    const { token } = (await readConfig()).servers.local!;
    const put = (rest: string, body: string) => fetch(`${server.url}/api/registered/lading/home/alice/${rest}`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body,
    });
    const ls = async (path: string) => (await runClient(['ls', path], { env })).stdout;
    assert.equal((await runClient(['mkdir', '-p', 'bin-test/old'], { env })).code, 0);
    assert.equal((await put('bin-test/draft.txt', 'draft\n')).status, 200);
    assert.equal((await put('bin-test/old/notes.txt', 'notes\n')).status, 200);

    const removed = await runClient(['rm', 'bin-test/draft.txt', '--reason', 'superseded'], { env });
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /^trashed \/lading\/home\/alice\/bin-test\/draft\.txt \(id [0-9a-f-]{36}; lading trash restore [0-9a-f-]{36}\)\n$/);
    assert.equal(oneLineError(await runClient(['rm', 'bin-test/old'], { env }), 2, /is a collection: trash it with -r/), null);
    assert.equal((await runClient(['rm', '-r', 'bin-test/old'], { env })).code, 0);
    assert.equal(await ls('bin-test'), '');
    assert.equal(oneLineError(await runClient(['rm', 'bin-test/draft.txt'], { env }), 4, /lading: /), null);

    const listed = await runClient(['trash', 'ls'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, listed.stdout);
    assert.match(lines[0]!, /^[0-9a-f-]{36}\tcollection\t\d{4}-\d\d-\d\d \d\d:\d\d\t\d{4}-\d\d-\d\d \d\d:\d\d\t\/lading\/home\/alice\/bin-test\/old$/);
    assert.match(lines[1]!, /\tobject\t.*\t\/lading\/home\/alice\/bin-test\/draft\.txt$/);

    // Restored by its old path; by id under another name when the path is taken.
    assert.equal((await runClient(['trash', 'restore', 'bin-test/old'], { env })).stdout, 'restored /lading/home/alice/bin-test/old\n');
    assert.equal(await ls('bin-test/old'), 'notes.txt\n');
    assert.equal((await put('bin-test/draft.txt', 'new\n')).status, 200);
    const draftId = lines[1]!.split('\t')[0]!;
    assert.equal(oneLineError(await runClient(['trash', 'restore', draftId], { env }), 5, /taken; restore it under another name/), null);
    const renamed = await runClient(['trash', 'restore', draftId, '--as', 'draft-1.txt', '--json'], { env });
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.equal(JSON.parse(renamed.stdout).path, '/lading/home/alice/bin-test/draft-1.txt');
    assert.equal(await ls('bin-test'), 'draft-1.txt\ndraft.txt\nold/\n');

    // A name in the home, with no '/', is a path too, as for rm.
    assert.equal((await put('loose.txt', 'x\n')).status, 200);
    assert.equal((await runClient(['rm', 'loose.txt'], { env })).code, 0);
    assert.equal((await runClient(['trash', 'restore', 'loose.txt'], { env })).stdout, 'restored /lading/home/alice/loose.txt\n');

    assert.equal((await runClient(['rm', 'bin-test/draft.txt'], { env })).code, 0);
    assert.equal((await runClient(['trash', 'empty'], { env })).stdout, 'purged 1 entry\n');
    assert.equal((await runClient(['trash', 'ls'], { env })).stdout, '');
  });

  it('takedown (administration) removes an object\'s bytes at once and records who and why', async () => {
    const { token } = (await readConfig()).servers.local!;
    const url = `${server.url}/api/registered/lading/home/alice/leak.txt`;
    assert.equal((await fetch(`${url}?pid_await=true`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: 'secret' })).status, 200);
    const res = await runLading(['takedown', '/lading/home/alice/leak.txt', '--reason', 'privacy request', '--by', 'root', '--data', join(dir, 'data')]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^taken down: \/lading\/home\/alice\/leak\.txt \(dataobject, id ([0-9a-f-]{36}), PID [^)]+\) by root: privacy request\n$/);
    // NOTE: run without the server's PID rules, the record cannot become the tombstone: say so.
    assert.match(res.stderr, /^lading: warning: this command ran without PID rules \(pid\.rules\), so the record of \S+ still points at the data: give admin commands the server's configuration/);
    const id = /id ([0-9a-f-]{36})/.exec(res.stdout)![1]!;
    assert.equal((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status, 404);
    const entry = await fetch(`${server.url}/api/trash/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const data = ((await entry.json()) as { Response: { data: { state: string; removed_by: string; removal_reason: string } } }).Response.data;
    assert.deepEqual([data.state, data.removed_by, data.removal_reason], ['taken_down', 'root', 'privacy request']);
    const refused = await runLading(['takedown', '/lading/home/alice/leak.txt', '--reason', 'again', '--data', join(dir, 'data')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /^lading: [^\n]+\n$/);
  });

  it('share create, list and revoke: the link downloads until revoked', async () => {
    const created = await runClient(['share', 'create', 'run1/greeting.txt', '--expires', '7d', '--max-uses', '3', '--json'], { env });
    assert.equal(created.code, 0, created.stderr);
    const link = JSON.parse(created.stdout) as { id: string; url: string; expires_at: string; max_uses: number };
    assert.equal(link.max_uses, 3);
    assert.ok(Math.abs(Date.parse(link.expires_at) - Date.now() - 7 * 86400_000) < 3600_000);
    const got = await fetch(link.url);
    assert.equal(got.status, 200);
    assert.equal(await got.text(), 'hello world');

    const list = await runClient(['share', 'list', 'run1/greeting.txt'], { env });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${link.id}\\tread\\tactive\\t1/3\\t`, 'm'));

    const revoked = await runClient(['share', 'revoke', link.id], { env });
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.notEqual((await fetch(link.url)).status, 200);
    assert.equal(oneLineError(await runClient(['share', 'revoke', '00000000-0000-4000-8000-000000000000'], { env }), 4, /lading: /), null);
    assert.equal(oneLineError(await runClient(['share', 'create', 'run1', '--expires', 'soon'], { env }), 2, /not a duration/), null);
  });

  it('proxy shows the proxy certificate, proxy renew keeps a valid one', async () => {
    const shown = await runClient(['proxy'], { env });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^subject  : .*CN=alice/m);
    assert.match(shown.stdout, /^timeleft : \d+:\d\d:\d\d$/m);
    const json = JSON.parse((await runClient(['proxy', '--json'], { env })).stdout) as { expired: boolean; seconds_left: number; storage_user: string };
    assert.equal(json.expired, false);
    assert.ok(json.seconds_left > 0);
    assert.equal(json.storage_user, 'alice');
    const renew = await runClient(['proxy', 'renew'], { env });
    assert.equal(renew.code, 0, renew.stderr);
    assert.equal(renew.stdout, 'Current proxy is still valid.\n');
  });

  it('token prints the token; LADING_URL and LADING_TOKEN work without any configuration', async () => {
    const res = await runClient(['token'], { env });
    assert.equal(res.code, 0, res.stderr);
    const token = res.stdout.trim();
    assert.equal(token, (await readConfig()).servers.local!.token);
    const batch = { XDG_CONFIG_HOME: join(dir, 'empty-config'), LADING_URL: server.url, LADING_TOKEN: token };
    const ls = await runClient(['ls', 'run1'], { env: batch });
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout, 'greeting.txt\nraw/\n');
    const bad = await runClient(['ls'], { env: { ...batch, LADING_TOKEN: 'not-a-token' } });
    assert.equal(oneLineError(bad, 3, /invalid or has expired/), null);
  });

  it('logout revokes the token on the server and forgets the server', async () => {
    const { token } = (await readConfig()).servers.local!;
    const res = await runClient(['logout'], { env });
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^logged out of http:/);
    assert.deepEqual((await readConfig()).servers, {});
    const check = await fetch(`${server.url}/auth/b2safeproxy`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(check.status, 401);
    assert.equal(oneLineError(await runClient(['ls'], { env }), 3, /not logged in/), null);
  });
});
