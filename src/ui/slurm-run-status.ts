/** `gpuplan status RUN` for people: a line for the run, then one per pipeline with its task and where it runs. */
import type { PipelineStatus, SlurmRunStatus } from "../slurm/follow/run-status.js";
import { countNoun } from "../text/count-noun.js";
import { escapeText } from "../text/safe-text.js";
import type { Paint } from "./paint.js";
import { formatTable } from "./table.js";

export function formatSlurmRunStatus(run: string, status: SlurmRunStatus, paint: Paint): string {
  const counts = countStates(status.pipelines);
  const summary = Object.entries(counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
  const rows = status.pipelines.map((p) => [
    escapeText(p.pipeline),
    paintState(p, paint),
    p.job ? `job ${p.job}` : "",
    where(p, status.sacctUnanswered),
  ]);
  return [
    `run ${escapeText(run)} on Slurm (job${status.jobs.length === 1 ? "" : "s"} ${status.jobs.join(" ") || "none"}): ${countNoun(status.pipelines.length, "pipeline")} — ${summary}`,
    ...formatTable(
      [{ header: "PIPELINE" }, { header: "STATE" }, { header: "TASK" }, { header: "WHERE / WHY" }],
      rows,
      {
        indent: "  ",
        header: false,
      },
    ),
    "",
  ].join("\n");
}

export function countStates(pipelines: readonly PipelineStatus[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of pipelines) counts[p.state] = (counts[p.state] ?? 0) + 1;
  return counts;
}

function paintState(p: PipelineStatus, paint: Paint): string {
  if (p.state === "done") return paint.green(p.state);
  if (p.state === "failed" || p.state === "unknown") return paint.red(p.state);
  if (p.state === "pending") return paint.yellow(p.state);
  return p.state;
}

/** `sacctUnanswered`: `sacct did not answer in 15 s`, when an unknown task's end was asked of it in vain. */
function where(p: PipelineStatus, sacctUnanswered: string | null): string {
  const e = escapeText;
  if (p.state === "pending") return p.reason ? `(${e(p.reason)})` : "";
  if (p.state === "running") return `${e(p.node ?? "?")}${p.gpus ? ` GPU ${e(p.gpus)}` : ""}`;
  if (p.state === "failed" && p.slurmState)
    return `${e(p.slurmState)}${p.reason ? ` (${e(p.reason)})` : ""}${p.exitCode ? `, exit ${p.exitCode}` : ""}`;
  if (p.state === "unknown")
    return `squeue no longer lists it; ${sacctUnanswered !== null ? `${sacctUnanswered}, ` : ""}it left no account`;
  return p.node ? `${e(p.node)}${p.gpus ? ` GPU ${e(p.gpus)}` : ""}` : "";
}
