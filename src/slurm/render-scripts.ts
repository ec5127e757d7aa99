// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are bash, where ${…} is bash's own
/**
 * The files `gpuplan export --to slurm` writes: one commented sbatch script per job array, and
 * submit.sh that submits them all. Everything that reaches a shell is single-quoted; what goes
 * on an `#SBATCH` line (read by sbatch, unquoted) was checked to be plain before it gets here.
 */

import { countNoun } from "../text/count-noun.js";
import { displayText } from "../text/safe-text.js";
import { shellWord } from "../text/shell-word.js";
import type { JobArrayPlan } from "./job-arrays.js";
import { formatSlurmTime } from "./time-limit.js";

export interface ScriptContext {
  planName: string;
  /** The plan as the user named it, for comments. */
  planLabel: string;
  gpuplanVersion: string;
  /** Absolute paths. */
  outDir: string;
  planFile: string;
  projectDir: string;
  /**
   * The scripts of `gpuplan run --executor slurm`: planFile is the run folder's plan.json and each
   * task records into that folder (--slurm-task). Exported scripts: the array's first task to start
   * makes the run folder (.gpuplan/runs/slurm-JOB, planFile copied in) and every task records there.
   */
  taskOfRun: boolean;
  /**
   * Exported scripts: this export's own token (random), which the run folder its first task makes
   * records; a folder with another token is another array's (job ids repeat) and is never adopted.
   */
  exportId: string;
  node: string;
  gpuplan: string;
  arrayCount: number;
  pipelineCount: number;
  partition?: string;
  account?: string;
  qos?: string;
  throttle?: number;
  sbatchArgs: readonly string[];
}

/** `gpuplan-cell-painting-1`: letters, digits, `_ . -` only, as a job name and in log file names. */
export function jobName(planName: string, index: number): string {
  const safe = planName.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40) || "plan";
  return `gpuplan-${safe}-${index}`;
}

/** `01-gpu-h100-1.sbatch`, `02-cpu.sbatch`, `03-shard-h100-2.sbatch`. */
export function scriptName(array: JobArrayPlan): string {
  const what =
    array.request.gres === null ? "cpu" : array.request.gres.replaceAll(":", "-").replaceAll(",", "+");
  return `${String(array.index).padStart(2, "0")}-${what}.sbatch`;
}

export function renderSbatchScript(array: JobArrayPlan, ctx: ScriptContext): string {
  const r = array.request;
  const n = array.pipelines.length;
  const what =
    r.sharing === "cpu"
      ? "no GPU"
      : r.sharing === "shard"
        ? "a share of one GPU (Slurm shards)"
        : `${r.gpus} whole GPU${r.gpus === 1 ? "" : "s"}`;
  const lines = [
    "#!/bin/bash",
    `# gpuplan ${ctx.gpuplanVersion} export --to slurm: plan ${comment(ctx.planName)} (${comment(ctx.planLabel)})`,
    `# Job array ${array.index} of ${ctx.arrayCount}: ${n} of the plan's ${countNoun(ctx.pipelineCount, "pipeline")}, one array task each,`,
    `# each asking for ${what}. Slurm gives every task of an array the same request,`,
    "# so pipelines that need other resources are in other arrays.",
    "#",
    "# Where each request comes from:",
    ...r.why.map((w) => `#   ${comment(w)}`),
    "#",
    "# Submit every array with ./submit.sh, or this one alone: sbatch THIS_FILE",
    `#SBATCH --job-name=${jobName(ctx.planName, array.index)}`,
    `#SBATCH --array=0-${n - 1}${ctx.throttle !== undefined ? `%${ctx.throttle}` : ""}`,
    ...(r.gres !== null ? [`#SBATCH --gres=${r.gres}`] : []),
    `#SBATCH --cpus-per-task=${r.cpusPerTask}`,
    ...(r.memMiB !== null ? [`#SBATCH --mem=${r.memMiB}M`] : []),
    `#SBATCH --time=${formatSlurmTime(r.timeMinutes)}`,
    `#SBATCH --chdir=${ctx.projectDir}`,
    `#SBATCH --output=${ctx.outDir}/logs/%x-%A_%a.out`,
    `#SBATCH --error=${ctx.outDir}/logs/%x-%A_%a.err`,
    ...(ctx.partition !== undefined ? [`#SBATCH --partition=${ctx.partition}`] : []),
    ...(ctx.account !== undefined ? [`#SBATCH --account=${ctx.account}`] : []),
    ...(ctx.qos !== undefined ? [`#SBATCH --qos=${ctx.qos}`] : []),
    ...(ctx.sbatchArgs.length ? ["# --sbatch-arg, after the rest so they win:"] : []),
    ...ctx.sbatchArgs.map((a) => `#SBATCH ${a}`),
    "",
    "set -euo pipefail",
    "",
    "# gpuplan's settings (GPUPLAN_*) from the shell that submitted, as this script's arguments:",
    "# sbatch hands a task that shell's environment only where the site's policy lets it",
    "# (SBATCH_EXPORT=NONE, --export), and these must reach the task whatever it is. The other",
    "# variables follow the site's policy.",
    'for setting in "$@"; do',
    '  if [[ "$setting" =~ ^GPUPLAN_[A-Z0-9_]+= ]]; then export "$setting"; fi',
    "done",
    "",
    "# gpuplan as it was found at export time; set NODE and GPUPLAN to use another.",
    `NODE=\${NODE:-${shellWord(ctx.node)}}`,
    `GPUPLAN=\${GPUPLAN:-${shellWord(ctx.gpuplan)}}`,
    ...(ctx.taskOfRun
      ? [`PLAN=${shellWord(ctx.planFile)}`, `STARTED_DIR=${shellWord(`${ctx.outDir}/started`)}`]
      : [`EXPORTED_PLAN=${shellWord(ctx.planFile)}`]),
    "",
    "# Array task i runs pipeline i of this list (the plan's order).",
    "PIPELINES=(",
    ...array.pipelines.map(
      (p, i) => `  ${shellWord(p)}${/^[\x20-\x7e]*$/.test(p) ? "" : `  # ${i}: ${comment(p)}`}`,
    ),
    ")",
    'pipeline="${PIPELINES[$SLURM_ARRAY_TASK_ID]}"',
    'task="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"',
    "",
    ...(ctx.taskOfRun ? [] : runFolderLines(array, ctx)),
  ];
  if (r.gpus > 0) {
    lines.push(
      "# The GPUs Slurm gave this task, as node-wide indices (CUDA_VISIBLE_DEVICES is renumbered",
      "# from 0 where Slurm constrains devices). The pipeline needs exactly this many.",
      'gpus="${SLURM_STEP_GPUS:-${SLURM_JOB_GPUS:-}}"',
      'IFS=, read -r -a gpu_list <<< "$gpus"',
      `if [ "\${#gpu_list[@]}" -ne ${r.gpus} ]; then`,
      `  echo "gpuplan: task $task (pipeline $pipeline) needs ${r.gpus} GPU${r.gpus === 1 ? "" : "s"}, Slurm gave '\${gpus}' (SLURM_JOB_GPUS); is the cluster's GRES configured with File=?" >&2`,
      "  exit 1",
      "fi",
      'echo "gpuplan: task $task runs pipeline $pipeline on $(hostname) with GPU(s) $gpus" >&2',
    );
  } else {
    lines.push('echo "gpuplan: task $task runs pipeline $pipeline on $(hostname)" >&2');
  }
  lines.push(
    "",
    "# The first thing this task writes: gpuplan run --executor slurm waits for it to see that",
    "# the folder is shared with this node.",
    `echo "$(hostname) ${r.gpus > 0 ? "$gpus" : ""}" > "$STARTED_DIR/$task" 2>/dev/null ||`,
    '  echo "gpuplan: cannot write $STARTED_DIR/$task on $(hostname): is the folder on a filesystem shared with the nodes?" >&2',
    "",
    r.gpus > 0
      ? "# --bind-slurm-gpus: the pipeline runs on the GPUs Slurm gave this task (SLURM_JOB_GPUS)."
      : "# A CPU pipeline: no GPU asked for, none bound.",
    "# --slurm-task: the step logs go to the run folder's logs/, this task's journal and events",
    "# to its slurm/journals/ and slurm/events/; steps the run completed before are skipped.",
    `exec "$NODE" "$GPUPLAN" run "$PLAN" --pipeline "$pipeline"${r.gpus > 0 ? " --bind-slurm-gpus" : ""} --ui plain --slurm-task "$task"`,
    "",
  );
  return lines.join("\n");
}

/**
 * An exported array is one run, as with gpuplan run --executor slurm: one folder, named from the
 * array job, that gpuplan report, status and run --resume read. No follower makes it, so the first
 * task to start does, complete, under a name of its own, and renames it into place: a rename is
 * atomic, so exactly one task's folder wins and no task sees one half-written.
 */
function runFolderLines(array: JobArrayPlan, ctx: ScriptContext): string[] {
  // The journal's run header and slurm/jobs.json, less what only the task knows (job id, time).
  // The run is this array's pipelines: another array of the plan is another run (its own job id).
  const header = JSON.stringify({ input: ctx.planFile, baseDir: ctx.projectDir, pipelines: array.pipelines });
  const jobs = JSON.stringify({ script: scriptName(array), pipelines: array.pipelines });
  return [
    "# The run folder, .gpuplan/runs/slurm-JOB in the project folder (where this task runs): every",
    "# task of this array records into it, as the tasks of gpuplan run --executor slurm do, so",
    "# gpuplan report / status / run --resume RUN read the array as one run. The first task to",
    "# start builds it under a name of its own (the plan copied in, the journal's run header, the",
    "# array in slurm/jobs.json) and renames it into place: exactly one task's folder wins.",
    "# Whose folder it is: this export's token, and submit.sh's per-submission one where it ran.",
    "# Slurm job ids repeat (a state reset, MaxJobId wrap, two clusters sharing a home): a folder",
    "# with another owner belongs to another array and is never adopted (its plan, its journals).",
    `owner=${shellWord(ctx.exportId)}"\${GPUPLAN_SUBMISSION:+/$GPUPLAN_SUBMISSION}"`,
    'run_id="slurm-$SLURM_ARRAY_JOB_ID"',
    'RUN="$PWD/.gpuplan/runs/$run_id"',
    'if [ ! -f "$RUN/journal.jsonl" ]; then',
    '  new="$RUN.$task.$$.new"',
    '  mkdir -p "$new/logs" "$new/slurm/events" "$new/slurm/journals" "$new/slurm/started" "$new/slurm/logs"',
    '  cp "$EXPORTED_PLAN" "$new/plan.json"',
    "  # The copy's SHA-256, as gpuplan run records it: run --resume (and every later task) checks",
    "  # plan.json against it. Read from stdin, so no file name can change sha256sum's output. Left",
    "  # out where sha256sum is missing or says something else: a resume then warns it is unchecked.",
    '  sha=$(sha256sum < "$new/plan.json" 2>/dev/null | cut -d " " -f 1) || sha=',
    '  case "$sha" in *[!0-9a-f]*) sha= ;; esac',
    `  if [ "\${#sha}" -eq 64 ]; then digest=$(printf '"planSha256":"%s",' "$sha"); else digest=; fi`,
    '  printf \'%s\\n\' "$owner" > "$new/slurm/owner"',
    `  printf '{"type":"run","run":"%s","startedAt":"%s",%s%s\\n' "$run_id" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" "$digest" ${shellWord(header.slice(1))} > "$new/journal.jsonl"`,
    `  printf '{"schema":"gpuplan/slurm-run@1","arrays":[{"job":"%s",%s]}\\n' "$SLURM_ARRAY_JOB_ID" ${shellWord(jobs.slice(1))} > "$new/slurm/jobs.json"`,
    '  mv -T "$new" "$RUN" 2>/dev/null || rm -rf "$new"  # another task won: use its folder',
    "fi",
    'if [ ! -f "$RUN/journal.jsonl" ]; then',
    '  echo "gpuplan: task $task found no run folder $RUN (journal.jsonl) on $(hostname)" >&2',
    "  exit 1",
    "fi",
    'if [ "$(head -c 200 "$RUN/slurm/owner" 2>/dev/null)" != "$owner" ]; then',
    '  echo "gpuplan: task $task: the run folder $RUN is not this array\'s: another job $SLURM_ARRAY_JOB_ID made it (Slurm reuses job ids after a state reset, or another cluster shares this folder); nothing run. Move it away, then submit again" >&2',
    "  exit 1",
    "fi",
    'PLAN="$RUN/plan.json"',
    'STARTED_DIR="$RUN/slurm/started"',
    "",
  ];
}

/** `unset`: the variables that would override a script's directives (sbatchOverrides). */
export function renderSubmitScript(
  scripts: readonly string[],
  unset: readonly string[],
  ctx: ScriptContext,
): string {
  return [
    "#!/bin/bash",
    `# gpuplan ${ctx.gpuplanVersion} export --to slurm: submit plan ${comment(ctx.planName)} as ${scripts.length} job array${scripts.length === 1 ? "" : "s"}`,
    `# (${countNoun(ctx.pipelineCount, "pipeline")}). Usage: ./submit.sh [more sbatch options, e.g. --hold]`,
    "# Prints each script's job id, and appends it to jobs.txt. Each array is one run, in",
    "# .gpuplan/runs/slurm-JOB in the project folder (step logs, journals, events), as gpuplan run",
    "# makes; Slurm's own output goes to logs/.",
    "set -euo pipefail",
    'cd "$(dirname "$0")"',
    "# This submission's own token, passed on to the tasks: a task never adopts a run folder that an",
    "# earlier array with the same job id made.",
    'export GPUPLAN_SUBMISSION="$(date -u +%Y%m%dT%H%M%SZ)-$$-$RANDOM"',
    "# gpuplan follows the arrays (status, runs, report) on this cluster: another one, where sacct",
    "# does not look, is refused before anything is submitted.",
    'if [ -n "${SBATCH_CLUSTERS:-}${SLURM_CLUSTERS:-}" ]; then',
    '  echo "gpuplan: SBATCH_CLUSTERS / SLURM_CLUSTERS would send the arrays to another cluster, where gpuplan cannot follow them; unset them and submit from that cluster" >&2',
    "  exit 2",
    "fi",
    "# gpuplan's settings (GPUPLAN_*, the token too) go to each script as its arguments, which reach",
    "# the task whatever the site's export policy (SBATCH_EXPORT=NONE passes no environment).",
    "settings=()",
    "while IFS= read -r name; do settings+=(\"$name=${!name}\"); done < <(compgen -e | grep -E '^GPUPLAN_[A-Z0-9_]+$' || true)",
    "# sbatch's environment variables win over #SBATCH lines: these would change what the scripts",
    "# say (which tasks run, where Slurm's logs go, requeueing, the GPUs) or hold sbatch until the",
    "# array ends. Options given to this script still win; what the scripts leave unsaid (a",
    "# partition, an account) the environment still sets.",
    `unset ${unset.join(" ")}`,
    "mkdir -p logs",
    `for script in ${scripts.map(shellWord).join(" ")}; do`,
    '  if ! out=$(sbatch --parsable "$@" "$script" "${settings[@]}"); then',
    '    echo "gpuplan: sbatch refused $script; the arrays submitted before it are in jobs.txt (scancel them to start over)" >&2',
    "    exit 1",
    "  fi",
    "  # The job id is the last line that is only ID or ID;CLUSTER (a site's wrapper may print notices first).",
    `  id=$(printf '%s\\n' "$out" | grep -E '^[0-9]+(;[A-Za-z0-9_.-]+)?$' | tail -n 1 || true)`,
    '  if [ -z "$id" ]; then',
    '    echo "gpuplan: sbatch accepted $script but printed no job id; find it with squeue --me and record it in jobs.txt" >&2',
    "    exit 1",
    "  fi",
    '  echo "$script ${id%%;*}" | tee -a jobs.txt',
    "done",
    "",
  ].join("\n");
}

/** One line of a `#` comment: no line breaks or control characters from plan text. */
const comment = (text: string): string => displayText(text, 160);
