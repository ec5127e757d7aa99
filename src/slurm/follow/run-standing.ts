/**
 * How a Slurm run that no gpuplan follows stands, for `gpuplan runs`: a detached run, one whose
 * follower was killed, an exported array's `slurm-JOB`. Its journal never ends; its tasks say how
 * they ended (each one's run.end, under slurm/events/). Only when some task has not said is Slurm
 * asked (as `gpuplan status` asks it): whether it is still queued or running, or how it ended.
 */
import { UsageError, VendorError } from "../../problems/errors.js";
import { countNoun } from "../../text/count-noun.js";
import type { RunCommand } from "../read-cluster.js";
import { mayRequeue } from "./may-requeue.js";
import { readSlurmRecord, type TaskEnd, taskEnds } from "./run-record.js";
import { type PipelineStatus, readSlurmRunStatus } from "./run-status.js";

export interface SlurmRunStanding {
  /** submitted: Slurm still has some of its tasks queued or running, or could not be asked. */
  status: "ok" | "failed" | "interrupted" | "submitted" | "damaged";
  /** When its last task ended by its own account; null while some may still run, or none said. */
  endedAt: string | null;
  /** Slurm said some of its tasks are queued or running: a resume now would be refused. */
  active: boolean;
  /**
   * Slurm was asked and did not answer (down, past its time limit): a resume, which asks it first
   * whether the run's tasks still run, would be refused as well.
   */
  unanswered: boolean;
  problem: string | null;
}

/**
 * The standing of the run in `runDir` over `pipelines` (its journal header's). Without `slurm`
 * (gpuplan cannot ask it), a run whose tasks have not all said how they ended is `submitted`.
 */
export async function readSlurmRunStanding(
  runDir: string,
  id: string,
  pipelines: readonly string[],
  slurm?: RunCommand,
): Promise<SlurmRunStanding> {
  let ends: Map<string, TaskEnd>;
  /** Each submitted pipeline's latest array's script. */
  let scripts: Map<string, string>;
  try {
    ends = await taskEnds(runDir);
    scripts = new Map(
      (await readSlurmRecord(runDir)).arrays.flatMap((a) => a.pipelines.map((p) => [p, a.script] as const)),
    );
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return {
      status: "damaged",
      endedAt: null,
      active: false,
      unanswered: false,
      problem: "its slurm/jobs.json is damaged: gpuplan cannot tell which Slurm jobs are its",
    };
  }
  const endedAt = latest([...ends.values()].map((e) => e.ts));
  const watch = `gpuplan status ${id} says where its jobs are`;
  // Every task said how it ended: no need to ask Slurm (an old run's jobs it has long forgotten) —
  // unless one said it was interrupted where Slurm may requeue it (preempted, --requeue): until
  // its new run starts recording, only Slurm says it is queued again.
  if (pipelines.every((p) => ends.has(p) || !scripts.has(p))) {
    const states = pipelines.map((p) => ends.get(p)?.status ?? "not-submitted");
    const byOwnAccount: SlurmRunStanding = {
      status: overall(states),
      endedAt,
      active: false,
      unanswered: false,
      problem: null,
    };
    if (!slurm || !(await anyMayBeRequeued(runDir, ends, scripts))) return byOwnAccount;
    // Slurm not answering says nothing against the tasks' own account: it stands, but a resume
    // (which asks Slurm first) would be refused, so none is offered until Slurm answers. Where
    // Slurm is not installed at all (the folder copied to a workstation), a resume here goes on.
    const requeued = await readSlurmRunStatus(runDir, pipelines, slurm).then(
      (read) => read.pipelines.filter(isActive),
      (e: unknown) => (e instanceof UsageError || e instanceof VendorError ? e : Promise.reject(e)),
    );
    if (requeued instanceof Error && isNotInstalled(requeued)) return byOwnAccount;
    if (requeued instanceof Error)
      return {
        ...byOwnAccount,
        unanswered: true,
        problem: `Slurm could not be asked whether a task that said it was interrupted was requeued (${unasked(requeued)}); gpuplan run --resume asks it first and is refused until it answers`,
      };
    return requeued.length > 0 ? activeStanding(requeued.length, pipelines.length, watch) : byOwnAccount;
  }
  if (!slurm)
    return {
      status: "submitted",
      endedAt: null,
      active: false,
      unanswered: false,
      problem: `its pipelines were submitted to Slurm and no gpuplan follows them: ${watch}`,
    };
  let read: PipelineStatus[];
  try {
    read = (await readSlurmRunStatus(runDir, pipelines, slurm)).pipelines;
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof VendorError)) throw e;
    const missing = isNotInstalled(e);
    return {
      status: "submitted",
      endedAt: null,
      active: false,
      unanswered: !missing,
      problem: `its pipelines were submitted to Slurm, no gpuplan follows them, and Slurm could not be asked how they stand (${unasked(e)})${missing ? "" : "; the status is from its files only, and gpuplan run --resume is refused until Slurm answers"}: ${watch}`,
    };
  }
  const active = read.filter(isActive);
  if (active.length > 0) return activeStanding(active.length, read.length, watch);
  const unknown = read.filter((p) => p.state === "unknown").map((p) => p.job!);
  return {
    status: overall(read.map((p) => p.state)),
    endedAt,
    active: false,
    unanswered: false,
    problem:
      unknown.length > 0
        ? `Slurm no longer knows ${listed(unknown)} and ${unknown.length === 1 ? "it" : "they"} never wrote an end: how ${unknown.length === 1 ? "it" : "they"} ended is not known`
        : null,
  };
}

/** Whether a task that said it was interrupted belongs to an array Slurm may requeue (may-requeue.ts). */
async function anyMayBeRequeued(
  runDir: string,
  ends: ReadonlyMap<string, TaskEnd>,
  scripts: ReadonlyMap<string, string>,
): Promise<boolean> {
  const interrupted = new Set<string>();
  for (const [pipeline, end] of ends) {
    const script = scripts.get(pipeline);
    if (end.status === "interrupted" && script !== undefined) interrupted.add(script);
  }
  for (const script of interrupted) if (await mayRequeue(runDir, script)) return true;
  return false;
}

const isActive = (p: PipelineStatus): boolean => p.state === "pending" || p.state === "running";

/** squeue is not on PATH: Slurm is not there to answer, rather than silent (a resume here warns and goes on). */
const isNotInstalled = (e: UsageError | VendorError): boolean =>
  e instanceof UsageError && e.code === "slurm-not-found";

/** Why Slurm could not be asked, with what it printed. */
function unasked(e: UsageError | VendorError): string {
  return `${e.message}${e instanceof VendorError && e.vendorMessage ? `: ${e.vendorMessage}` : ""}`;
}

/** A run with `active` of its `all` pipelines queued or running on Slurm: a resume now would be refused. */
function activeStanding(active: number, all: number, watch: string): SlurmRunStanding {
  return {
    status: "submitted",
    endedAt: null,
    active: true,
    unanswered: false,
    problem: `${active} of its ${countNoun(all, "pipeline")} ${active === 1 ? "is" : "are"} queued or running on Slurm and no gpuplan follows them: ${watch}`,
  };
}

/**
 * The run from its pipelines' states: failed when one failed (by its own account, or Slurm ended
 * its task first: a time limit, a node failure, scancel), interrupted when one has not finished
 * (interrupted, never submitted, or its task gone without a word), else ok.
 */
function overall(states: readonly string[]): "ok" | "failed" | "interrupted" {
  if (states.includes("failed")) return "failed";
  return states.every((s) => s === "ok" || s === "done") ? "ok" : "interrupted";
}

function latest(times: readonly (string | null)[]): string | null {
  let last: string | null = null;
  for (const t of times) if (t !== null && (last === null || Date.parse(t) > Date.parse(last))) last = t;
  return last;
}

const listed = (items: readonly string[]): string =>
  `${items.slice(0, 5).join(", ")}${items.length > 5 ? `, … (${items.length} in all)` : ""}`;
