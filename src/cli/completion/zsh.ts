/**
 * The zsh completion script, on zsh's own _arguments so flags show their descriptions, a flag
 * given once is not offered again, and `--flag=value` works as zsh users expect.
 */
import { posixQuote } from "./quote.js";
import { type CommandSpec, type CompletionSpec, type FlagSpec, spellings, type Values } from "./spec.js";

/** An _arguments action: what completes a value. */
function action(values: Values): string {
  switch (values.kind) {
    case "none":
      return " ";
    case "words":
      // (a b c): the words, each escaped for zsh's own word splitting.
      return `(${values.words.map((w) => w.replace(/[\\\s()'"$`]/g, "\\$&")).join(" ")})`;
    case "files":
      return "_files";
    case "dirs":
      return "_files -/";
    case "runs":
      return "_gpuplan_run_ids";
  }
}

/** Text inside _arguments' [description] brackets: a backslash, ] and : would end or split it. */
const describe = (text: string): string => text.replace(/[\\\]:]/g, "\\$&");

/** One flag as _arguments specs: '(-o --output)'{-o,--output}'[…]:value:action'. */
function flagSpecs(flag: FlagSpec): string[] {
  const names = spellings(flag);
  const value = flag.value ? `:${flag.long?.slice(2) ?? "value"}:${action(flag.value)}` : "";
  // A long flag with a value also accepts --flag=value.
  const equals = (n: string) => (flag.value && n.startsWith("--") ? `${n}=` : n);
  // A flag given once is not offered again (under either spelling); a repeatable one is.
  const exclusive = flag.repeatable ? "*" : `(${names.join(" ")})`;
  return names.map((n) => posixQuote(`${exclusive}${equals(n)}[${describe(flag.description)}]${value}`));
}

function commandFunction(command: CommandSpec): string {
  const specs = command.flags.flatMap(flagSpecs);
  if (command.argument) specs.push(posixQuote(`1:${command.name} argument:${action(command.argument)}`));
  return `_gpuplan_cmd_${command.name.replace(/\W/g, "_")}() {
  _arguments -s -S \\
    ${specs.join(" \\\n    ")}
}`;
}

export function zshScript(spec: CompletionSpec): string {
  const commands = spec.commands.map((c) => posixQuote(`${c.name}:${c.description.replace(/:/g, "\\:")}`));
  const cases = spec.commands.map((c) => `    ${c.name}) _gpuplan_cmd_${c.name.replace(/\W/g, "_")} ;;`);
  return `#compdef gpuplan
# gpuplan completion for zsh: source <(gpuplan completion zsh), or save it as _gpuplan in a folder
# of your $fpath. Made by \`gpuplan completion zsh\`.

# A run is named by its id (a folder of .gpuplan/runs) or by its folder.
_gpuplan_run_ids() {
  local -a runs
  runs=(.gpuplan/runs/*(N/:t))
  _alternative 'runs:run id:compadd -a runs' 'folders:run folder:_files -/'
}

${spec.commands.map(commandFunction).join("\n\n")}

_gpuplan() {
  local curcontext="$curcontext" state line
  local -a commands
  commands=(
    ${commands.join("\n    ")}
  )
  _arguments -C \\
    ${spec.flags.flatMap(flagSpecs).join(" \\\n    ")} \\
    '1: :->command' \\
    '*:: :->argument'
  case $state in
    command) _describe -t commands 'gpuplan command' commands ;;
    argument)
      case $words[1] in
${cases.map((l) => `    ${l}`).join("\n")}
      esac
      ;;
  esac
}

if [[ $zsh_eval_context[-1] == loadautoload ]]; then
  _gpuplan "$@"
else
  compdef _gpuplan gpuplan
fi
`;
}
