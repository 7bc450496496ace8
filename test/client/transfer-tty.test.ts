/**
 * The progress display of `lading put` on a terminal, as a person sees it: the real CLI runs in
 * an 80×24 tmux pane against a real `lading serve` behind a relay that holds one upload still,
 * and `tmux capture-pane` shows a total bar with files, bytes, rate and time left, and a line
 * per active transfer, none wider than 80 columns; at the end a one-line summary. At 40 columns
 * the lines keep their figures (rounded), and Ctrl-C ends with a summary whose rate counts what
 * moved (never negative) and exit code 130.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LADING_BIN } from '../helpers/process.ts';
import { Relay } from '../e2e/tus-support.ts';
import { type Node, startNode } from './transfer-support.ts';

const MIB = 1024 * 1024;
const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
})();

describe('lading put on a terminal (tmux, 80 and 40 columns)', { timeout: 120_000, skip: !hasTmux && !process.env.CI ? 'tmux is not installed (apt-get install tmux)' : false }, () => {
  let node: Node;
  let relay: Relay;
  const socket = `lading-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args]).toString();

  before(async () => {
    node = await startNode();
    relay = new Relay(node.url);
  });
  after(async () => {
    try {
      tmux('kill-server');
    } catch { /* not started */ }
    await relay?.close();
    await node?.stop();
  });

  it('shows a total bar and a line per transfer that fit 80 columns, then a summary', async (t) => {
    const src = join(node.dir, 'src', 'a-directory-with-a-rather-long-name', 'and-another-level-below-it');
    await mkdir(src, { recursive: true });
    for (let i = 0; i < 4; i++) await writeFile(join(src, `measurement-series-${i}-of-a-long-running-experiment.h5`), randomBytes(8 * MIB));
    const url = await relay.listen();
    let release = (): void => {};
    const released = new Promise<void>((r) => { release = r; });
    // One upload stands still once 3 MiB went through, until the pane has been looked at.
    relay.triggers.push({ at: 3 * MIB, action: () => released });
    // The token reaches the CLI through the environment of a script, never its arguments.
    const script = join(node.dir, 'run.sh');
    const env = { ...node.env, LADING_URL: url };
    await writeFile(script, `${Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n')}\nexec '${LADING_BIN}' put -r -j 2 '${join(node.dir, 'src')}' run\n`, { mode: 0o700 });
    tmux('new-session', '-d', '-x', '80', '-y', '24', `sh '${script}'; echo "exit=$?"; sleep 600`);

    let screen = '';
    for (let i = 0; i < 600 && !/^Total .*\n {2}\S.*%/m.test(screen); i++) {
      await sleep(100);
      screen = tmux('capture-pane', '-p');
    }
    t.diagnostic(`the pane during the transfer:\n${screen.trimEnd()}`);
    const lines = screen.split('\n').filter((l) => l.trim() !== '');
    const total = lines.find((l) => l.startsWith('Total '));
    assert.ok(total, `no total bar in:\n${screen}`);
    assert.match(total, /^Total \[[█░]+\] \d+\/4 files {2}[\d.]+ (B|KiB|MiB)\/32\.0 MiB {2}[\d.]+ (B|KiB|MiB)\/s {2}ETA (\d+:\d\d|-:--)$/);
    const files = lines.filter((l) => l.startsWith('  '));
    assert.ok(files.length >= 1 && files.length <= 2, `one line per active transfer (2 at most):\n${screen}`);
    for (const f of files) assert.match(f, /^ {2}…?[\w/-]*-of-a-long-running-experiment\.h5 \[[█░]{12}\] +\d+% +[\d.]+ (B|KiB|MiB)\/8\.00 MiB$/, f);
    for (const l of screen.split('\n')) assert.ok([...l].length <= 80, `wider than 80 columns: ${JSON.stringify(l)}`);
    assert.equal(new Set(files.map((f) => f.indexOf('['))).size, 1, `the bars of the file lines are in one column:\n${screen}`);

    release();
    for (let i = 0; i < 600 && !/exit=\d+/.test(screen); i++) {
      await sleep(100);
      screen = tmux('capture-pane', '-p');
    }
    assert.match(screen, /exit=0/, screen);
    assert.match(screen, /^lading: sent 4 files \(32\.0 MiB\) in [\d.]+ s, [\d.]+ \S+\/s$/m);
    for (const l of screen.split('\n')) assert.ok([...l].length <= 80, `wider than 80 columns: ${JSON.stringify(l)}`);
    tmux('kill-session');
  });

  it('at 40 columns: the figures fit, rounded; after Ctrl-C a summary with a sensible rate, exit 130', async (t) => {
    const src = join(node.dir, 'narrow', 'a-directory-with-a-rather-long-name');
    await mkdir(src, { recursive: true });
    for (let i = 0; i < 4; i++) await writeFile(join(src, `series-${i}-of-a-long-running-experiment.h5`), randomBytes(8 * MIB));
    const held = new Relay(node.url);
    t.after(() => held.close());
    const url = await held.listen();
    // Everything stands still once 3 MiB went through, until Ctrl-C.
    held.triggers.push({ at: 3 * MIB, action: () => new Promise<void>(() => {}) });
    const script = join(node.dir, 'run-narrow.sh');
    const env = { ...node.env, LADING_URL: url };
    await writeFile(script, `${Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n')}\ntrap : INT\n'${LADING_BIN}' put -r -j 2 '${join(node.dir, 'narrow')}' narrow\necho "exit=$?"\nsleep 600\n`, { mode: 0o700 });
    // NOTE: the script's shell outlives Ctrl-C (its trap), so that the pane stays to be read.
    tmux('new-session', '-d', '-x', '40', '-y', '24', `exec sh '${script}'`);

    let screen = '';
    for (let i = 0; i < 600 && !/%/.test(screen); i++) {
      await sleep(100);
      screen = tmux('capture-pane', '-p');
    }
    // Let the rate's window see the stall for a moment, as a person would before Ctrl-C.
    await sleep(1500);
    screen = tmux('capture-pane', '-p');
    t.diagnostic(`the pane during the transfer:\n${screen.trimEnd()}`);
    for (const l of screen.split('\n')) assert.ok([...l].length <= 40, `wider than 40 columns: ${JSON.stringify(l)}`);
    assert.match(screen, /^(Total )?\d+\/4( files)? .*[\d.]+ (B|KiB|MiB)\/s/m, `a total line with a rate:\n${screen}`);
    assert.match(screen, /^ {2}\S.* +\d+% +[\d.]+ (B|KiB|MiB)$/m, `a line per transfer with its share:\n${screen}`);

    tmux('send-keys', 'C-c');
    for (let i = 0; i < 300 && !/exit=\d+/.test(screen); i++) {
      await sleep(100);
      screen = tmux('capture-pane', '-p', '-J');
    }
    t.diagnostic(`the pane after Ctrl-C:\n${screen.trimEnd()}`);
    assert.match(screen, /exit=130/, screen);
    const summary = /^lading: sent (\d+) files? \(([\d.]+) (B|KiB|MiB)\) in ([\d.]+) s, ([\d.]+) (B|KiB|MiB)\/s; 1 cut off(; \d+ not attempted)?$/m.exec(screen);
    assert.ok(summary, `a summary after Ctrl-C:\n${screen}`);
    assert.ok(Number(summary[5]) > 0, 'the rate counts the bytes that moved');
    assert.match(screen, /^lading: interrupted: run the same command again to resume$/m);
    assert.doesNotMatch(screen, /-\d[\d.]* (B|KiB|MiB)/, 'no negative figure');
    assert.doesNotMatch(screen, /\d\.\d{3,}/, 'figures rounded');
    for (const l of tmux('capture-pane', '-p').split('\n')) assert.ok([...l].length <= 40, `wider than 40 columns: ${JSON.stringify(l)}`);
  });
});
