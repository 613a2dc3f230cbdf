/**
 * Shell completion scripts, made from the command tree itself so that they never fall behind it:
 * `eval "$(payment-service-sdk completion bash)"` in ~/.bashrc, or the zsh one in ~/.zshrc.
 */
import type { Command, Option } from 'commander';

interface Completions {
  /** The words that may follow the command: its subcommands, argument choices and long options. */
  next: string[];
  /** The options that take a value there (its own and its ancestors'): the word after one is not a command. */
  valued: string[];
}

const takesValue = (option: Option) => option.required || option.optional;

/** Every command path with its completions. */
function tree(command: Command, path: string[] = [], inherited: string[] = [], into = new Map<string, Completions>()) {
  const valued = [
    ...inherited,
    ...command.options.filter(takesValue).flatMap((option) => [option.long, option.short].filter((flag) => flag !== undefined)),
  ];
  const next = [
    ...command.commands.map((sub) => sub.name()),
    ...command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
    ...command.options.flatMap((option) => (option.long ? [option.long] : [])),
    '--help',
  ];
  into.set(path.join(' '), { next, valued });
  for (const sub of command.commands) tree(sub, [...path, sub.name()], valued, into);
  return into;
}

export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const paths = [...tree(program)];
  const cases = (pick: (completions: Completions) => string[], variable: string) =>
    paths.map(([path, completions]) => `    "${path}") ${variable}="${pick(completions).join(' ')}" ;;`).join('\n');
  const name = program.name();
  const fn = `_${name.replaceAll(/[^a-zA-Z0-9]/g, '_')}`;
  // The command path is the words before the cursor that are neither options nor an option's value
  // (`--env test sessions l` is the path `sessions`); after an option that takes a value, nothing is offered.
  const bash = `${fn}_valued() {
  local valued=""
  case "$1" in
${cases((completions) => completions.valued, 'valued')}
  esac
  echo "$valued"
}
${fn}() {
  local current path="" word value=""
  current="\${COMP_WORDS[COMP_CWORD]}"
  for word in "\${COMP_WORDS[@]:1:$((COMP_CWORD - 1))}"; do
    if [ -n "$value" ]; then value=""; continue; fi
    case "$word" in
      --*=*) ;;
      -*) case " $(${fn}_valued "$path") " in *" $word "*) value=1 ;; esac ;;
      *) path="\${path:+$path }$word" ;;
    esac
  done
  COMPREPLY=()
  [ -n "$value" ] && return 0
  local words=""
  case "$path" in
${cases((completions) => completions.next, 'words')}
  esac
  for word in $words; do
    case "$word" in "$current"*) COMPREPLY+=("$word") ;; esac
  done
}
complete -F ${fn} ${name}
`;
  if (shell === 'bash') return `# bash completion for ${name}\n${bash}`;
  // zsh runs the bash function through bashcompinit; with bash's arrays (from 0) and word splitting, also when called directly.
  const zsh = bash.replace(`${fn}() {\n`, `${fn}() {\n  setopt localoptions ksharrays shwordsplit\n`);
  return `# zsh completion for ${name}\n(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }\nautoload -U +X bashcompinit && bashcompinit\n${zsh}`;
}
