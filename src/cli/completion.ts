/**
 * Shell completion scripts, made from the command tree itself so that they never fall behind it:
 * `eval "$(payment-service-sdk completion bash)"` in ~/.bashrc, or the zsh one in ~/.zshrc.
 */
import type { Command } from 'commander';

/** Every command path with the words that may follow it: its subcommands, argument choices and long options. */
function words(command: Command, path: string[] = [], into = new Map<string, string[]>()): Map<string, string[]> {
  const next = [
    ...command.commands.map((sub) => sub.name()),
    ...command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
    ...command.options.flatMap((option) => (option.long ? [option.long] : [])),
    '--help',
  ];
  into.set(path.join(' '), next);
  for (const sub of command.commands) words(sub, [...path, sub.name()], into);
  return into;
}

export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const table = [...words(program)].map(([path, next]) => `    "${path}") words="${next.join(' ')}" ;;`).join('\n');
  const name = program.name();
  const fn = `_${name.replaceAll(/[^a-zA-Z0-9]/g, '_')}`;
  const bash = `${fn}() {
  local current path="" word
  current="\${COMP_WORDS[COMP_CWORD]}"
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$word" in -*) ;; *) path="\${path:+$path }$word" ;; esac
  done
  local words=""
  case "$path" in
${table}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$current") )
}
complete -F ${fn} ${name}
`;
  if (shell === 'bash') return `# bash completion for ${name}\n${bash}`;
  return `# zsh completion for ${name}\nautoload -U +X bashcompinit && bashcompinit\n${bash}`;
}
