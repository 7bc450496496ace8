/**
 * `lading --version` names the commit it was built from: read from the checkout's files
 * (loose refs, packed refs, a worktree's `.git` file) without running git.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkoutCommit, VERSION, versionLine } from '../../src/wiring/version.ts';
import { LADING_BIN } from '../helpers/process.ts';

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, {
  cwd, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
}).toString().trim();

it('reads the commit of a checkout from loose refs, packed refs and a worktree', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lading-version-'));
  try {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    await writeFile(join(repo, 'a'), 'a');
    git(repo, 'add', 'a');
    git(repo, 'commit', '-q', '-m', 'first');
    const head = git(repo, 'rev-parse', 'HEAD');
    assert.equal(checkoutCommit(repo), head, 'loose ref');
    git(repo, 'pack-refs', '--all');
    assert.equal(checkoutCommit(repo), head, 'packed ref');
    git(repo, 'worktree', 'add', '-q', '-b', 'other', join(dir, 'wt'));
    await writeFile(join(dir, 'wt', 'b'), 'b');
    git(join(dir, 'wt'), 'add', 'b');
    git(join(dir, 'wt'), 'commit', '-q', '-m', 'second');
    assert.equal(checkoutCommit(join(dir, 'wt')), git(join(dir, 'wt'), 'rev-parse', 'HEAD'), 'worktree');
    git(repo, 'checkout', '-q', '--detach');
    assert.equal(checkoutCommit(repo), head, 'detached HEAD');
    assert.equal(checkoutCommit(join(dir, 'nothing')), null);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('`lading --version` prints the version and the commit of this checkout', () => {
  const out = execFileSync(LADING_BIN, ['--version']).toString().trim();
  assert.equal(out, versionLine());
  const commit = checkoutCommit(join(import.meta.dirname, '..', '..'));
  assert.equal(out, commit ? `${VERSION} (commit ${commit.slice(0, 12)})` : VERSION);
});
