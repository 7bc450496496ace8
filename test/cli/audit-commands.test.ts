/**
 * The audit commands, run as an operator runs them (`bin/lading`) on a data directory: admin
 * commands leave records through the `admin` door, `lading audit` lists them (a table, or JSON
 * lines, filtered), `lading audit export` writes JSON lines, and `lading audit verify` says the
 * chain is intact — until a record is edited in the catalog, when it exits 1 naming that record.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { runLading } from './run-lading.ts';

let data: string;

const lading = (args: string[], input = '') => runLading([...args, '--data', data], { input });

describe('lading audit', () => {
  before(async () => {
    data = await mkdtemp(join(tmpdir(), 'lading-audit-cli-'));
    assert.equal((await lading(['user', 'add', 'ann'], 'secret-pw-ann\n')).code, 0);
    assert.equal((await lading(['group', 'add', 'team'])).code, 0);
    assert.equal((await lading(['group', 'member', 'team', 'ann'])).code, 0);
    assert.equal((await lading(['acl', 'set', '/lading/home/ann', 'team', 'read'])).code, 0);
    assert.notEqual((await lading(['acl', 'set', '/lading/home/nobody', 'team', 'read'])).code, 0);
  });
  after(() => rm(data, { recursive: true, force: true }));

  it('records every admin command that changes something, through the admin door, with its outcome and never the password', async () => {
    const res = await lading(['audit', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const records = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; user: string; door: string; action: string; path: string | null; detail: Record<string, unknown>; outcome: string });
    assert.deepEqual(records.map((r) => [r.detail.command, r.outcome]), [['user.add', 'ok'], ['group.add', 'ok'], ['group.member', 'ok'], ['acl.set', 'ok'], ['acl.set', 'failed']]);
    assert.ok(records.every((r) => r.door === 'admin' && r.action === 'admin' && r.user === 'operator'));
    assert.deepEqual(records[0]!.detail, { command: 'user.add', name: 'ann', admin: false, password: true });
    assert.doesNotMatch(res.stdout, /secret-pw-ann/);
    const table = await lading(['audit', '--path', '/lading/home/nobody']);
    assert.equal(table.code, 0);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^seq\tat\tuser\taddress\tdoor\taction\toutcome\tpath\tdetail$/);
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /\toperator\t-\tadmin\tadmin\tfailed\t\/lading\/home\/nobody\t/);
    const exported = await lading(['audit', 'export']);
    assert.equal(exported.stdout, res.stdout, 'export writes the same JSON lines');
  });

  it('verifies the chain, and names the first record an edit broke', async () => {
    const intact = await lading(['audit', 'verify']);
    assert.deepEqual([intact.code, intact.stdout, intact.stderr], [0, '5 records, chain intact\n', '']);
    const db = new DatabaseSync(join(data, 'catalog.sqlite'));
    try {
      db.prepare("UPDATE audit_records SET detail = '{\"command\":\"group.add\",\"name\":\"admins\"}' WHERE seq = 2").run();
    } finally {
      db.close();
    }
    const broken = await lading(['audit', 'verify']);
    assert.equal(broken.code, 1);
    assert.equal(broken.stdout, '');
    assert.match(broken.stderr, /^lading: the audit trail is broken at record 2: its content does not match its hash \(1 record before it verified\)\n$/);
  });
});

describe('lading audit: the commands of other services an operator runs', () => {
  let dir: string;
  const run = (args: string[], input = '') => runLading([...args, '--data', dir], { input });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lading-audit-ops-'));
    assert.equal((await run(['user', 'add', 'bo'], 'secret-pw-bo\n')).code, 0);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('records quota set and clear, a repairing fsck and a CA rotation, and not a checking fsck', async () => {
    for (const args of [['quota', 'set', 'bo', '--bytes', '1GiB'], ['quota', 'set', '/lading/home/bo', '--objects', '10'], ['quota', 'clear', 'bo'],
      ['fsck'], ['fsck', '--repair'], ['ca', 'rotate']]) {
      const res = await run(args);
      assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    }
    assert.notEqual((await run(['quota', 'set', 'nobody', '--bytes', '1'])).code, 0);
    const res = await run(['audit', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const records = res.stdout.trim().split('\n').map((l) => JSON.parse(l) as { path: string | null; detail: Record<string, unknown>; outcome: string });
    assert.deepEqual(records.slice(1).map((r) => [r.detail.command, r.path, r.outcome]), [
      ['quota.set', null, 'ok'], ['quota.set', '/lading/home/bo', 'ok'], ['quota.clear', null, 'ok'],
      ['fsck.repair', null, 'ok'], ['ca.rotate', null, 'ok'], ['quota.set', null, 'failed'],
    ]);
    assert.deepEqual(records[1]!.detail, { command: 'quota.set', target: 'bo', max_bytes: 1024 ** 3 });
    assert.deepEqual(records[2]!.detail, { command: 'quota.set', target: '/lading/home/bo', max_objects: 10 });
    assert.equal(records[6]!.detail.error, 'NOT_FOUND');
  });
});
