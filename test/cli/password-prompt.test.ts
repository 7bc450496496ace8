/**
 * `lading user add` on a real terminal (tmux): the password is asked twice without echo,
 * Backspace works, and the user can log in with what was typed; two different passwords are
 * refused in one line, without a stack, and create nobody.
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

/** A tmux session running `command`, with a way to read its screen and wait for a text on it. */
function terminal(session: string, command: string) {
  const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
  tmux('new-session', '-d', '-s', session, '-x', '100', '-y', '10', command);
  const screen = () => tmux('capture-pane', '-t', session, '-p');
  return {
    tmux, screen,
    async waitFor(text: string) {
      for (let i = 0; i < 200 && !screen().includes(text); i++) await sleep(50);
      assert.ok(screen().includes(text), `expected '${text}' on the terminal:\n${screen()}`);
    },
    close() {
      try { tmux('kill-session', '-t', session); } catch { /* already gone */ }
    },
  };
}

describe('password prompt on a terminal', () => {
  const skip = (t: { skip(message: string): void }): boolean => {
    if (hasTmux()) return false;
    if (process.env.CI) assert.fail('tmux is missing: apt-get install tmux');
    t.skip('tmux is missing: apt-get install tmux');
    return true;
  };

  it('asks twice without echo and stores what was typed', async (t) => {
    if (skip(t)) return;
    const data = await mkdtemp(join(tmpdir(), 'lading-tty-'));
    const session = `lading-tty-${process.pid}`;
    const { tmux, screen, waitFor, close } = terminal(session, `${LADING_BIN} user add tina --data ${data}; sleep 30`);
    try {
      await waitFor('Password for tina:');
      tmux('send-keys', '-t', session, 's3cretX');
      tmux('send-keys', '-t', session, 'BSpace');
      tmux('send-keys', '-t', session, 'Enter');
      await waitFor('Repeat:');
      tmux('send-keys', '-t', session, 's3cret', 'Enter');
      await waitFor('created user tina');
      assert.ok(!screen().includes('s3cret'), 'the password was not echoed');
    } finally {
      close();
    }
    const catalog = createSqliteCatalog({ file: join(data, 'catalog.sqlite') });
    const user = await catalog.getUser('tina');
    await catalog.close();
    assert.ok(user?.passwordHash && (await verifyPassword('s3cret', user.passwordHash)));
    await rm(data, { recursive: true, force: true });
  });

  it('refuses two different passwords in one line, exit code 1, and creates nobody', async (t) => {
    if (skip(t)) return;
    const data = await mkdtemp(join(tmpdir(), 'lading-tty-'));
    const session = `lading-tty-differ-${process.pid}`;
    const { tmux, screen, waitFor, close } = terminal(session, `${LADING_BIN} user add tom --data ${data}; echo "exit=$?"; sleep 30`);
    try {
      await waitFor('Password for tom:');
      tmux('send-keys', '-t', session, 'first-pw', 'Enter');
      await waitFor('Repeat:');
      tmux('send-keys', '-t', session, 'other-pw', 'Enter');
      await waitFor('exit=');
      const shown = screen();
      assert.match(shown, /^Repeat: *\nlading: the two passwords typed differ; nothing was changed\.\nexit=1$/m);
      assert.doesNotMatch(shown, /^\s+at /m);
    } finally {
      close();
    }
    const catalog = createSqliteCatalog({ file: join(data, 'catalog.sqlite') });
    assert.equal(await catalog.getUser('tom'), null);
    await catalog.close();
    await rm(data, { recursive: true, force: true });
  });
});
