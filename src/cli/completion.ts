/**
 * `lading completion bash|zsh|fish`: a shell completion script for the commands, subcommands
 * and options `lading` has, written from the command tree itself (so it never lists a command
 * that is not there), completing file names where a command takes arguments. zsh runs the bash
 * script through its `bashcompinit`; fish gets `complete` lines of its own.
 */
import type { Command } from 'commander';

interface Node {
  /** Subcommand words from the top, '' for `lading` itself. */
  path: string;
  subs: string[];
  options: { long?: string; short?: string; description: string }[];
}

/** Every command of the tree, with its visible subcommands and options. */
function nodesOf(cli: Command): Node[] {
  const out: Node[] = [];
  const visit = (cmd: Command, path: string): void => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => c.name());
    const options = cmd.options.filter((o) => !o.hidden).map((o) => ({
      ...(o.long ? { long: o.long } : {}), ...(o.short ? { short: o.short } : {}), description: o.description,
    }));
    options.push({ long: '--help', description: 'display help' });
    out.push({ path, subs, options });
    for (const c of cmd.commands) visit(c, path ? `${path} ${c.name()}` : c.name());
  };
  visit(cli, '');
  return out;
}

/** A case arm's pattern for a command path, quoted for bash. */
const arm = (path: string): string => `"${path}"`;

function bash(nodes: Node[]): string {
  const subs = nodes.filter((n) => n.subs.length > 0).map((n) => `    ${arm(n.path)}) echo "${n.subs.join(' ')}" ;;`).join('\n');
  const opts = nodes.map((n) => `    ${arm(n.path)}) echo "${n.options.flatMap((o) => [o.long, o.short].filter(Boolean)).join(' ')}" ;;`).join('\n');
  return `# bash completion for lading (lading completion bash); also zsh, through bashcompinit.
_lading_subs() {
  case "$1" in
${subs}
  esac
}
_lading_opts() {
  case "$1" in
${opts}
  esac
}
_lading() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i subs
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    subs=" $(_lading_subs "$path") "
    [[ $subs == *" $w "* ]] && path="\${path:+$path }$w"
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_lading_opts "$path")" -- "$cur"))
    return
  fi
  subs="$(_lading_subs "$path")"
  if [[ -n $subs ]]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _lading lading
`;
}

function zsh(nodes: Node[]): string {
  return `#compdef lading
# zsh completion for lading (lading completion zsh): the bash completion, through bashcompinit.
autoload -U +X bashcompinit && bashcompinit
${bash(nodes)}`;
}

/** A string quoted for fish. */
const fishQuote = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fish(nodes: Node[]): string {
  const lines = ['# fish completion for lading (lading completion fish)', 'complete -c lading -f'];
  for (const n of nodes) {
    const words = n.path ? n.path.split(' ') : [];
    // The condition: exactly this command path has been typed (its words, and none of its subcommands yet).
    const seen = words.map((w) => `__fish_seen_subcommand_from ${w}`);
    const top = nodes.find((m) => m.path === '')!.subs;
    const condition = words.length === 0 ? `not __fish_seen_subcommand_from ${top.join(' ')}`
      : [...seen, ...(n.subs.length ? [`not __fish_seen_subcommand_from ${n.subs.join(' ')}`] : [])].join('; and ');
    if (n.subs.length) lines.push(`complete -c lading -n ${fishQuote(condition)} -a ${fishQuote(n.subs.join(' '))}`);
    else if (words.length) lines.push(`complete -c lading -n ${fishQuote(condition)} -F`);
    for (const o of n.options) {
      const flags = [o.long ? `-l ${o.long.slice(2)}` : '', o.short ? `-s ${o.short.slice(1)}` : ''].filter(Boolean).join(' ');
      lines.push(`complete -c lading -n ${fishQuote(condition)} ${flags} -d ${fishQuote(o.description.split(/[;(]/)[0]!.trim().slice(0, 60))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** The completion script of `cli` for `shell`. */
export function completionScript(cli: Command, shell: (typeof SHELLS)[number]): string {
  const nodes = nodesOf(cli);
  return shell === 'bash' ? bash(nodes) : shell === 'zsh' ? zsh(nodes) : fish(nodes);
}
