/**
 * The admin commands, run as a user runs them (`bin/lading`): they go through the admin
 * service, so what the backend would refuse — access for an unknown user, a group that is a
 * user, a password for a group, a path that does not exist — is refused with one line on
 * standard error, a non-zero exit, and nothing stored.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLading } from './run-lading.ts';

let data: string;

const lading = (args: string[], input = '') => runLading([...args, '--data', data], { input });

/** Exits non-zero with exactly one line on standard error, matching `message`, and prints nothing else. */
async function refused(args: string[], message: RegExp, input?: string): Promise<void> {
  const res = await lading(args, input);
  assert.notEqual(res.code, 0, `${args.join(' ')} succeeded`);
  assert.equal(res.stdout, '');
  assert.match(res.stderr, /^lading: [^\n]+\n$/, `one line: ${JSON.stringify(res.stderr)}`);
  assert.match(res.stderr, message);
}

describe('admin commands', () => {
  before(async () => {
    data = await mkdtemp(join(tmpdir(), 'lading-admin-cli-'));
    assert.equal((await lading(['user', 'add', 'ann'], 'pw-ann\n')).stdout, 'created user ann, home /lading/home/ann\n');
    assert.equal((await lading(['group', 'add', 'team'])).stdout, 'created group team\n');
  });
  after(() => rm(data, { recursive: true, force: true }));

  it('grants access to users and groups that exist', async () => {
    assert.equal((await lading(['group', 'member', 'team', 'ann'])).stdout, 'ann is a member of team\n');
    assert.equal((await lading(['acl', 'set', '/lading/home/ann', 'team', 'read'])).stdout, 'team: read on /lading/home/ann\n');
  });

  it('refuses access for an unknown user, an unknown level or a missing path, and stores nothing', async () => {
    await refused(['acl', 'set', '/lading/home/ann', 'bob', 'read'], /no user or group 'bob'/);
    await refused(['acl', 'set', '/lading/home/ann', 'team', 'reed'], /level must be one of read, write, own or none/);
    await refused(['acl', 'set', '/lading/home/nobody', 'team', 'read'], /'\/lading\/home\/nobody' does not exist/);
    const list = await lading(['acl', 'list', '/lading/home/ann']);
    assert.equal(list.code, 0);
    assert.doesNotMatch(list.stdout, /bob/);
  });

  it('refuses a user as a group and a password for a group', async () => {
    await refused(['group', 'member', 'ann', 'team'], /'ann' is a user, not a group/);
    await refused(['user', 'passwd', 'team'], /'team' is a group, not a user/, 'pw-team\n');
  });
});
