/**
 * The bash completion script. bash splits `--target=dgx` at `=` (COMP_WORDBREAKS), so a value is
 * completed after `--flag value` and after `--flag=value` alike. Files and folders come from
 * compgen with `-o filenames` so names with spaces complete as one word.
 */
import { posixQuote } from "./quote.js";
import { type CommandSpec, type CompletionSpec, type FlagSpec, spellings, type Values } from "./spec.js";

/** The shell code that fills COMPREPLY with what may stand at the cursor. */
function complete(values: Values): string {
  switch (values.kind) {
    case "none":
      return "return 0";
    case "words":
      return `_gpuplan_words ${values.words.map(posixQuote).join(" ")}; return 0`;
    case "files":
      return "_gpuplan_files; return 0";
    case "dirs":
      return "_gpuplan_dirs; return 0";
    case "runs":
      return "_gpuplan_runs; return 0";
  }
}

function valueCases(flags: readonly FlagSpec[]): string[] {
  return flags.filter((f) => f.value).map((f) => `      ${spellings(f).join("|")}) ${complete(f.value!)} ;;`);
}

function commandCase(command: CommandSpec): string {
  const flagWords = command.flags.flatMap(spellings).join(" ");
  return [
    `    ${command.name})`,
    '      case "$prev" in',
    ...valueCases(command.flags).map((line) => `  ${line}`),
    "      esac",
    `      if [[ $cur == -* ]]; then _gpuplan_words ${flagWords}; return 0; fi`,
    `      ${command.argument ? complete(command.argument) : "return 0"}`,
    "      ;;",
  ].join("\n");
}

export function bashScript(spec: CompletionSpec): string {
  const commands = spec.commands.map((c) => c.name).join(" ");
  const topFlags = spec.flags.flatMap(spellings).join(" ");
  return `# gpuplan completion for bash: source <(gpuplan completion bash), or save it as
# ~/.local/share/bash-completion/completions/gpuplan. Made by \`gpuplan completion bash\`.

# Not compgen -W: it expands $(…), \`…\` and $VAR in its words, and a run folder's name is anyone's text.
_gpuplan_match() {
  local word
  for word in "$@"; do
    [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
  done
  return 0
}
_gpuplan_words() {
  COMPREPLY=()
  _gpuplan_match "$@"
}
# mapfile, not COMPREPLY=($(compgen …)): an unquoted $(…) globs each name, so \`x[1].yaml\` came
# back as \`x1.yaml\`, and under the user's nullglob or failglob a name vanished or failed.
_gpuplan_files() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
_gpuplan_dirs() {
  compopt -o filenames 2>/dev/null
  mapfile -t COMPREPLY < <(compgen -d -- "$cur")
}
# A run is named by its id (a folder of .gpuplan/runs) or by its folder.
_gpuplan_runs() {
  compopt -o filenames 2>/dev/null
  local ids=() dirs=()
  mapfile -t ids < <(command ls -1 .gpuplan/runs 2>/dev/null)
  mapfile -t dirs < <(compgen -d -- "$cur")
  COMPREPLY=()
  _gpuplan_match "\${ids[@]}"
  COMPREPLY+=("\${dirs[@]}")
}

_gpuplan() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" i
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  # --flag=value: bash gives "--flag" "=" "value" (or "--flag" "=" when the value is empty).
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" ]] && (( COMP_CWORD > 1 )); then
    prev="\${COMP_WORDS[COMP_CWORD-2]}"
  fi
  for (( i = 1; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) cmd="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$cmd" in
    "")
      if [[ $cur == -* ]]; then _gpuplan_words ${topFlags}; else _gpuplan_words ${commands}; fi
      ;;
${spec.commands.map(commandCase).join("\n")}
  esac
  return 0
}
complete -F _gpuplan gpuplan
`;
}
