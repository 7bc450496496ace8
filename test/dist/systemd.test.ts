/**
 * The systemd unit in examples/: `systemd-analyze verify` accepts it without a warning, and
 * `systemd-analyze security` rates its exposure low (the hardening a network daemon can have).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

async function systemdAnalyze(): Promise<boolean> {
  try {
    await run('systemd-analyze', ['--version']);
    return true;
  } catch {
    return false;
  }
}

const missing = !(await systemdAnalyze());
if (missing && process.env.CI) throw new Error('systemd-analyze is missing: install Debian\'s systemd package (.ci/apt-packages lists it)');

it('examples/lading.service passes systemd-analyze verify and rates its exposure low', { skip: missing && 'systemd-analyze is not installed (Debian package systemd)' }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lading-unit-'));
  try {
    // NOTE: verify checks that ExecStart's program exists: point it at this checkout's.
    const unit = (await readFile(join(ROOT, 'examples', 'lading.service'), 'utf8')).replace('/usr/local/bin/lading', join(ROOT, 'bin', 'lading'));
    assert.notEqual(unit.indexOf(join(ROOT, 'bin', 'lading')), -1, 'the unit runs /usr/local/bin/lading');
    const file = join(dir, 'lading.service');
    await writeFile(file, unit);
    const verified = await run('systemd-analyze', ['verify', file]);
    // NOTE: verify exits 0 on a mistyped key or value, and says so on stderr.
    assert.equal(verified.stderr.trim(), '', 'no warnings');
    const security = await run('systemd-analyze', ['security', '--offline=yes', file]);
    const level = /Overall exposure level for lading\.service: ([\d.]+)/.exec(security.stdout);
    assert.ok(level, security.stdout.slice(-400));
    assert.ok(Number(level[1]) <= 2.0, `exposure ${level[1]} is at most 2.0`);
    for (const key of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ReadWritePaths=/var/lib/lading', 'PrivateTmp=yes', 'Restart=on-failure', 'LimitNOFILE=', 'User=lading']) {
      assert.ok(unit.includes(key), `the unit sets ${key}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
