/**
 * `gpuplan status RUN` for a Slurm run: each pipeline's state from its latest array task — the
 * task's own account when it wrote one (its events' run.end), else what squeue says of the task
 * (pending and why, running where, ended how; once squeue forgot it, sacct where Slurm keeps
 * accounting), with the node and GPUs from its start marker. A
 * detached run has no follower, so this is how it is watched; `--resume` uses the same reading to
 * refuse while tasks are still queued or running — and, as it cannot know which are when squeue
 * fails, a failing squeue is an error here (VendorError), never tasks taken as gone.
 */
import { type RunCommand, slurmOutput } from "../read-cluster.js";
import { readSlurmRecord, readStartMarker, type SlurmRunRecord, taskEndings } from "./run-record.js";
import { sacctTaskStates } from "./sacct-tasks.js";
import {
  forgetsEveryJob,
  isFinalState,
  isQueuedState,
  parseSqueue,
  squeueCalls,
  type TaskState,
} from "./squeue-tasks.js";

type PipelineState = "pending" | "running" | "done" | "failed" | "interrupted" | "unknown" | "not-submitted";

export interface PipelineStatus {
  pipeline: string;
  state: PipelineState;
  job: string | null;
  slurmState: string | null;
  reason: string | null;
  node: string | null;
  gpus: string | null;
  exitCode: number | null;
}

export interface SlurmRunStatus {
  jobs: string[];
  pipelines: PipelineStatus[];
  /** `sacct did not answer in 15 s` where it was asked of forgotten tasks in vain: their `unknown` is that. */
  sacctUnanswered: string | null;
}

/**
 * The state of each of `pipelines` (the run's, in order); squeue through `slurm`. `given`: the
 * run's record where the caller has read it already (a resume reads it once).
 */
export async function readSlurmRunStatus(
  runDir: string,
  pipelines: readonly string[],
  slurm: RunCommand,
  given?: SlurmRunRecord,
): Promise<SlurmRunStatus> {
  const record = given ?? (await readSlurmRecord(runDir));
  const jobs = record.arrays.map((a) => a.job);
  const latest = new Map<string, string>();
  for (const a of record.arrays) for (const [i, p] of a.pipelines.entries()) latest.set(p, `${a.job}_${i}`);
  const states = new Map<string, TaskState>();
  if (jobs.length > 0) {
    // A squeue that failed says nothing of the tasks: read as "no longer listed", a queued task
    // would look ended and a resume would submit it twice.
    let text = "";
    for (const args of squeueCalls(jobs)) {
      // Slurm forgot every job of the call (an old run's only array): none of them is listed.
      const out = await slurm("squeue", args);
      if (forgetsEveryJob(out)) continue;
      text += `${await slurmOutput(
        async () => out,
        "squeue",
        args,
        "gpuplan cannot tell which of the run's tasks are still queued or running",
      )}\n`;
    }
    const taskCounts = new Map(record.arrays.map((a) => [a.job, a.pipelines.length]));
    for (const s of parseSqueue(text, taskCounts)) states.set(`${s.job}_${s.task}`, s);
  }
  const endings = await taskEndings(runDir, record);
  // Tasks squeue forgot (MinJobAge) that said nothing themselves: Slurm's accounting, where configured.
  const forgotten = [...latest]
    .filter(([pipeline, job]) => !states.has(job) && !endings.has(pipeline))
    .map(([, job]) => ({ name: job, rawJob: null }));
  const sacct = jobs.length > 0 ? await sacctTaskStates(slurm, forgotten) : null;
  for (const [name, s] of sacct?.states ?? []) states.set(name, s);
  return {
    jobs,
    sacctUnanswered: sacct?.unanswered ?? null,
    pipelines: pipelines.map((pipeline): PipelineStatus => {
      const job = latest.get(pipeline) ?? null;
      const s = job !== null ? states.get(job) : undefined;
      const marker = job !== null ? readStartMarker(runDir, job) : null;
      const ending = endings.get(pipeline);
      // A task Slurm holds queued after it ran was requeued (preempted, its node failed): it will
      // run again, whatever its last run said (a run.start of the new run clears that, run-record.ts).
      const state: PipelineState =
        job === null
          ? "not-submitted"
          : s && isQueuedState(s.state)
            ? "pending"
            : ending === "ok"
              ? "done"
              : ending !== undefined
                ? ending
                : !s
                  ? "unknown"
                  : isFinalState(s.state)
                    ? "failed"
                    : "running";
      return {
        pipeline,
        state,
        job,
        slurmState: s?.state ?? null,
        reason: s?.reason ?? null,
        node: s?.node ?? marker?.node ?? null,
        gpus: marker?.gpus ?? null,
        exitCode: s?.exitCode ?? null,
      };
    }),
  };
}

/** Tasks of the run Slurm still holds (queued or running): a resume must not run them twice. */
export function activeTasks(status: SlurmRunStatus): PipelineStatus[] {
  return status.pipelines.filter((p) => p.slurmState !== null && !isFinalState(p.slurmState));
}
