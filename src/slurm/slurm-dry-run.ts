/**
 * `gpuplan run --executor slurm --dry-run --json`: what the run would submit, as data — the arrays
 * as `gpuplan export --json` describes them, the sbatch command line of each and its script.
 */
import { join } from "node:path";
import type { GpuplanSlurmDryRun } from "../schema-types/slurm-dry-run.js";
import type { Submission } from "./follow/slurm-session.js";

/** `settings`: the `NAME=VALUE` arguments every script gets (gpuplan's GPUPLAN_* settings). */
export function describeSlurmDryRun(
  submission: Submission,
  run: { plan: string; run: string },
  settings: readonly string[] = [],
): GpuplanSlurmDryRun {
  const { arrays, files } = submission.export;
  const slurm = join(submission.runDir, "slurm");
  return {
    schema: "gpuplan/slurm-dry-run@1",
    plan: run.plan,
    run: run.run,
    runDir: submission.runDir,
    pipelines: submission.submitted.map((p) => p.name),
    completed: submission.completed.map((p) => p.name),
    arrays,
    scripts: arrays.map((a) => {
      const path = join(slurm, a.script);
      return {
        name: a.script,
        path,
        command: ["sbatch", "--parsable", path, ...settings],
        text: files.find((f) => f.name === a.script)?.text ?? "",
      };
    }),
  };
}
