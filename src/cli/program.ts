/**
 * The commander program: every command, option and GPUPLAN_* setting, typed by commander's
 * extra-typings so each command module gets exactly the options it declares. Configuration is
 * resolved here, once (flag, else environment variable, else default), and handed to the commands
 * as values; nothing below the CLI reads these variables. Each command's module is imported inside
 * its action so that `gpuplan --help` and `gpuplan compile` never load koffi, ink or react.
 */
import { statSync } from "node:fs";
import {
  Argument,
  Command,
  CommanderError,
  type CommandUnknownOpts,
  Option,
  type OptionValues,
} from "@commander-js/extra-typings";
import type { Code } from "../problems/codes.js";
import { DEFAULT_CPU_PINNING, DEFAULT_KILL_GRACE_MS, DEFAULT_SPAWN } from "../run/executor/run-defaults.js";
import { DEFAULT_LOCK_DIR_TEXT, defaultLockDir, SYSTEM_LOCK_DIR } from "../run/lock/default-lock-dir.js";
import { VERSION } from "../version.js";
import {
  countArgument,
  durationArgument,
  pathArgument,
  pathsArgument,
  sizeArgument,
  takeArgumentFailureCode,
} from "./arg-parsers.js";
import { CommandLineError } from "./command-line-error.js";
import { writeErr, writeOut } from "./output.js";
import type { ReportFormat } from "./report-failure.js";
import { runCommand } from "./run-command.js";

/** The environment variables that are user settings (each also a flag); an empty one counts as unset. */
export const USER_SETTINGS = [
  "GPUPLAN_LOCK_DIR",
  "GPUPLAN_KILL_GRACE",
  "GPUPLAN_CPU_PINNING",
  "GPUPLAN_SPAWN",
] as const;

/**
 * Build the program; `format` is how a failure is reported (see requestedReportFormat). With
 * `args` (the command line after `gpuplan`), only the command it runs is defined when that is
 * certain (commandToDefine): defining all of them is ~2 ms of every start (issue #17).
 */
export function createProgram(format: ReportFormat, args?: readonly string[]) {
  const only = args === undefined ? null : commandToDefine(args);
  const wants = (name: string) => only === null || only === name;
  const program = configure(new Command("gpuplan"))
    .description("Plan GPU work before it runs, then run it safely.")
    .version(VERSION, "-v, --version", "print the version")
    // -V too, as in earlier releases.
    .addOption(new Option("-V").hideHelp())
    .on("option:V", () => {
      writeOut(`${VERSION}\n`);
      throw new CommanderError(0, "commander.version", VERSION);
    });

  const collect = (value: string, previous: string[]): string[] => [...previous, value];

  if (wants("compile")) {
    configure(program.command("compile"))
      .description("check a pipeline file and write a deterministic GPU plan")
      .argument("<file>", "pipeline YAML file (- reads it from stdin)", pathArgument())
      .option(
        "-o, --output <plan>",
        "write the plan here (atomically, making missing folders; - for stdout) instead of stdout",
        pathArgument(),
      )
      .option(
        "--inventory <file>",
        "compile against an inventory file (detect --json output or short form)",
        pathArgument(),
      )
      .option(
        "--target <name>",
        "compile against a target profile: built-in or custom (see `gpuplan targets`)",
      )
      .option(
        "--targets-dir <dir>",
        "folder of custom targets (inventory files NAME.yaml); default: .gpuplan/targets next to the pipeline and in the current folder",
        pathArgument(),
      )
      .option(
        "--check <plan>",
        "exit 1 when PLAN is not what compile would write now (CI staleness gate); repeatable: each plan is checked against the target or inventory it records, unless --target/--inventory names one",
        pathsArgument(),
        [] as string[],
      )
      .addOption(
        new Option("--format <format>", "how to report problems")
          .choices(["human", "json", "github"] as const)
          .default("human" as const),
      )
      .addOption(new Option("--json", "same as --format json").conflicts("format"))
      .option(
        "--history <runs...>",
        "learn step estimates and VRAM from earlier runs: run ids or run folders, or auto (this file's newest runs)",
        pathsArgument(),
      )
      .option("--strict", "treat warnings as errors")
      // Live detection marks gpuplan's own GPU processes by the slot lock's holders.
      .addOption(lockDirOption().hideHelp())
      .action((file, options) =>
        runCommand(format, () => import("./commands/compile.js"), file, {
          ...options,
          format: options.json ? "json" : options.format,
        }),
      );
  }

  if (wants("detect")) {
    configure(program.command("detect"))
      .description("find NVIDIA and AMD GPUs and the CPU")
      .option("--json", "print the inventory as JSON (schema gpuplan/inventory@1)")
      .option(
        "--save <file>",
        "also write the inventory JSON to FILE (making missing folders; - for stdout, in place of the table), for compile --inventory",
        pathArgument(),
      )
      .option("--all", "ignore CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and friends")
      .addOption(
        new Option(
          "--timeout <duration>",
          "hard limit for the vendor probes (with --slurm: for each Slurm command)",
        )
          .argParser(durationArgument({ min: 1 }))
          .default(10_000, "10s"),
      )
      .addOption(lockDirOption())
      .option(
        "--slurm",
        "read the Slurm cluster's node types (sinfo, scontrol; SLURM_CONF honoured) instead of this machine",
      )
      .option("--partition <name>", "with --slurm: only this partition's nodes")
      .option("--node-type <name>", "with --slurm: only this node type (the one --save writes)")
      .option(
        "--gpu-model <[type=]model>",
        "with --slurm: the GPU model a GRES type names (e.g. hopper=h100)",
        collect,
        [],
      )
      .action((options) =>
        // The Slurm-only flags go there too, which refuses them without --slurm.
        options.slurm || options.partition || options.nodeType || options.gpuModel.length
          ? runCommand(format, () => import("./commands/detect-slurm.js"), options)
          : runCommand(format, () => import("./commands/detect.js"), options),
      );
  }

  if (wants("run")) {
    const runCli = configure(program.command("run"))
      .description("execute a plan (or compile a pipeline file in memory and run it) under the GPU slot lock")
      .argument(
        "[plan]",
        "plan JSON from gpuplan compile, or a pipeline YAML file (with --resume: the run's own)",
        pathArgument(),
      )
      .option("--pipeline <name>", "run only this pipeline (repeatable)", collect, [])
      .option(
        "--events <file>",
        "also append the JSON Lines events to FILE (making missing folders)",
        pathArgument(),
      )
      .option("--no-wait", "exit 75 at once when a GPU slot is busy instead of waiting")
      .addOption(
        new Option(
          "--lock-timeout <duration>",
          "give up waiting for a GPU slot other processes hold after this long (e.g. 10m)",
        ).argParser(durationArgument()),
      )
      .option(
        "--resume <run>",
        "continue run RUN (id or directory), skipping steps that completed",
        pathArgument(),
      )
      .addOption(
        new Option("--ui <mode>", "how to show progress")
          .choices(["auto", "tui", "plain", "json"] as const)
          .default("auto" as const),
      )
      .addOption(
        new Option("--json", "same as --ui json (with --dry-run: the dry run as JSON)").conflicts("ui"),
      )
      .option("--dry-run", "verify the plan against this machine and show what would run, without running it")
      .addOption(
        new Option(
          "--bind <mode>",
          "how the plan's GPUs find this machine's: auto (same UUID, else a free GPU of the same model, memory and capability) or exact (the planned UUIDs only)",
        )
          .choices(["auto", "exact"] as const)
          .default("auto" as const),
      )
      .addOption(lockDirOption())
      .addOption(
        new Option("--kill-grace <duration>", "after SIGTERM, how long a stopped step has before SIGKILL")
          .env("GPUPLAN_KILL_GRACE")
          .argParser(durationArgument())
          .default(DEFAULT_KILL_GRACE_MS, `${DEFAULT_KILL_GRACE_MS / 1000}s`),
      )
      .addOption(
        new Option("--cpu-pinning <mode>", "pin GPU steps to their GPU's local CPUs")
          .env("GPUPLAN_CPU_PINNING")
          .choices(["on", "off"] as const)
          .default(DEFAULT_CPU_PINNING ? ("on" as const) : ("off" as const)),
      )
      .addOption(
        new Option(
          "--spawn <starter>",
          "how steps are started: posix_spawn through the C library where it works (auto), or Node's child_process",
        )
          .env("GPUPLAN_SPAWN")
          .choices(["auto", "node"] as const)
          .default(DEFAULT_SPAWN),
      )
      .addOption(
        new Option(
          "--executor <executor>",
          "where the pipelines run: here, or as Slurm job arrays (one task per pipeline); default: local, or slurm when --resume names a run submitted to Slurm",
        ).choices(["local", "slurm"] as const),
      )
      .option(
        "--detach",
        "with --executor slurm: submit, print the run and job ids, and return (gpuplan status RUN)",
      )
      .option(
        "--requeue",
        "with --executor slurm: let Slurm requeue a task whose node failed (sbatch --requeue)",
      )
      .option(
        "--inventory <file>",
        "with --executor slurm: the node type the tasks land on (detect --slurm --save); default: the plan's own",
        pathArgument(),
      );
    // Then the sbatch request flags (with --executor slurm), then the array task's own.
    withSlurmRequestOptions(runCli, collect)
      .option(
        "--bind-slurm-gpus",
        "run the pipeline on the GPUs Slurm allocated to this task (SLURM_STEP_GPUS/SLURM_JOB_GPUS); the sbatch scripts pass it",
      )
      .option(
        "--slurm-task <job_task>",
        "an array task of the Slurm run whose folder holds PLAN (its plan.json): record into that folder; the sbatch scripts of run --executor slurm pass it",
      )
      .action((plan, options, command) =>
        runCommand(format, () => import("./commands/run.js"), plan, {
          ...options,
          ui: options.json ? "json" : options.ui,
          flagsGiven: flagsGiven(command),
        }),
      );
  }

  if (wants("export")) {
    const exportCli = configure(program.command("export"))
      .description(
        "write a plan as Slurm job arrays (commented sbatch scripts, one task per pipeline) and submit.sh",
      )
      .argument("<plan>", "plan JSON from gpuplan compile", pathArgument())
      .addOption(
        new Option("--to <scheduler>", "where the plan goes")
          .choices(["slurm"] as const)
          .makeOptionMandatory(),
      )
      .requiredOption(
        "-o, --output <dir>",
        "folder to write, made with its parents if missing (new or empty; see --force)",
        pathArgument(),
      )
      .option(
        "--inventory <file>",
        "the node type the tasks land on (detect --slurm --save); default: the plan's own inventory",
        pathArgument(),
      );
    withSlurmRequestOptions(exportCli, collect)
      .option("--json", "print what was written as JSON (schema gpuplan/slurm-export@1)")
      .option("--force", "write into a folder that is not empty")
      .action((plan, options) => runCommand(format, () => import("./commands/export.js"), plan, options));
  }

  if (wants("status")) {
    configure(program.command("status"))
      .description(
        "a run submitted with run --executor slurm (detached or not): each pipeline pending, running, done or failed",
      )
      .argument("<run>", "run id or folder", pathArgument())
      .option("--json", "print as JSON (schema gpuplan/slurm-run-status@1)")
      .action((run, options) => runCommand(format, () => import("./commands/status.js"), run, options));
  }

  if (wants("locks")) {
    const locks = configure(program.command("locks"))
      .description("show which GPU slots are held now, by whom, with how much memory, and who waits")
      .option("--json", "print as JSON (schema gpuplan/locks@2)")
      .addOption(lockDirOption())
      .action((options) => runCommand(format, () => import("./commands/locks.js"), options));
    configure(locks.command("init"))
      .description(
        "(as root) set up the shared lock directory so that every user's gpuplan shares GPUs safely",
      )
      .option("--group <group>", "only this group's members may use the GPUs' lock files")
      .option("--dir <dir>", "the shared directory", SYSTEM_LOCK_DIR)
      .option(
        "--gpu <uuid>",
        "a GPU to make a lock file for (repeatable; default: the GPUs gpuplan detect finds)",
        collect,
        [],
      )
      .action((options) => runCommand(format, () => import("./commands/locks-init.js"), options));
  }

  if (wants("report")) {
    configure(program.command("report"))
      .description("a run (the newest by default) or a plan as one HTML page: timeline, memory, steps")
      .argument("[run]", "run id or folder, or a plan JSON file", pathArgument())
      .option(
        "-o, --output <file>",
        "write here, making missing folders (- for stdout); default: stdout, or beside the run on a terminal",
        pathArgument(),
      )
      .addOption(
        new Option("--format <format>", "an HTML page, or Chrome trace events (Perfetto, chrome://tracing)")
          .choices(["html", "trace"] as const)
          .default("html" as const),
      )
      .action((run, options) => runCommand(format, () => import("./commands/report.js"), run, options));
  }

  if (wants("runs")) {
    configure(program.command("runs"))
      .description("list the runs in .gpuplan/runs (newest first); --prune --keep N removes older ones")
      .option("--json", "print as JSON (schema gpuplan/runs@2)")
      .option("--prune", "remove run folders beyond the --keep newest (never one that may be in use)")
      .addOption(
        new Option("--keep <n>", "with --prune: how many of the newest runs to keep").argParser(
          countArgument(),
        ),
      )
      .action((options) => runCommand(format, () => import("./commands/runs.js"), options));
  }

  if (wants("targets")) {
    configure(program.command("targets"))
      .description("list the inventory profiles for --target: built-in, and custom ones in .gpuplan/targets")
      .option("--json", "print as JSON (schema gpuplan/targets@1)")
      .option(
        "--targets-dir <dir>",
        "folder of custom targets (default: .gpuplan/targets in the current folder)",
        pathArgument(),
      )
      .action((options) => runCommand(format, () => import("./commands/targets.js"), options));
  }

  if (wants("presets")) {
    configure(program.command("presets"))
      .description("list the built-in device-map presets")
      .option("--json", "print as JSON (schema gpuplan/presets@1)")
      .action((options) => runCommand(format, () => import("./commands/presets.js"), options));
  }

  if (wants("explain")) {
    configure(program.command("explain"))
      .description("explain a code that gpuplan printed in [brackets] (without CODE: list them all)")
      .argument("[code]", "e.g. needs-cycle")
      .action((code) => runCommand(format, () => import("./commands/explain.js"), code));
  }

  if (wants("completion")) {
    configure(program.command("completion"))
      .description("print a shell completion script (source <(gpuplan completion bash))")
      .addArgument(
        new Argument("<shell>", "the shell to complete for").choices(["bash", "zsh", "fish"] as const),
      )
      .action((shell) => runCommand(format, () => import("./commands/completion.js"), shell));
  }

  // Not a command after all (a misspelling, `help`): every command, for commander's suggestions.
  const full: CommandUnknownOpts =
    only !== null && program.commands.length === 0 ? createProgram(format) : program;
  const [first, second] = args ?? [];
  if (first === "help" && second !== undefined && !second.startsWith("-") && !findCommand(full, second)) {
    // `gpuplan help comple`: commander printed the whole help on stderr (exit 2) with no word on
    // what was wrong; said as `gpuplan comple` is, with its suggestion.
    full.args = [second];
    asUnknownCommandReporter(full).unknownCommand();
  }
  return full;
}

const findCommand = (command: CommandUnknownOpts, name: string): boolean =>
  command.commands.some((c) => c.name() === name || c.aliases().includes(name));

/**
 * commander's own "unknown command 'X'" with its suggestion (Did you mean …?), for the words it
 * reads otherwise: it is a method of Command that its typings leave out. It throws through
 * exitOverride, as every command-line error does.
 */
const asUnknownCommandReporter = (command: CommandUnknownOpts) =>
  command as unknown as { unknownCommand(): never };

/**
 * The one command a command line may run, when nothing else can be asked of the program: its
 * first word (not an option), with no help asked for anywhere (the program's help lists every
 * command). Else null: all are defined. A word that names no command is caught by createProgram.
 */
function commandToDefine(args: readonly string[]): string | null {
  const end = args.indexOf("--");
  const before = end === -1 ? args : args.slice(0, end);
  if (before.some((a) => a === "-h" || a === "--help")) return null;
  const first = args[0];
  return first !== undefined && !first.startsWith("-") ? first : null;
}

/**
 * The sbatch request flags `run --executor slurm` and `export --to slurm` share, declared once
 * (src/cli/slurm-options.ts checks their values, the same way for both).
 */
function withSlurmRequestOptions<
  Args extends unknown[],
  Opts extends OptionValues,
  Globals extends OptionValues,
>(command: Command<Args, Opts, Globals>, collect: (value: string, previous: string[]) => string[]) {
  return command
    .option("--partition <name>", "sbatch --partition")
    .option("--account <name>", "sbatch --account")
    .option("--qos <name>", "sbatch --qos")
    .option(
      "--gres-type <[model=]type>",
      "GRES type to ask for a GPU model (repeatable; any: untyped gpu:N)",
      collect,
      [],
    )
    .option("--throttle <n>", "at most N tasks of each array at once (--array=…%N); default: no limit")
    .option(
      "--time-factor <x>",
      "--time for steps without a timeout: X × their estimate (the pipeline file's time_factor, else 3)",
    )
    .addOption(
      new Option("--time <duration>", "--time for every task instead of the derived one").argParser(
        // A Slurm time limit, not a wait of gpuplan's: up to a year.
        durationArgument({ min: 1, max: 365 * 86_400_000 }),
      ),
    )
    .option("--cpus-per-task <n>", "instead of the node type's share")
    .addOption(
      new Option("--mem <size>", "--mem for every task instead of the node type's share").argParser(
        sizeArgument({ min: 1 }),
      ),
    )
    .option("--no-shards", "one pipeline per GPU even where the node type has Slurm shards")
    .option(
      "--sbatch-arg <option>",
      "another sbatch option, e.g. --sbatch-arg=--constraint=ib (repeatable)",
      collect,
      [],
    );
}

/** The long flags given on the command line, in the order commander declares them (not defaults or variables). */
function flagsGiven(command: CommandUnknownOpts): string[] {
  return command.options
    .filter((o) => command.getOptionValueSource(o.attributeName()) === "cli")
    .map((o) => o.long ?? o.flags);
}

const lockDirOption = () =>
  new Option("--lock-dir <dir>", "the GPU slot lock directory, shared by the gpuplans that share GPUs")
    .env("GPUPLAN_LOCK_DIR")
    .argParser(pathArgument())
    .default(defaultLockDir(), DEFAULT_LOCK_DIR_TEXT);

/**
 * Every command: errors are thrown (main.ts prints them once, in the requested format) with the
 * command's usage line, not the whole help.
 */
function configure<C extends CommandUnknownOpts>(command: C): C {
  command
    .exitOverride((e) => {
      throw toCommandLineError(e, command);
    })
    .configureOutput({
      writeOut,
      writeErr,
      outputError: () => {},
    });
  return command;
}

/** commander's code for what went wrong → the registry's. */
const COMMANDER_CODES: Record<string, Code> = {
  "commander.unknownCommand": "unknown-command",
  "commander.unknownOption": "unknown-option",
  "commander.missingArgument": "missing-argument",
  "commander.excessArguments": "too-many-arguments",
  "commander.optionMissingArgument": "option-missing-value",
  "commander.missingMandatoryOptionValue": "option-missing-value",
  "commander.conflictingOption": "conflicting-options",
  "commander.invalidArgument": "invalid-option-value",
};

function toCommandLineError(e: CommanderError, command: CommandUnknownOpts): Error {
  // --help, --version, and `gpuplan` alone (help on stderr): commander has printed what it should.
  if (e.exitCode === 0 || e.code === "commander.help") return e;
  // `locks ini`: a misspelt subcommand of a command that runs by itself reads as an argument it
  // does not take ("too many arguments for 'locks'"); it is an unknown command, with a suggestion.
  if (
    e.code === "commander.excessArguments" &&
    command.registeredArguments.length === 0 &&
    command.commands.length > 0
  )
    asUnknownCommandReporter(command).unknownCommand();
  const code =
    e.code === "commander.invalidArgument"
      ? (takeArgumentFailureCode() ?? "invalid-option-value")
      : (COMMANDER_CODES[e.code] ?? "invalid-option-value");
  const path = commandPath(command);
  // `compile --history auto p.yaml`: the variadic --history took the pipeline file as a run, and
  // "missing required argument 'file'" named nothing the user left out.
  const history = command.opts().history;
  const last = Array.isArray(history) ? String(history.at(-1)) : "";
  if (e.code === "commander.missingArgument" && isFile(last)) {
    const runs = (history as unknown[]).slice(0, -1).map(String);
    return new CommandLineError(
      `missing required argument 'file': --history took every word after it as a run, \`${last}\` too`,
      "missing-argument",
      `${path} ${command.usage()}`,
      path,
      `put the pipeline file before --history: ${path} ${last} --history ${runs.length === 1 ? runs[0] : "RUN…"}`,
    );
  }
  // commander puts its suggestion on a line of its own: "(Did you mean compile?)".
  const [first = "", ...rest] = e.message.replace(/^error: /, "").split("\n");
  const suggestion = rest
    .join(" ")
    .replace(/^\((.*)\)$/, "$1")
    .trim();
  return new CommandLineError(
    first,
    code,
    `${path} ${command.usage()}`,
    path,
    suggestion ? `${suggestion[0]!.toLowerCase()}${suggestion.slice(1)}` : undefined,
  );
}

function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** A regular file at `path` (a pipeline file --history took as a run), never a run folder. */
function isFile(path: string): boolean {
  try {
    return path !== "" && statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}
