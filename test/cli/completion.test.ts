/**
 * `lading completion bash|zsh|fish`, loaded into the real shells and asked as they ask when
 * Tab is pressed: commands, subcommands, the options of the command typed (also after a client
 * option before it), and none that the command lacks. A shell that is not installed is
 * skipped, saying so (CI installs bash, zsh and fish: .ci/apt-packages).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { LADING_BIN } from '../helpers/process.ts';
import { cleanEnv } from './run-lading.ts';

function has(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
}

function script(shell: string): string {
  return execFileSync(LADING_BIN, ['completion', shell], { env: cleanEnv() }).toString();
}

/** What the shell completes for the words typed so far (the last one being completed). */
function complete(shell: 'bash' | 'zsh' | 'fish', words: string[]): string[] {
  const code = script(shell);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  let program: string;
  if (shell === 'bash') {
    program = `${code}\nCOMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _lading; printf '%s\\n' "\${COMPREPLY[@]}"`;
  } else if (shell === 'zsh') {
    // NOTE: as zsh's _bash_complete calls it: sh emulation (arrays from 0), after compinit.
    program = `autoload -U compinit && compinit -u\n${code}\n[[ $_comps[lading] == *_lading* ]] || { echo "not registered: $_comps[lading]"; exit 1; }\nf() { emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _lading; printf '%s\\n' "\${COMPREPLY[@]}"; }\nf`;
  } else {
    program = `${code}\ncomplete -C ${JSON.stringify(words.join(' '))}`;
  }
  const out = execFileSync(shell, ['-c', program], { env: cleanEnv({ HOME: '/tmp' }) }).toString();
  const found = out.split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0]!).sort();
  // NOTE: zsh's compgen (bashcompinit) leaves matching to zsh, which keeps what starts with
  // the word typed; bash's and fish's match themselves.
  return shell === 'zsh' ? found.filter((w) => w.startsWith(words.at(-1)!)) : found;
}

for (const shell of ['bash', 'zsh', 'fish'] as const) {
  describe(`lading completion ${shell}`, { skip: has(shell) ? false : `${shell} is not installed (apt-get install ${shell})` }, () => {
    it('completes commands, subcommands and the options of the command typed', () => {
      assert.deepEqual(complete(shell, ['lading', 'pu']), ['publish', 'put']);
      assert.deepEqual(complete(shell, ['lading', 'me']), ['meta']);
      assert.deepEqual(complete(shell, ['lading', 'tra']), ['trash']);
      assert.deepEqual(complete(shell, ['lading', 'trash', 'r']), ['restore']);
      assert.deepEqual(complete(shell, ['lading', '--json', 'trash', 're']), ['restore']);
      assert.deepEqual(complete(shell, ['lading', 'put', '--re']).filter((o) => o.startsWith('--re')), ['--recursive', '--retries', '--retry-wait']);
      const ls = complete(shell, ['lading', 'ls', '--']);
      assert.ok(ls.includes('--recursive') && ls.includes('--long') && ls.includes('--human-readable'), ls.join(' '));
      assert.ok(!ls.includes('--retries'), 'not the options of another command');
    });
  });
}
