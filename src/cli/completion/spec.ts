/**
 * What a shell needs to complete gpuplan's command line, read from the commander program itself,
 * so a new command or flag is completed without anyone remembering to add it here. The renderers
 * (bash.ts, zsh.ts, fish.ts) turn this one description into each shell's own language.
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";

/** What may follow a flag or stand at a positional place. */
export type Values =
  | { kind: "none" }
  | { kind: "words"; words: readonly string[] }
  | { kind: "files" }
  | { kind: "dirs" }
  /** Run ids: the folders of .gpuplan/runs in the current folder, or any folder. */
  | { kind: "runs" };

export interface FlagSpec {
  long?: string;
  short?: string;
  description: string;
  /** undefined: the flag takes no value. */
  value?: Values;
  repeatable: boolean;
}

export interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** What the first positional argument is, if the command takes one. */
  argument?: Values;
}

export interface CompletionSpec {
  commands: CommandSpec[];
  /** The flags of `gpuplan` itself (help, version). */
  flags: FlagSpec[];
}

/** Names a completion offers that the program does not spell out. */
export interface KnownNames {
  targets: readonly string[];
  codes: readonly string[];
}

const HELP: FlagSpec = { short: "-h", long: "--help", description: "show help", repeatable: false };

/** Flag values that name something on disk or a known set, by the flag's long name. */
function flagValues(long: string | undefined, names: KnownNames): Values {
  switch (long) {
    case "--output":
    case "--inventory":
    case "--check":
    case "--save":
    case "--events":
      return { kind: "files" };
    case "--lock-dir":
    case "--targets-dir":
      return { kind: "dirs" };
    case "--target":
      return { kind: "words", words: names.targets };
    case "--resume":
    case "--history":
      return { kind: "runs" };
    default:
      return { kind: "none" };
  }
}

/** A positional argument's values, by its name in the program (`<plan>`, `[run]`, …). */
function argumentValues(name: string, choices: readonly string[] | undefined, names: KnownNames): Values {
  if (choices) return { kind: "words", words: choices };
  switch (name) {
    case "file":
    case "plan":
      return { kind: "files" };
    case "run":
      return { kind: "runs" };
    case "code":
      return { kind: "words", words: names.codes };
    default:
      return { kind: "none" };
  }
}

export function completionSpec(program: CommandUnknownOpts, names: KnownNames): CompletionSpec {
  const flags = (command: CommandUnknownOpts): FlagSpec[] => [
    ...command.options
      .filter((o) => !o.hidden)
      .map((o) => {
        const takesValue = o.required || o.optional;
        const value = !takesValue
          ? undefined
          : o.argChoices
            ? ({ kind: "words", words: o.argChoices } as const)
            : flagValues(o.long, names);
        return {
          ...(o.long ? { long: o.long } : {}),
          ...(o.short ? { short: o.short } : {}),
          description: o.description,
          ...(value ? { value } : {}),
          // The collecting flags start from an empty list.
          repeatable: Array.isArray(o.defaultValue),
        };
      }),
    HELP,
  ];
  return {
    flags: flags(program),
    commands: program.commands.map((c) => {
      const first = c.registeredArguments[0];
      // A command's own subcommands (`locks init`) stand where its argument would: `gpuplan locks
      // i<Tab>` offered nothing.
      const subcommands = c.commands.map((sub) => sub.name());
      const argument: Values | undefined = first
        ? argumentValues(first.name(), first.argChoices, names)
        : subcommands.length > 0
          ? { kind: "words", words: subcommands }
          : undefined;
      return {
        name: c.name(),
        description: c.description(),
        flags: flags(c),
        ...(argument ? { argument } : {}),
      };
    }),
  };
}

/** Every spelling of a flag: `-o`, `--output`. */
export const spellings = (flag: FlagSpec): string[] =>
  [flag.short, flag.long].filter((s): s is string => s !== undefined);
