/**
 * `lading user add` on a real terminal (tmux): the password is asked twice without echo,
 * Backspace works, and the user can log in with what was typed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LADING_BIN } from '../helpers/process.ts';
import { createSqliteCatalog } from '../../src/drivers/catalog/sqlite.ts';
import { verifyPassword } from '../../src/identity/secrets/password.ts';

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

describe('password prompt on a terminal', () => {
  it('asks twice without echo and stores what was typed', async (t) => {
    if (!hasTmux()) {
      if (process.env.CI) assert.fail('tmux is missing: apt-get install tmux');
      return t.skip('tmux is missing: apt-get install tmux');
    }
    const data = await mkdtemp(join(tmpdir(), 'lading-tty-'));
    const session = `lading-tty-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
    const screen = () => tmux('capture-pane', '-t', session, '-p');
    const waitFor = async (text: string) => {
      for (let i = 0; i < 200 && !screen().includes(text); i++) await sleep(50);
      assert.ok(screen().includes(text), `expected '${text}' on the terminal:\n${screen()}`);
    };
    try {
      tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '10', `${LADING_BIN} user add tina --data ${data}; sleep 30`);
      await waitFor('Password for tina:');
      tmux('send-keys', '-t', session, 's3cretX');
      tmux('send-keys', '-t', session, 'BSpace');
      tmux('send-keys', '-t', session, 'Enter');
      await waitFor('Repeat:');
      tmux('send-keys', '-t', session, 's3cret', 'Enter');
      await waitFor('created user tina');
      assert.ok(!screen().includes('s3cret'), 'the password was not echoed');
    } finally {
      try { tmux('kill-session', '-t', session); } catch { /* already gone */ }
    }
    const catalog = createSqliteCatalog({ file: join(data, 'catalog.sqlite') });
    const user = await catalog.getUser('tina');
    await catalog.close();
    assert.ok(user?.passwordHash && (await verifyPassword('s3cret', user.passwordHash)));
    await rm(data, { recursive: true, force: true });
  });
});
