/**
 * The commander program. Each command's module is imported inside its action so that
 * `gpuplan --help` and `gpuplan compile` never load koffi, ink or react (STYLE.md §2).
 */
import { Command, CommanderError, Option } from "commander";
import { VERSION } from "../version.js";
import { runCommand } from "./run-command.js";

const program = new Command("gpuplan")
  .description("Plan GPU work before it runs, then run it safely.")
  .version(VERSION, "-V, --version")
  .showHelpAfterError()
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

program
  .command("compile")
  .description("check a pipeline file and write a deterministic GPU plan")
  .argument("<file>", "pipeline YAML file")
  .option("-o, --output <plan>", "write the plan here (atomically) instead of stdout")
  .option("--inventory <file>", "compile against an inventory file (detect --json output or short form)")
  .option("--target <name>", "compile against a built-in target profile (see `gpuplan targets`)")
  .option("--check <plan>", "exit 1 when PLAN is not what compile would write now (CI staleness gate)")
  .addOption(
    new Option("--format <format>", "how to report problems")
      .choices(["human", "json", "github"])
      .default("human"),
  )
  .option("--strict", "treat warnings as errors")
  .action((file, options) => runCommand(() => import("./commands/compile.js"), file, options));

const collect = (value: string, previous: string[]): string[] => [...previous, value];

program
  .command("detect")
  .description("find NVIDIA and AMD GPUs and the CPU")
  .option("--json", "print the inventory as JSON (schema gpuplan/inventory@1)")
  .option("--save <file>", "also write the inventory JSON to FILE, for compile --inventory")
  .option("--all", "ignore CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and friends")
  .option(
    "--timeout <duration>",
    "hard limit for the vendor probes (with --slurm: for each Slurm command)",
    "10s",
  )
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
      ? runCommand(() => import("./commands/detect-slurm.js"), options)
      : runCommand(() => import("./commands/detect.js"), options),
  );

program
  .command("run")
  .description("execute a plan (or compile a pipeline file in memory and run it) under the GPU slot lock")
  .argument("<plan>", "plan JSON from gpuplan compile, or a pipeline YAML file")
  .option("--pipeline <name>", "run only this pipeline (repeatable)", collect, [])
  .option("--events <file>", "also append the JSON Lines events to FILE")
  .option("--no-wait", "exit 75 at once when a GPU slot is busy instead of waiting")
  .option("--lock-timeout <duration>", "give up waiting for a GPU slot after this long (e.g. 10m)")
  .option("--resume <run>", "continue run RUN (id or directory), skipping steps that completed")
  .addOption(
    new Option("--ui <mode>", "how to show progress")
      .choices(["auto", "tui", "plain", "json"])
      .default("auto"),
  )
  .option("--dry-run", "verify the plan against this machine and show what would run, without running it")
  .action((plan, options) => runCommand(() => import("./commands/run.js"), plan, options));

program
  .command("export")
  .description(
    "write a plan as Slurm job arrays (commented sbatch scripts, one task per pipeline) and submit.sh",
  )
  .argument("<plan>", "plan JSON from gpuplan compile")
  .addOption(new Option("--to <scheduler>", "where the plan goes").choices(["slurm"]).makeOptionMandatory())
  .requiredOption("-o, --output <dir>", "folder to write (new or empty; see --force)")
  .option(
    "--inventory <file>",
    "the node type the tasks land on (detect --slurm --save); default: the plan's own inventory",
  )
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
  .option("--time <duration>", "--time for every task instead of the derived one")
  .option("--cpus-per-task <n>", "instead of the node type's share")
  .option("--mem <size>", "--mem for every task instead of the node type's share")
  .option("--no-shards", "one pipeline per GPU even where the node type has Slurm shards")
  .option(
    "--sbatch-arg <option>",
    "another sbatch option, e.g. --sbatch-arg=--constraint=ib (repeatable)",
    collect,
    [],
  )
  .option("--json", "print what was written as JSON (schema gpuplan/slurm-export@1)")
  .option("--force", "write into a folder that is not empty")
  .action((plan, options) => runCommand(() => import("./commands/export.js"), plan, options));

program
  .command("locks")
  .description("show which GPU slots are held, by whom and since when")
  .option("--json", "print as JSON")
  .action((options) => runCommand(() => import("./commands/locks.js"), options));

program
  .command("targets")
  .description("list the built-in inventory profiles for --target")
  .option("--json", "print as JSON")
  .action((options) => runCommand(() => import("./commands/targets.js"), options));

program
  .command("presets")
  .description("list the built-in device-map presets")
  .option("--json", "print as JSON")
  .action((options) => runCommand(() => import("./commands/presets.js"), options));

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version end here with code 0; bad flags with commander's 1, which we map to 2.
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else {
    throw e;
  }
}
