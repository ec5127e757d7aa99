/** The fish completion script: one `complete` line per command, flag and positional argument. */
import { fishQuote } from "./quote.js";
import type { CommandSpec, CompletionSpec, FlagSpec, Values } from "./spec.js";

/** How fish completes a value: -r takes one, -F offers files, -x none, -a the words. */
function valueArgs(values: Values): string {
  switch (values.kind) {
    case "none":
      return "-x";
    case "words":
      return `-x -a ${fishQuote(values.words.join(" "))}`;
    case "files":
      return "-r -F";
    case "dirs":
      return `-x -a '(__fish_complete_directories)'`;
    case "runs":
      return `-x -a '(command ls -1 .gpuplan/runs 2>/dev/null; __fish_complete_directories)'`;
  }
}

function flagLine(condition: string, flag: FlagSpec): string {
  const parts = ["complete -c gpuplan", `-n ${fishQuote(condition)}`];
  if (flag.short) parts.push(`-s ${flag.short.slice(1)}`);
  if (flag.long) parts.push(`-l ${flag.long.slice(2)}`);
  if (flag.value) parts.push(valueArgs(flag.value));
  parts.push(`-d ${fishQuote(flag.description)}`);
  return parts.join(" ");
}

function commandLines(command: CommandSpec): string[] {
  const inCommand = `__fish_seen_subcommand_from ${command.name}`;
  const lines = [
    `complete -c gpuplan -n __fish_use_subcommand -a ${command.name} -d ${fishQuote(command.description)}`,
    ...command.flags.map((f) => flagLine(inCommand, f)),
  ];
  if (command.argument && command.argument.kind !== "none")
    lines.push(`complete -c gpuplan -n ${fishQuote(inCommand)} ${valueArgs(command.argument)}`);
  return lines;
}

export function fishScript(spec: CompletionSpec): string {
  return `# gpuplan completion for fish: gpuplan completion fish | source, or save it as
# ~/.config/fish/completions/gpuplan.fish. Made by \`gpuplan completion fish\`.

# No file names unless a command or flag asks for them.
complete -c gpuplan -f
${spec.flags.map((f) => flagLine("__fish_use_subcommand", f)).join("\n")}
${spec.commands.flatMap(commandLines).join("\n")}
`;
}
