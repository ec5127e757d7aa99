/**
 * `gpuplan run --executor slurm --dry-run`: the sbatch command lines the run would submit, how
 * each array shares GPUs, the resources of every task, and the scripts themselves — read before
 * anything reaches the queue.
 */
import type { Submission } from "../slurm/follow/slurm-session.js";
import { escapeLines, escapeText } from "../text/safe-text.js";
import { shellWord } from "../text/shell-word.js";
import { formatTable } from "./table.js";

const SHARING = {
  "whole-gpu": "one pipeline per GPU (whole GPUs)",
  shard: "pipelines share a GPU through Slurm shards",
  cpu: "no GPU",
} as const;

/** `settings`: the `NAME=VALUE` arguments every script gets (gpuplan's GPUPLAN_* settings). */
export function formatSlurmDryRun(submission: Submission, settings: readonly string[] = []): string {
  const { arrays, files } = submission.export;
  // The run folder may be the user's path: escaped (the scripts' own comments already are).
  const dir = escapeText(`${submission.runDir}/slurm`);
  // The settings are the user's environment: shell-quoted as the command line is run, and escaped.
  const args = settings.map((a) => ` ${escapeText(shellWord(a))}`).join("");
  const lines = [
    `gpuplan run --executor slurm --dry-run: ${arrays.length} job array${arrays.length === 1 ? "" : "s"} for ${submission.submitted.length} pipeline${submission.submitted.length === 1 ? "" : "s"}` +
      (submission.completed.length > 0
        ? ` (${submission.completed.length} completed earlier, not submitted)`
        : ""),
    "",
  ];
  for (const a of arrays) {
    lines.push(
      `$ sbatch --parsable ${dir}/${a.script}${args}`,
      `  ${a.pipelines.length} task${a.pipelines.length === 1 ? "" : "s"}, ${SHARING[a.sharing]}; each task: ${[
        a.gres !== null ? `--gres=${a.gres}` : "no GRES",
        `--cpus-per-task=${a.cpusPerTask}`,
        a.memMiB !== null ? `--mem=${a.memMiB}M` : "the cluster's default memory",
        `--time=${a.time}`,
      ].join(" ")}`,
      ...formatTable(
        [{ header: "TASK" }, { header: "PIPELINE" }],
        a.pipelines.map((p, i) => [String(i), escapeText(p)]),
        { indent: "    ", header: false },
      ),
    );
  }
  for (const f of files) {
    if (!f.name.endsWith(".sbatch")) continue;
    // The script quotes names byte for byte, as bash needs them; shown here, their control
    // characters are escaped like any outside text (a matrix value can carry ESC).
    lines.push("", `--- ${dir}/${f.name}`, escapeLines(f.text.trimEnd()));
  }
  return `${lines.join("\n")}\n`;
}
