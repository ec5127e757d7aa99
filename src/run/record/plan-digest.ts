/**
 * A run folder's plan.json against the digest its journal's header recorded when the run started
 * (planSha256): `--resume` and a Slurm run's array tasks run that file, and the journal's
 * completed steps are the plan's it was then.
 */
import { UsageError } from "../../problems/errors.js";
import { type Problem, warning } from "../../problems/problem.js";
import { sha256Of } from "../../text/sha256.js";

/** SHA-256 (hex) of a run's plan.json bytes, as its journal's header records it. */
export const planDigest = (bytes: Uint8Array): string => sha256Of(bytes);

/**
 * The run's plan.json must be the one it started with: the journal's completed steps are that
 * plan's, and a plan edited, replaced or truncated since would run its own commands, environment
 * and GPUs as if the old plan's steps had finished ok (Nextflow and Snakemake refuse to resume a
 * changed workflow's tasks for the same reason). The digest guards against accidents, not
 * against someone who can rewrite the journal too. A journal from before the digest (an older
 * gpuplan or its exported sbatch scripts, or one whose node had no sha256sum) resumes unchecked, with a warning saying so.
 */
export function checkPlanDigest(
  planPath: string,
  bytes: Uint8Array,
  recorded: string | undefined,
  run: string,
  /** The option that reads the folder, for the message: `--resume`, or a Slurm task's `--slurm-task`. */
  option = "--resume",
): Problem[] {
  if (recorded === undefined) {
    return [
      warning({
        code: "resume-plan-unverified",
        message: `run ${run}: its journal keeps no digest of its plan (an older gpuplan or its exported sbatch script made it, or a node without sha256sum): plan.json is resumed as it is now, unchecked`,
        hint: "make sure plan.json is still the plan the run started with; a changed one runs its own steps as if the old plan's had finished",
        file: planPath,
      }),
    ];
  }
  const now = planDigest(bytes);
  if (now === recorded) return [];
  throw new UsageError(
    `${option}: ${planPath} is not the plan run ${run} started with: it was changed since (the journal records sha256 ${recorded.slice(0, 12)}…, the file is ${now.slice(0, 12)}…)`,
    "resume-plan-changed",
    "restore the plan the run started with, or start a new run (without --resume) from the plan you mean to run; the run's completed steps are the old plan's",
  );
}
