/**
 * Every code gpuplan prints, in one table: who must act, a title, what it means, what to do and
 * how the command ends. Problem.code and the errors' codes are typed by this table's keys, so a
 * code cannot be printed without an entry here; `gpuplan explain CODE` and the reference docs read
 * it too. A code is stable once released: tools match on it, never on the message.
 */
import { EXIT } from "./exit-codes.js";

/** Who can make the problem go away (STYLE.md §3). */
type Actor = "user" | "vendor" | "bug";

/**
 * How the code is reported: as an `error` or a `warning` about an input file (compile, run's
 * checks), or as a `failure` that stops the command before it could do its job.
 */
type CodeKind = "error" | "warning" | "error or warning" | "failure";

export interface CodeEntry {
  readonly actor: Actor;
  readonly kind: CodeKind;
  /** One line, no final full stop. */
  readonly title: string;
  /** A paragraph: what happened and why gpuplan refuses or warns. */
  readonly explanation: string;
  /** What to do, when the fix is always the same (messages carry case-specific hints). */
  readonly hint?: string;
  /** The exit status of the command that reports it (a warning: 0, or 1 with `--strict`). */
  readonly exit: (typeof EXIT)[keyof typeof EXIT];
}

const problem = (
  kind: "error" | "warning" | "error or warning",
  title: string,
  explanation: string,
  hint?: string,
  actor: Actor = "user",
): CodeEntry => ({
  actor,
  kind,
  title,
  explanation,
  ...(hint !== undefined && { hint }),
  exit: kind === "warning" ? EXIT.ok : EXIT.problems,
});

const failure = (
  actor: Actor,
  title: string,
  explanation: string,
  hint?: string,
  exit: CodeEntry["exit"] = EXIT.usage,
): CodeEntry => ({
  actor,
  kind: "failure",
  title,
  explanation,
  ...(hint !== undefined && { hint }),
  exit,
});

export const CODES = {
  // ── Reading a file ──────────────────────────────────────────────────────────────────────────
  "syntax-error": problem(
    "error",
    "The file is not valid YAML or JSON",
    "The parser stopped at the marked position. Pipeline files, inventories and plans are YAML (JSON is YAML too); nothing after the error was checked.",
    "fix the marked line; an unclosed quote or bracket often shows up a few lines later",
  ),
  "duplicate-key": problem(
    "error",
    "A key appears twice in one mapping",
    "YAML keeps only one of two equal keys in a mapping, so one of the values would be silently lost. gpuplan refuses the file instead of guessing which one you meant, and names every duplicate at once (up to 100), each with where its key first appears.",
    "remove or rename one of the keys",
  ),
  "multiple-documents": problem(
    "error",
    "More than one YAML document in the file",
    "A `---` line starts a second YAML document. One file holds one pipeline (or one inventory), so a second document is a mistake, usually two files pasted together.",
    "remove the `---` separator, or split the file",
  ),
  "empty-file": problem(
    "error",
    "The file is empty",
    "The file has no content (or only comments), so there is nothing to check.",
  ),
  "schema-unknown-property": problem(
    "error",
    "A key the format does not have",
    "The key is not part of the file format at this place. A typo is the usual cause; the message suggests the nearest known key. Unknown keys are errors, not warnings, so a misspelt setting never silently falls back to its default.",
  ),
  "schema-missing-property": problem(
    "error",
    "A required key is missing",
    "The format requires this key at the marked place. The message names the key.",
  ),
  "schema-wrong-type": problem(
    "error",
    "A value of the wrong type",
    "The value has the wrong type for its key: for example a string where a number or a list is expected.",
  ),
  "schema-invalid-value": problem(
    "error",
    "A value outside the allowed set or format",
    "The value has the right type but is not allowed: not one of the listed choices, out of range, or not in the expected format (a size such as `12GiB`, a duration such as `30s`).",
  ),
  "alias-expansion": problem(
    "error",
    "YAML aliases that would repeat too much, or forever",
    'YAML aliases (*name) repeat a node defined elsewhere; nested, a few lines can stand for billions of nodes (a "billion laughs"), and an alias inside the node it names never ends. gpuplan counts what aliases repeat and stops at 100,000 nodes or 10,000,000 characters of text (one alias of a long string repeats all of it), before building them.',
    "write the repeated part out, or use a matrix",
  ),
  "merge-key": problem(
    "error",
    "A YAML merge key (`<<`), which gpuplan does not read",
    "Merge keys (`<<: *defaults`) belong to YAML 1.1. gpuplan reads YAML 1.2, which has none: `<<` would be a key of its own and the keys it names would be missing, so the file would not mean what it says. gpuplan says so at each `<<` instead of reporting an unknown property `<<` and the keys that seem to be missing.",
    "write the keys out; settings every step shares go under `defaults:`, and an alias (`*name`) repeats a whole value",
  ),
  "collection-key": problem(
    "error",
    "A YAML list or mapping used as a mapping key",
    "YAML lets a sequence or a mapping be a key (`? [a, b]`, `{[a, b]: 1}`, an alias of a list used as a key). Every key gpuplan reads is a name, and its YAML reader would turn such a key into text the file never wrote (`a,b`, `[object Object]`), so a device-map override or an `env` entry would be named what nobody typed. gpuplan says so at the key instead.",
    "write the key as a name; quote it if it holds brackets, braces or commas",
  ),
  "too-many-pipelines": problem(
    "error",
    "The matrices expand past `limits.max_pipelines`",
    "Matrix pipelines are counted before they are expanded, so a matrix of a few lines cannot make millions of pipelines and exhaust the memory. The limit (100,000 by default, or the number the file writes out if that is more) can be raised in the file.",
    "shrink the matrix, or raise `limits.max_pipelines`",
  ),
  "too-many-steps": problem(
    "error",
    "The matrices expand past `limits.max_steps`",
    "The steps of all expanded pipelines are counted before expanding; the limit (100,000 by default, or the number the file writes out if that is more) can be raised in the file.",
    "shrink the matrix, or raise `limits.max_steps`",
  ),
  "argument-too-long": problem(
    "error",
    "A step would be started with a string longer than Linux passes to a program",
    "Linux refuses to start a program (execve fails with E2BIG) when one of its arguments or environment strings is longer than 131,072 bytes. A step is started with its run words as arguments (joined into one for `shell: true`), its env as `NAME=value` strings, and its pipeline name and id as `GPUPLAN_PIPELINE=` and `GPUPLAN_STEP=`: one longer than that, often from a long matrix value, makes a plan whose step can never start. Compile refuses it at the key it comes from.",
    "shorten the text or the matrix value put into it; pass long data to the step in a file",
  ),
  "arguments-too-large": problem(
    "warning",
    "A step's own arguments and environment come to more than 1 MiB",
    "Linux refuses to start a program whose arguments and environment together pass a quarter of the stack limit (ARG_MAX: 2 MiB with the default 8 MiB stack), the environment gpuplan runs in included. A step whose own run words and env already take more than half of that may fail to start with E2BIG on a machine with a smaller limit or a larger environment.",
    "pass long data to the step in a file",
  ),
  "too-much-expanded-text": problem(
    "error",
    "The matrices expand to more than 200 MB of text",
    "Matrix values are put into every `{var}` of every expansion, so a long value in a placeholder written many times, or in a matrix of many pipelines, makes far more text than the file holds: a 400 kB file can ask for gigabytes. gpuplan adds up the text the expansions would hold (names, commands, env and cwd values, the matrix values the plan records) from the values' lengths before expanding, and refuses past 200 MB, ten times what a plan of 20,000 pipelines of 10 steps holds.",
    "shorten the matrix values or the text they are put into, or split the file",
  ),
  "too-many-gpus": problem(
    "error",
    "An inventory with more GPUs than one machine has",
    "An inventory describes one machine; GPU counts that add up to more than 1024 are a mistake (or an attempt to make compile work forever).",
    "list each kind of GPU once with its real count",
  ),
  "not-a-text-file": problem(
    "error",
    "A file that is not UTF-8 text",
    "Pipeline, inventory and plan files are UTF-8 text (YAML or JSON). A NUL byte means a binary file (or UTF-16); bytes that are not UTF-8 (Latin-1, Windows-1252) would change silently into U+FFFD, so they are refused where they first occur.",
    "save the file as UTF-8",
  ),
  "yaml-version": problem(
    "warning",
    "A `%YAML` directive for a version other than the YAML 1.2 gpuplan reads",
    "gpuplan reads every file as YAML 1.2 (the core schema), whatever its `%YAML` directive says. Under `%YAML 1.1` an author means plain yes/no/on/off as true/false, 0777 as octal 511 and 1:30 as 90; YAML 1.2 reads them as the text `yes`, the number 777 and the text `1:30`. Where a setting wants a true/false or a size, such text is an error of its own; where text is wanted (a command's arguments, an env value) or a number has a leading zero, the value is silently another. The directive is located so the file can be checked and the line changed. A later 1.x version is read as 1.2 too, as YAML 1.2 asks.",
    "check such values, then write `%YAML 1.2` or remove the line",
  ),
  "nul-byte": problem(
    "error",
    "A NUL byte where a command, environment or path would be cut short",
    'A process\'s arguments, environment and working directory are C strings that end at the first NUL byte, so a value with one (YAML writes it as "\\0" in double quotes) would silently run as something shorter. Pipeline names are refused too: they name log files.',
    "remove the \\0; write \\\\0 for a backslash and a zero",
  ),
  "lone-surrogate": problem(
    "error",
    "A lone UTF-16 surrogate where a command, environment or path would get U+FFFD",
    'YAML and JSON can write half of a character as an escape ("\\ud800" in double quotes). Node hands a process its arguments, environment and working directory as UTF-8, which has no bytes for half a character, so it puts U+FFFD (�) in its place and the step would silently get other text than the file says. Pipeline names are refused too: they reach steps as GPUPLAN_PIPELINE.',
    "write the character itself, or both halves of its surrogate pair; write \\\\ud800 for a backslash and the letters",
  ),
  "env-sets-devices": problem(
    "error",
    "A step's env chooses its GPUs",
    "gpuplan sets CUDA_VISIBLE_DEVICES (ROCR_VISIBLE_DEVICES on AMD) for every step to the GPUs bound to its pipeline, and takes the slot lock on those; a step's own env wins over what gpuplan sets, so one that names CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or GPU_DEVICE_ORDINAL would reach GPUs it holds no slot on (a CPU step given `0` would use GPU 0), and its indices name other cards on another machine or after binding. compile refuses it, and `run` a plan that has one.",
    "remove the variable from the env; ask for more GPUs with `gpus: N`",
  ),
  "oom-ladder-order": problem(
    "error",
    "An on_oom ladder that goes on after the CPU",
    "Each rung of an `on_oom` ladder is one more attempt, in order; `cpu` runs the step on the CPU, and a GPU rung after it would never be reached the way it reads.",
    "make `cpu` the last rung",
  ),
  "size-out-of-range": problem(
    "error",
    "A size too large to count in bytes",
    "gpuplan counts memory in bytes as exact integers; a size of 8 PiB or more cannot be counted exactly and is certainly a mistake. A GPU's `memory` in a short-form inventory is bounded at 1 PiB, as a detected inventory's `memoryBytes` is.",
    "sizes must stay below 8 PiB",
  ),
  "duration-out-of-range": problem(
    "error",
    "A duration longer than gpuplan can hold",
    "Durations in a pipeline file are at most 365 days: estimates add up to makespans and bounds, and a value like 1e300 would overflow them into a plan `run` refuses. Timers (a step's `timeout`, a worker's `ready_timeout`, an on_oom `wait`, a keep_warm `ttl`) have the same bound: past Node's ~24.8 days they wait in steps.",
    "give a shorter duration (at most 365d)",
  ),
  "deprecated-key": problem(
    "warning",
    "A key under its old name",
    'The key was renamed; the old name is still read the same way for now, unless the new one is set too, which wins. `registry.workers` is now `registry.max_parallel_pipelines` ("worker" names the warm model process).',
    "rename the key as the message says",
  ),
  // ── Pipeline rules ──────────────────────────────────────────────────────────────────────────
  "unknown-memory-type": problem(
    "error",
    "Not a memory type gpuplan knows",
    "A step's `memory.input` or `memory.output` names the array library whose memory the data lives in. gpuplan knows numpy, cupy, torch, tensorflow, jax and pyclesperanto (case-sensitive); from them it decides whether a step is a GPU step and how data moves between steps.",
  ),
  "missing-memory-fraction": problem(
    "error",
    "`memory_strategy: custom` without `memory_fraction`",
    "The custom memory strategy uses the share of each GPU's memory you give in `memory_fraction`; without it there is no budget to plan with.",
    "add `memory_fraction: 0.8` (a share of each GPU's memory, 0.1 to 1.0)",
  ),
  "memory-fraction-without-custom": problem(
    "error",
    "`memory_fraction` with a strategy other than custom",
    "Only `memory_strategy: custom` reads `memory_fraction`; the other strategies have a fixed share. A fraction next to another strategy would be silently ignored, so it is an error.",
    "set `memory_strategy: custom`, or remove `memory_fraction`",
  ),
  "duplicate-step-id": problem(
    "error",
    "Two steps of a pipeline share an id",
    "Step ids name log files, journal entries and `needs` references, so they must be unique within a pipeline.",
    "give each step of a pipeline its own id",
  ),
  "unknown-need": problem(
    "error",
    "`needs` names no step of the pipeline",
    "A step can only wait for steps of its own pipeline. The message suggests the nearest step id.",
  ),
  "needs-self": problem("error", "A step needs itself", "A step that waits for itself could never start."),
  "needs-cycle": problem(
    "error",
    "Steps need each other in a cycle",
    "The `needs` of some steps form a cycle (the message shows it), so none of them could ever start.",
    "remove one of the `needs` in the cycle",
  ),
  "run-string-without-shell": problem(
    "error",
    "`run` is a string but `shell` is not true",
    "A string command would have to be split into words, and gpuplan does not guess how. Give `run` as an argv list, which runs without a shell, or set `shell: true` to hand the string to /bin/sh.",
  ),
  "shell-with-argv": problem(
    "error",
    "`shell: true` with a multi-word argv",
    "With `shell: true` the command is one string for /bin/sh; a list of several words would be joined in a way that is easy to get wrong.",
    "with `shell: true` give `run` as one string; or drop `shell`",
  ),
  "worker-key-format": problem(
    "error",
    "A worker key with characters other than letters, digits and `_ . : @ + -`",
    "Worker keys name warm model processes in lock files and events, so they are kept to a safe set of characters.",
    "use a model name such as `cellpose-cyto3`",
  ),
  "worker-command-placeholder": problem(
    "error",
    "A matrix placeholder in a worker's own command, which is not substituted",
    "A worker's `run` starts the one process that every pipeline of the matrix shares, so it is not matrix-substituted: a `{var}` naming a matrix variable there would reach the worker as those characters.",
    "pass per-pipeline values in the task (the step's own `run` words arrive as args.argv, the matrix values as args.matrix)",
  ),
  "worker-key-conflict": problem(
    "error",
    "One worker key names two different worker commands",
    "A worker key is one model process that steps share. Two steps that give the same key with different commands would get each other's process.",
    "give the other worker its own `key`",
  ),
  "worker-launch-differs": problem(
    "warning",
    "Steps sharing a worker key start it with different `cwd` or `env`",
    "A warm worker runs as it was started: its command, `cwd` and `env`. Steps that share a worker key but differ in these (after matrix expansion, in any pipeline of the file) cannot share its process, so the run stops the worker and starts it again, loading its model again, whenever a task's step differs from the one it was started for — a `{plate}` in the worker step's `env` restarts it for every plate. The run stays correct, only slower.",
    "pass per-task values in the task input instead (the step's `run` words reach the worker as `args.argv`, matrix values as `args.matrix`), or give the steps distinct worker keys",
  ),
  "worker-ready-timeout-zero": problem(
    "error",
    "`worker.ready_timeout` is 0",
    "The ready timeout is how long a warm worker may take to load its model; with 0 no worker could ever become ready.",
    "give the model's load time with room to spare, e.g. `ready_timeout: 2m`",
  ),
  "worker-with-shell": problem(
    "warning",
    "`shell` on a worker step",
    "Worker processes are started without a shell, so `shell` has no effect on a worker step.",
    "remove `shell`",
  ),
  "exclusive-worker-not-warm": problem(
    "warning",
    "`keep_warm` on an exclusive worker step",
    "An exclusive step holds every slot of its GPU. Kept warm, its worker would keep holding them, so it is stopped after its task whatever `keep_warm` says.",
    "remove `keep_warm`, or drop `exclusive` to keep the worker loaded",
  ),
  "unknown-matrix-variable": problem(
    "error",
    "`{var}` is not a matrix variable",
    "Placeholders in braces are replaced by the pipeline's matrix values; this one names no matrix variable of the pipeline.",
  ),
  "matrix-name-not-unique": problem(
    "error",
    "A matrix pipeline's name does not use a varying variable",
    "Each expansion of a matrix becomes its own pipeline, and pipelines are told apart by name, so the name must contain every variable that takes more than one value.",
  ),
  "duplicate-pipeline-name": problem(
    "error",
    "Two pipelines have the same name",
    'Pipeline names identify runs, logs and GPU slot holders, so each must be unique (after matrix expansion). Two combinations of one matrix can make the same name too: a value written twice, values that read the same as text (1 and "1", true and "true"), or placeholders that run together (`p-{a}{b}` with a: [1, 11] and b: [1, ""] makes `p-11` twice).',
    "make each pipeline name unique",
  ),
  "log-name-case": problem(
    "warning",
    "Two steps or pipelines whose log files differ only in case",
    "A step's output goes to `logs/<pipeline>@<step>.out.log` and `.err.log` in the run folder (a worker task's to `.log`). On a case-insensitive file system (macOS and Windows by default, SMB shares, some Docker bind mounts) names that differ only in case are one file, so steps `A` and `a` of a pipeline, or pipelines `P` and `p` (matrix expansions included) that share a step id, would write into each other's logs, and the view, the failure report and `gpuplan report` would show the other's lines; so would warm workers whose keys differ only in case (`logs/workers/<key>@<device>.log`). The warning is at the second name and names the first. What is compared is the file name gpuplan writes: a name with characters other than ASCII letters, digits and `_ . = + -` is written with a hash of the whole name, so names that differ beyond ASCII (`É` and `é`, `Straße` and `STRASSE`) never share a file.",
    "make the names differ in more than case",
  ),
  "host-roundtrip-conversion": problem(
    "error or warning",
    "A GPU-to-GPU hand-off through host memory",
    "Two steps hand data from one GPU library to another that cannot share memory through DLPack, so the data would be copied to host memory and back. That is an error unless the pipeline sets `allow_host_roundtrip: true`, which turns it into a warning.",
    "set `allow_host_roundtrip: true` to accept the copy, or convert inside one step",
  ),
  "gpu-host-bounce": problem(
    "warning",
    "Data leaves the GPU for a host step and comes back",
    "A host step between two GPU steps forces the data off the card and back on. If the host step can work on GPU arrays, giving it a GPU memory type keeps the data on the card.",
  ),
  "missing-vram": problem(
    "warning",
    "A GPU step without a `vram` estimate",
    "Without a peak GPU memory estimate compile cannot budget the card and assumes the step fits one slot.",
    "add `vram: 8GiB` (the step's peak GPU memory)",
  ),
  "zero-vram": problem(
    "error",
    "A GPU step with `vram: 0`",
    "A GPU step's `vram` is its peak GPU memory, and its budget follows from it: 0 bytes would give it nothing to hold on its GPU, and the frameworks read a limit of 0 their own ways (CuPy as no limit at all, JAX as no memory).",
    "give the step's peak GPU memory (`vram: 8GiB`), or leave `vram` out to assume it fits one slot",
  ),
  "vram-on-cpu-step": problem(
    "warning",
    "`vram` on a step with only host memory types",
    "The step's memory types are all host libraries, so it runs on the CPU and its `vram` is never used.",
  ),
  "exclusive-on-cpu-step": problem(
    "warning",
    "`exclusive` on a step with only host memory types",
    "`exclusive` takes every slot of a GPU, but the step's memory types are all host libraries, so it runs on the CPU and `exclusive` is never used.",
  ),
  "device-map-on-cpu-step": problem(
    "error",
    "`device_map` on a step with only host memory types",
    "A device map places model components on GPUs, but the step's memory types are all host libraries, so it has no GPU.",
  ),
  "gpus-without-gpu-steps": problem(
    "warning",
    "`gpus: N` on a pipeline with no GPU step",
    "The pipeline asks for GPUs, but none of its steps uses GPU memory, so the GPUs would sit idle.",
  ),
  // ── Compiling against an inventory ──────────────────────────────────────────────────────────
  "not-an-inventory": problem(
    "error",
    "An inventory file is another kind of file",
    "--inventory, and each file in .gpuplan/targets/ (or --targets-dir), must be an inventory: what `gpuplan detect --save FILE` writes (schema gpuplan/inventory@1) or the short form. A plan, a pipeline file or another gpuplan file there is said as that, once, instead of as a dozen schema problems; an inventory of a later format names the format.",
    "save the machine's inventory with gpuplan detect --save FILE, or write the short form",
  ),
  "no-gpus": problem(
    "warning",
    "The file has GPU steps but the inventory has no usable GPU",
    "Every pipeline runs on the CPU: the inventory lists no GPU, or none of a backend in `platform_priority`. A file of CPU steps only is not warned about.",
    "to plan for a machine with GPUs: gpuplan compile FILE --target NAME (or --inventory FILE)",
  ),
  "gpu-not-addressable": problem(
    "error or warning",
    "A GPU cannot be shown to a step alone",
    "gpuplan shows a step its GPU through CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES, by the GPU's UUID, or by its index where the UUID is unknown and the index is sure to be the runtime's (NVIDIA: CUDA lists the cards NVML does; AMD: HIP listed the GPU). A GPU with neither — a Radeon whose ROCm SMI gives no unique id without HIP installed, an NVIDIA card whose UUID NVML did not give and CUDA did not see, a MIG instance without a UUID — would leave its steps seeing no GPU at all. Compile leaves it out of the plan (a warning); a run refuses to bind a plan's GPU to it (an error).",
    "install HIP (AMD) or check the driver (NVIDIA: nvidia-smi -L); gpuplan detect shows each GPU's UUID and indices",
  ),
  "no-usable-gpu": problem(
    "error",
    "A GPU step has no GPU to run on",
    "No GPU of the inventory meets the step's needs: there is none, none meets its requirements, or none has the memory it asks for. For a pipeline on several GPUs (`gpus: N`), fewer than N GPUs of one backend can hold it (a MIG instance never can: a CUDA process can use only one): reported once, at `gpus`, naming the GPUs that can and why each other one cannot.",
    "let the step run on the CPU with `on_oom: { fallback: cpu }`, or compile against a bigger inventory",
  ),
  "gpu-fallback-cpu": problem(
    "warning",
    "A pipeline runs on the CPU because its GPU steps allow it",
    "No GPU fits the pipeline, and its GPU steps allow a CPU fallback, so the whole pipeline is planned on the CPU.",
  ),
  "duplicate-gpu": problem(
    "error",
    "An inventory lists one GPU id or UUID twice",
    "Each GPU must appear once in an inventory; a GPU listed twice would be planned twice.",
    "regenerate the file with gpuplan detect --save FILE",
  ),
  "zero-gpu-memory": problem(
    "error",
    "A short-form GPU entry with `memory: 0`",
    "In the short form a person declares each card's memory, and every budget compile gives a GPU is a share of it: a card of 0 bytes could hold nothing. (A detected inventory's `memoryBytes: 0` means unknown; the short form has no unknown.)",
    "give the card's memory (`memory: 80GiB`)",
  ),
  "uuids-not-count": problem(
    "error",
    "A short-form GPU entry whose `uuids` list is not `count` long",
    "In the short form, `uuids` names each of an entry's `count` cards: a list shorter or longer than `count` leaves cards unnamed or names cards that are not there.",
    "give one UUID per card, or leave `uuids` out for stable synthetic ones",
  ),
  "unknown-device-map-preset": problem(
    "error",
    "An unknown device-map preset",
    "The preset is not one of the built-in presets (see `gpuplan presets`); the message suggests the nearest.",
  ),
  "device-map-gpu-out-of-range": problem(
    "error",
    "`cuda:N` beyond the pipeline's GPUs",
    "cuda:N in a device map counts the pipeline's own GPUs from 0; this placement names one the pipeline does not have.",
    "give the pipeline more GPUs (`gpus: N`) or place the component elsewhere",
  ),
  "device-map-invalid-target": problem(
    "error",
    "A placement that is not cuda:N, gpu:N, cpu or disk",
    "Device-map placements are cuda:N or gpu:N (the pipeline's N-th GPU), cpu or disk.",
  ),
  "device-map-invalid-size": problem(
    "error",
    "A component size that is not a size",
    "Component sizes are bytes or a number with a unit: 5GiB, 300MiB, 16GB.",
  ),
  "device-map-does-not-fit": problem(
    "error",
    "Components fit neither the GPUs nor the CPU",
    "The automatic device map ran out of room on the GPUs and in CPU memory, and spilling to disk is not allowed.",
    "set `allow_disk: true`, give the step a bigger memory budget, or lower `reserve`",
  ),
  "device-map-over-budget": problem(
    "error",
    "Components fixed on a GPU exceed its room",
    "The components you placed on one device add up to more than the step may use there.",
    "move a component with overrides, lower `reserve`, or give the step more memory",
  ),
  "device-map-spills-to-cpu": problem(
    "warning",
    "An automatic map put components on the CPU",
    "Some components did not fit on the GPUs and were offloaded to CPU memory, where they run much slower.",
  ),
  "device-map-spills-to-disk": problem(
    "warning",
    "An automatic map put components on disk",
    "Some components fit neither on the GPUs nor in CPU memory and were offloaded to disk, where they run much slower still.",
  ),
  "device-map-on-cpu": problem(
    "warning",
    "The step runs on the CPU, so its GPU placements become cpu",
    "The pipeline was planned on the CPU, so every component the device map puts on a GPU goes to cpu instead.",
  ),
  "device-map-option-unused": problem(
    "warning",
    "`strategy`, `reserve` or `allow_disk` without `components`",
    "These options shape an automatic map of listed components; without `components` they have no effect.",
  ),
  "device-map-empty": problem(
    "warning",
    "A device map that places nothing",
    "The device map names no preset, no components and no overrides.",
  ),
  "stale-plan": problem(
    "error",
    "`--check`: the plan is not what compile writes now",
    "The committed plan differs from what compiling the pipeline now gives (the message says what changed), so CI should not trust it.",
    "recompile the plan with -o and commit it",
  ),
  // ── Learning from earlier runs (compile --history) ──────────────────────────────────────────
  "history-estimate-off": problem(
    "warning",
    "A step's estimate was off by more than 2× in earlier runs",
    "With `--history`, compile replaces a step's `estimate` by the median duration of its ok attempts in the runs it learns from. When that median is more than twice the file's estimate, or less than half of it, the file misleads every compile without `--history` (and `gpuplan run FILE`), so compile says so at the estimate. `--strict` makes it an error.",
    "set the step's `estimate` to the measured value the message gives",
  ),
  "history-vram-over-budget": problem(
    "warning",
    "A step held more VRAM than its budget in an earlier run",
    "The step's attempts held more GPU memory at their peak (gpu.step.end peakVramBytes, from per-process readings) than its `vram` (or, without one, its share of the GPU's budget). With `--history` compile plans with the peak plus 10% headroom, and the message says what that changes: a GPU's slot count, or the GPU a pipeline runs on. `--strict` makes it an error.",
    "set the step's `vram` to the value the message gives",
  ),
  "history-unreadable-run": problem(
    "error",
    "A run named by `--history` cannot be learned from",
    "The folder is not a run folder `gpuplan run` wrote, or its plan.json is missing or damaged; without the plan a run's pipelines cannot be matched to the pipeline file's templates.",
    "name run folders from `gpuplan runs`, or use `--history auto`",
  ),
  "history-damaged-run": problem(
    "warning",
    "Part of a run's record could not be read",
    "A line of events.jsonl is not a run event (a torn write, an edit by hand) or the journal is missing; compile learns from the rest of the run and says where the damage is.",
  ),
  // ── Running a plan ──────────────────────────────────────────────────────────────────────────
  "invalid-plan": problem(
    "error",
    "The file is not a gpuplan plan",
    "`gpuplan run` takes a plan written by `gpuplan compile` (schema gpuplan/plan@2, or @1 from an earlier gpuplan), or a pipeline file that it compiles in memory. This file is JSON but not a valid plan.",
    "make one with gpuplan compile PIPELINE.yaml -o plan.json",
  ),
  "plan-too-new": problem(
    "error",
    "The plan is in a format a newer gpuplan writes",
    "Plans say their format (`schema: gpuplan/plan@N`) and the gpuplan that wrote them. A plan in a later format than this gpuplan reads is refused before anything starts, naming the gpuplan that made it.",
    "run it with that gpuplan, or compile the pipeline again with this one",
  ),
  "plan-too-large": problem(
    "error",
    "The plan is larger than gpuplan writes or reads",
    "A run holds its whole plan in memory, and a dry run its description too, about 24 times the plan file's size. compile refuses to write a plan of more than 128 MiB, and run refuses to read one (said before it is parsed, where Node would otherwise end with a fatal out-of-memory error), or a smaller one when Node's heap limit (a quarter of a small machine's memory) would not hold it.",
    "split the pipelines over several pipeline files and compile a plan of each; for a plan refused by the heap limit, NODE_OPTIONS=--max-old-space-size=MiB raises it",
  ),
  "plan-truncated": problem(
    "error",
    "The plan file is cut short",
    "The file starts as a JSON plan but ends before its closing brace: a copy, a download or a write that did not finish. Nothing is started.",
    "copy the plan again, or write it again with gpuplan compile",
  ),
  "plan-inconsistent": problem(
    "error",
    "The plan breaks its own invariants",
    "A plan that passes the schema must still be one compile could have written: at least one pipeline, unique pipeline names, each GPU in the registry once, every GPU a pipeline or step uses in the registry, device maps that place components only on cpu, disk or the step's pipeline's GPUs, no MIG instance among a pipeline's several GPUs, budgets no larger than their GPU, and no more slots per GPU than the slot lock gives (1024). A hand edit that breaks one is refused, located, before anything starts.",
    "compile the plan again",
  ),
  "plan-unknown-gpu": problem(
    "error",
    "A pipeline names a GPU the plan's registry lacks",
    "The plan is inconsistent, most likely edited by hand or damaged.",
    "recompile the plan",
  ),
  "gpu-missing": problem(
    "error",
    "A GPU of the plan has nothing on this machine to bind to",
    "Before a run, each plan GPU is bound to a live one: the planned UUID when it is here, else (unless --bind exact) a free GPU of the same backend, model, MIG profile, compute capability and memory. When too few GPUs of a kind are visible — another kind of machine, a changed CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, a GPU that fell off the bus — nothing starts, and the message says how many of which model the plan needs and what the machine has. gpuplan never runs a plan on a card it was not made for.",
    "plan for this machine (gpuplan compile PIPELINE -o PLAN), or check the *_VISIBLE_DEVICES variables in this shell",
  ),
  "gpu-probe-timeout": problem(
    "error",
    "The GPU driver did not answer in time while the plan was checked",
    "Before a run, gpuplan detects the GPUs to check that the plan's cards are still here. A vendor library call (nvmlInit, cuInit…) did not return within the detection time limit and the probe was killed, so the plan's GPUs could not be seen. The machine may well be unchanged: the driver is busy, wedged, or still loading (persistence mode off). The message names the call that hung.",
    "try again; if it keeps happening, check the driver (does nvidia-smi answer?) and see gpuplan detect",
  ),
  "gpu-budget-no-longer-fits": problem(
    "error",
    "A GPU's memory no longer holds the plan's budget",
    "The GPU now reports less memory than the plan budgeted on it (a MIG change, a different card with the same UUID slot, or a driver reporting less).",
    "recompile the plan on this machine",
  ),
  "gpu-busy": failure(
    "user",
    "A GPU slot is busy and `--no-wait` was given",
    "Another gpuplan holds a slot this run needs. With `--no-wait` the run ends with exit 75 instead of waiting; `gpuplan locks` shows who holds what. A `--lock-timeout` that runs out is not this: the waiting pipeline's step ends with status lock-timeout, a failure naming the holders, while the rest of the run goes on; the run then exits 1.",
    "wait, or run without --no-wait to queue",
    EXIT.busy,
  ),
  "unknown-run": failure(
    "user",
    "`--resume`, `report`: no such run",
    "Runs live in `.gpuplan/runs/<id>/` of the folder `gpuplan run` was started in; `--resume` and `gpuplan report` take an id from there, or the path of a run folder (a file or a device given instead, `--resume /dev/zero`, is said to be no run folder). `gpuplan report` and `--resume` also refuse a folder with none of a run's files (journal.jsonl, plan.json, events.jsonl) — the runs folder itself, `.`, any other folder — rather than draw an empty page of 0 steps, or call a folder no gpuplan ran a damaged run (and leave a run.lock in it).",
  ),
  "damaged-run": failure(
    "user",
    "`--resume`: a file of the run folder is damaged",
    "The run folder's journal.jsonl or plan.json is not what gpuplan wrote: missing, not a regular file (a directory, a FIFO) — its run.lock too, which must be a regular file if it is there — a journal line that is not a journal entry (not JSON, `null`, without its fields, an attempt that is not a whole number from 0 to 1000000) or a plan that is not JSON; for a Slurm run, also slurm/jobs.json, the record of its submitted job arrays, which `gpuplan status` reads too (one naming an array of no task or of more than 1,000, or more than 100,000 arrays, is not one gpuplan wrote), and its slurm/ folder itself (a file, a FIFO or a symbolic link standing there: the run's Slurm records cannot be read, and it is not taken for a local run). The message names the file and, for the journal, the line. Only a torn last journal line — gpuplan killed in the middle of writing it — is expected: it was never acknowledged, and a resume goes on without it.",
    "restore the file, or start a new run without --resume",
  ),
  "run-in-use": failure(
    "user",
    "`--resume`: another gpuplan is running this run",
    "One gpuplan runs a run folder at a time: it holds `run.lock` in the folder (an flock, dropped by the kernel when that gpuplan ends, even by kill -9) from its start, or for a resume from before it reads the journal, to its end. Two at once would start the same steps twice and interleave their journals. The message names the holder's pid.",
    "wait for the other gpuplan to end, or stop it, then resume",
  ),
  "resume-plan-changed": failure(
    "user",
    "`--resume`: the run was started from a different plan",
    "A run can only be resumed with the plan it started with, or steps that completed would be skipped for a different pipeline. A file given with `--resume` is read as `gpuplan run` reads it — a plan, or a pipeline file compiled against this machine — and must make that same plan: a pipeline file edited since the run started is refused, not ignored. `--resume RUN` alone runs the plan the run keeps as plan.json, and only while that file is the one the run started with: the journal's header records its SHA-256 when the run starts, and a plan.json edited, replaced or truncated since is refused too (the message names it, with both digests' first digits).",
    "resume without the file (the run keeps its plan as plan.json), restore the run's plan.json, or start a new run",
  ),
  "resume-plan-unverified": problem(
    "warning",
    "`--resume`: the run's plan.json could not be checked",
    "The run folder was made by a gpuplan that recorded no digest of its plan in the journal (older versions, the folders older exported sbatch scripts made, and those made on a node without sha256sum): plan.json is resumed as it is now. Were it changed since the run started, its steps would run as if the old plan's had finished; newer runs refuse that (`resume-plan-changed`).",
    "make sure plan.json is still the plan the run started with",
  ),
  "records-incomplete": failure(
    "user",
    "The run could not write all of its records",
    "A write to the run's journal, events or a log gpuplan writes itself (a warm worker's or a worker task's; or the `--events` file) failed — a full disk, a quota, a removed folder, a journal or events file deleted while the run ran (its writes went into a file no name leads to; a deleted journal leaves nothing to resume), a directory or symbolic link in a log's place, or a FIFO or device given as `--events` whose reader went away (EPIPE) or never opened it, or that the run stopped waiting for (Ctrl-C while the end waited for a slow reader; a slow reader is otherwise waited for and loses nothing). gpuplan never stops the steps for it: each file's first failure is reported as a warning when it happens and the run goes on. Journal entries the disk refused are kept and written with the next entry or at the end, once there is space; events that could not be written are lost. At the end, a run that lost anything says which files and exits 2 (an interrupted run still exits 130, 143, 129 or 131).",
    "free some space (df -h), or see to the files named; what the journal recorded is never run again by --resume",
  ),
  "unknown-pipeline": failure(
    "user",
    "`--pipeline` names no pipeline of the plan (or, with `--resume`, of the run)",
    "The plan has no pipeline by this name; the message suggests the nearest. With `--resume`, only pipelines the run was started with can be named: another would run under the run's id and count as part of it.",
  ),
  // ── Slurm: reading the cluster, exporting a plan ─────────────────────────────────────────────
  "slurm-not-found": failure(
    "user",
    "Slurm's client commands are not on PATH",
    "`gpuplan detect --slurm` reads the cluster with sinfo and scontrol; they are not on this machine's PATH.",
    "run gpuplan where Slurm's client commands work (a login node; `module load slurm` on some clusters)",
  ),
  "slurm-timeout": failure(
    "vendor",
    "A Slurm command did not answer in time",
    "A Slurm client command (sinfo, scontrol, squeue, sbatch) did not answer within its time limit (detect --slurm's --timeout); slurmctld may be down, overloaded or unreachable from here. `gpuplan status` and `--resume` of a Slurm run stop rather than guess which tasks are still queued or running.",
    "try `scontrol ping`, or raise --timeout",
  ),
  "slurm-output-too-large": failure(
    "vendor",
    "A Slurm command printed more than gpuplan reads",
    "gpuplan reads a bounded amount of a Slurm command's output, so a huge cluster (or a runaway command) cannot exhaust its memory. `gpuplan status` and `--resume` of a Slurm run stop rather than guess which tasks are still queued or running.",
    "narrow it with --partition",
  ),
  "slurm-command-failed": failure(
    "vendor",
    "A Slurm command failed",
    "A Slurm client command (sinfo, scontrol, squeue, sbatch) exited with an error, or sbatch said nothing gpuplan could read as a job id; the message keeps the command and the last lines it printed, escaped. `gpuplan status` and `--resume` of a Slurm run stop when squeue fails rather than take its silence as the tasks having ended: a resume would submit tasks that are still queued a second time. So does a resume of a run gpuplan was stopped in while it submitted it (kill -9 between an sbatch and the record of its job id), where squeue cannot say whether an array of the run's own scripts is queued: the message names the scripts sbatch was called for and the `squeue … | grep` to look for it by hand.",
  ),
  "slurm-untrusted-value": problem(
    "error",
    "Slurm reported a value gpuplan cannot check",
    "gpuplan reads only values it can check (names, counts, sizes in their expected form); a node or partition with anything else is left out rather than guessed at.",
    "run `scontrol show node NAME` or `sinfo -s` to see what Slurm reports",
    "vendor",
  ),
  "slurm-ambiguous-output": problem(
    "error",
    "A node's scontrol line cannot be read unambiguously",
    "A key appears twice in one node's `scontrol show node -o` line, usually because a free-text value (OS, Reason) contains `Key=`; the node is left out.",
    "ask the cluster's admins to clear the text, or write the inventory by hand",
    "vendor",
  ),
  "slurm-no-nodes": problem(
    "warning",
    "No node gpuplan could read",
    "The cluster (or the --partition) has no node whose GPUs, CPUs and memory gpuplan could read.",
    "check `sinfo` and `scontrol show node`",
  ),
  "slurm-unknown-gpu-model": problem(
    "error",
    "A GRES type that names no GPU model gpuplan knows",
    "Slurm's GRES type (gpu:TYPE:N) is a site's own name; without a known model gpuplan cannot say how much memory the node type's GPUs have.",
    "name the model with --gpu-model TYPE=MODEL, or write the inventory by hand",
  ),
  "slurm-unknown-gres-type": problem(
    "warning",
    "No GRES type is known for a GPU model of the plan",
    "The export does not know what the cluster calls this GPU model, so its tasks ask for any GPU (--gres=gpu:N).",
    "name the cluster's type: --gres-type 'MODEL=TYPE' (gpuplan detect --slurm shows them)",
  ),
  "slurm-unsafe-path": problem(
    "error",
    "A path an #SBATCH line cannot carry",
    "sbatch reads #SBATCH lines without a shell's quoting, so paths with spaces, quotes, % and the like cannot be written into a script safely.",
    "export to, and run from, a folder whose path has only letters, digits and _ . / - + : @ , = ~",
  ),
  "slurm-unsafe-value": problem(
    "error",
    "A value an sbatch script cannot carry",
    "A GRES request or an executor.slurm setting holds characters that sbatch would split or expand.",
    "check --gres-type, the inventory's slurm.gres types and registry.executor.slurm",
  ),
  "slurm-node-type-unknown": problem(
    "warning",
    "The plan's inventory is not a node type gpuplan can read",
    "Without the node type's CPUs and memory, the tasks ask for 1 CPU and the cluster's default memory.",
    "pass the node type: --inventory NODE.json (gpuplan detect --slurm --save NODE.json), or --cpus-per-task and --mem",
  ),
  "slurm-inventory-mismatch": problem(
    "warning",
    "The plan was compiled against another inventory than --inventory",
    "The plan's memory budgets come from the inventory it was compiled against; on another node type they may not fit.",
    "recompile for the node type: gpuplan compile PIPELINE --inventory NODE.json -o PLAN",
  ),
  "slurm-mig": problem(
    "warning",
    "The plan uses MIG instances",
    "Slurm names MIG GRES types per site, so the export cannot guess which type to ask for.",
    "say which type to ask for: --gres-type 'MODEL=TYPE' (gpuplan detect --slurm lists the cluster's types)",
  ),
  "slurm-gpu-binding-failed": problem(
    "error",
    "A Slurm task cannot run its pipeline on the GPUs Slurm gave it",
    "With --bind-slurm-gpus (the scripts gpuplan writes pass it), a task's pipeline runs on the GPUs Slurm allocated (SLURM_STEP_GPUS / SLURM_JOB_GPUS, node-wide indices in PCI order); each must be the plan's GPU model with room for its memory budget. The message says which check failed.",
    "compile against the node type the tasks land on (gpuplan detect --slurm --save NODE.json) and ask for its GPU type (--gres-type)",
  ),
  "slurm-run-folder-not-shared": failure(
    "user",
    "The run folder is not shared with the Slurm nodes",
    "Every task of `gpuplan run --executor slurm` first writes a marker into the run folder's slurm/started/; the submitting gpuplan reads it (and the tasks' events and logs) from there. A task ran but its marker never showed up, so the nodes write somewhere the submitter cannot see. The arrays are cancelled.",
    "run gpuplan from a folder the compute nodes mount too (a shared home or project filesystem, not /tmp or a local disk)",
  ),
  "not-a-slurm-run": failure(
    "user",
    "The run did not run on Slurm",
    "`gpuplan status RUN` shows the runs of `gpuplan run --executor slurm`, whose run folder records the submitted job arrays (slurm/jobs.json); this run has none. The message says how it stands, as `gpuplan runs` lists it (ok, failed, interrupted, running…, with its step counts), and the hint names the `gpuplan report` command that shows it.",
    "gpuplan report RUN shows a local run; gpuplan runs lists every run",
  ),
  "slurm-run-active": failure(
    "user",
    "The Slurm run still has tasks queued or running",
    "`gpuplan run --resume RUN --executor slurm` submits again the pipelines that did not complete; while some of the run's tasks are still pending or running in Slurm, they would run twice. Where gpuplan was stopped in the middle of a submission (its journal has sbatch calls slurm/jobs.json may not account for), the resume first asks `squeue --user UID` for arrays whose batch script is one of the run's own, records those it finds in slurm/jobs.json and names them here.",
    "wait for them (gpuplan status RUN), or cancel them with scancel, then resume",
  ),
  "slurm-run-too-large": failure(
    "user",
    "The Slurm run's record of its jobs would grow past what gpuplan reads",
    "A Slurm run keeps each submitted array's job id and pipelines in slurm/jobs.json, appended to by every `--resume`, and reads it back for `gpuplan status`, the follower and the next resume. That reading refuses a record of more than 100,000 arrays, more tasks than 64 MiB holds, or more than 64 MiB, as damaged; a submission after which the record would be past those bounds is refused before sbatch (and its `--dry-run` says so, exiting 2), so no job is submitted that the run could not name.",
    "submit fewer pipelines per run (--pipeline NAME), or start a new run of the plan",
  ),
  "unknown-partition": failure(
    "user",
    "`--partition` names no partition you can submit to",
    "The cluster has no partition by this name that you may use; the message lists them and suggests the nearest.",
  ),
  "unknown-node-type": failure(
    "user",
    "`--node-type` names no node type of the cluster",
    "`gpuplan detect --slurm` groups the nodes into types (same GPUs, CPUs and memory); the message lists their names.",
  ),
  "ambiguous-node-type": failure(
    "user",
    "`--save` needs exactly one node type",
    "An inventory describes one kind of machine; with several node types, pick one with --node-type.",
  ),
  "unknown-gpu-model": failure(
    "user",
    "`--gpu-model` names no GPU model gpuplan knows",
    "--gpu-model maps a GRES type to one of the GPU models gpuplan knows the memory of; the message lists them.",
  ),
  "invalid-inventory": failure(
    "user",
    "The file given as an inventory is not one",
    "The file is not an inventory gpuplan reads (detect --save or detect --slurm --save output, or the short form); the message says what is wrong with it.",
  ),
  "output-not-empty": failure(
    "user",
    "The output folder is not empty",
    "`gpuplan export` writes a folder of scripts and refuses to mix them with files already there.",
    "give a new folder, or --force to write over the files gpuplan writes there",
  ),
  // ── The GPU slot lock ───────────────────────────────────────────────────────────────────────
  "lock-dir": failure(
    "user",
    "The GPU lock directory cannot be created or used",
    "Every gpuplan that shares GPUs uses one lock directory: --lock-dir or GPUPLAN_LOCK_DIR, else /var/lib/gpuplan/locks when `gpuplan locks init` set it up, else the user's own /tmp/gpuplan-locks-<uid>.",
    "set GPUPLAN_LOCK_DIR (or --lock-dir) to a directory you own",
  ),
  "lock-dir-untrusted": failure(
    "user",
    "The GPU lock directory is one another user could tamper with",
    "gpuplan uses a lock directory only when it is not a symlink, is owned by root or by you, and is not writable by other users unless it has the sticky bit, and only when every folder above it (symlinks followed to the real folders) passes the same test: otherwise another user could delete, replace or plant lock files, or swap the whole directory for hers, and make two steps share a GPU. The message names the folder, its owner and its mode.",
    "use a directory of your own (GPUPLAN_LOCK_DIR), or on a shared server ask an admin to run `sudo gpuplan locks init`",
  ),
  "lock-file": failure(
    "user",
    "A GPU lock file cannot be opened",
    "A GPU's lock file in the lock directory cannot be opened for reading and writing: in a shared directory (`gpuplan locks init`) only root creates them, so a GPU added since needs `locks init` again.",
    "run `sudo gpuplan locks init` again, or use a lock directory you own",
  ),
  "lock-file-untrusted": failure(
    "user",
    "A GPU lock file is owned by another user",
    "A lock file that is not owned by root or by you (or that has extra hard links) may have been planted by another user to break the lock; gpuplan does not use it.",
    "remove it (as its owner or root), or use another lock directory",
  ),
  "lock-file-not-regular": failure(
    "user",
    "A GPU lock file is not a regular file",
    "Something that is not a regular file (a directory, a FIFO, a device) sits where a lock file must be; gpuplan does not replace it.",
  ),
  "lock-unavailable": failure(
    "vendor",
    "The C library has no usable fcntl(2)",
    "The GPU slot lock is built on Linux open-file-description locks (fcntl F_OFD_SETLK) through the C library; loading it failed. The message keeps the loader's error.",
    "run on Linux with a standard libc",
  ),
  "lock-failed": failure(
    "vendor",
    "An fcntl(2) lock call failed on a GPU lock file",
    "The kernel refused a lock operation on a lock file; the message names the call and its errno. A kernel older than 3.15, or a network file system without lock support, is the usual cause.",
    "put the lock directory on a local file system (GPUPLAN_LOCK_DIR)",
  ),
  // ── Detection ───────────────────────────────────────────────────────────────────────────────
  "probe-error": failure(
    "vendor",
    "A vendor library probe failed",
    "`gpuplan detect` asks NVML, the CUDA driver, ROCm SMI / AMD SMI and HIP in a child process. One of them failed; detection goes on with the others (exit 0), and the inventory's `probes` keep the call and the vendor's error string.",
    "check the driver installation (nvidia-smi, rocm-smi), or point GPUPLAN_*_LIBRARY at a working library",
  ),
  "probe-timeout": failure(
    "vendor",
    "A vendor library probe did not answer in time",
    "A vendor library hung (a wedged driver, a GPU in a bad state); gpuplan gave up after --timeout, stopped the probe and went on without it (exit 0).",
    "check the GPUs with nvidia-smi or rocm-smi, or raise --timeout",
  ),
  // ── The command line and files ──────────────────────────────────────────────────────────────
  "unknown-command": failure(
    "user",
    "Not a gpuplan command",
    "The first word is not one of gpuplan's commands; the message suggests the nearest. `gpuplan --help` lists them.",
  ),
  "unknown-option": failure(
    "user",
    "An option the command does not have",
    "The command does not have this option; the message suggests the nearest. `gpuplan COMMAND --help` lists its options.",
  ),
  "missing-argument": failure(
    "user",
    "A required argument is missing",
    "The command needs an argument that was not given (for example the pipeline file of `compile`).",
  ),
  "too-many-arguments": failure(
    "user",
    "More arguments than the command takes",
    "The command was given more arguments than it takes; a forgotten option name before a value is the usual cause.",
  ),
  "option-missing-value": failure(
    "user",
    "An option without its value",
    "The option takes a value (for example `-o FILE`), but none followed it.",
  ),
  "invalid-option-value": failure(
    "user",
    "An option value that is not one of its choices",
    "The option takes one of a fixed set of values, listed in the message.",
  ),
  "conflicting-options": failure(
    "user",
    "Two options that cannot be used together",
    "The two options ask for different things, and gpuplan does not guess which one you meant.",
    "pick one",
  ),
  "invalid-duration": failure(
    "user",
    "Not a duration, or out of range",
    "Durations on the command line and in GPUPLAN_* variables are milliseconds or a number with a unit (ms, s, m, h, d): 250ms, 30s, 10m, 2h. They are bounded so that a timer can hold them: at most 24 days.",
    "e.g. 30s, 10m, 2h",
  ),
  "invalid-size": failure(
    "user",
    "Not a size, or out of range",
    "Sizes on the command line are bytes or a number with a unit: 512MiB, 12GiB, 16GB (GiB = 1024³ bytes, GB = 1000³).",
    "e.g. 800MiB, 12GiB",
  ),
  "unknown-target": failure(
    "user",
    "Not a built-in target",
    "`--target` names one of the built-in inventories (see `gpuplan targets`); the message suggests the nearest.",
    "see gpuplan targets",
  ),
  "ambiguous-target": failure(
    "user",
    "Two custom target files answer to one name",
    "`--target` matches a custom target's name ignoring case and Unicode form, so `ÉCOLE.yaml` and `école.yaml` (or `a.yaml` and `a.yml`) in one targets folder are one name. Which file a compile read would depend on the order the folder is listed in; gpuplan refuses the name instead and lists the files.",
    "keep one file for each target name: rename or remove the others",
  ),
  "unknown-code": failure(
    "user",
    "`gpuplan explain`: not a gpuplan code",
    "`gpuplan explain` takes a code that gpuplan prints in square brackets, such as `needs-cycle`; the message suggests the nearest.",
  ),
  "unreadable-file": failure(
    "user",
    "A file gpuplan was asked to read cannot be read",
    "The file does not exist, is a directory, or cannot be read by you; the message says which.",
  ),
  "unwritable-file": failure(
    "user",
    "A file gpuplan was asked to write cannot be written",
    "Output paths (`-o`, `--save`, `--events`) must name a file in an existing folder you can write: the message says whether the path is a directory (or ends in `/`, which names one), its folder is missing, a link on the way leads nowhere, the folder takes no new files (a virtual file system such as /proc), a file stands where a folder is needed, the folder is read-only, or the file itself is read-only for you (it is never replaced then). An existing non-regular file (a device, a FIFO) is written to, never replaced; a FIFO nobody opens for reading within 2 s is this error, not a wait for good; a symbolic link is followed. `--events` refuses a UNIX socket named by its path (gpuplan does not connect to sockets: connect it to stdout and give `/dev/stdout`) and a `/dev/fd/N` that gpuplan was not started with.",
  ),
  "working-folder-gone": failure(
    "user",
    "The current folder no longer exists",
    "gpuplan was started in a folder that has since been removed or moved away (another shell ran `rm -rf` on it, a checkout was deleted and made again, a temporary folder was cleaned up). The commands that read or write beside you — relative paths, .gpuplan/runs, .gpuplan/targets — cannot resolve anything there. A shell keeps showing the folder's name after it is gone.",
    'cd to a folder that exists (`cd "$PWD"` reaches a folder made again under the same name) and run the command again',
  ),
  "file-system-error": failure(
    "user",
    "The file system refused an operation",
    "An operation on a file or folder failed with an error of the system (no space left, too many open files, a read-only file system…). The message names the path and the system's error.",
  ),
  "live-view-unavailable": problem(
    "warning",
    "The live view could not be loaded; the run is drawn in plain lines",
    "`--ui tui` (or `auto` on a terminal) loads ink and react when the run starts. Where they cannot be loaded — a broken installation, or Node 20's module loader with packages reached through symbolic links (pnpm's layout), which gave 'onetime is not a function' inside ink's dependencies — the run is not ended for it: this warning names what failed, and the steps are shown as `--ui plain` shows them.",
    "report it with the message; `--ui plain` shows the same without trying the live view",
  ),
  "internal-error": failure(
    "bug",
    "A bug in gpuplan",
    "gpuplan hit a state it was not written for. This is never your mistake; the message shows the versions and the stack that a bug report needs.",
    "report it with the command you ran and the whole message",
  ),
} as const satisfies Record<string, CodeEntry>;

/** A code gpuplan may print. */
export type Code = keyof typeof CODES;

export function isCode(text: string): text is Code {
  return Object.hasOwn(CODES, text);
}
