/**
 * How a run ends on record, wherever it ran (this machine's executor, a followed Slurm array):
 * the journal's `end` entry, which `--resume` and `gpuplan runs` read, then the `run.end` event,
 * whose status the report and the views show. One place, so that the two agree everywhere.
 */
import type { RunTally } from "../outcome/run-tally.js";
import type { EventDraft } from "./events.js";
import type { Journal } from "./journal.js";

export async function recordRunEnd(
  journal: Journal,
  emit: (draft: EventDraft) => void,
  end: { pipelines: readonly string[]; interrupted: boolean; tally: RunTally; startedMs: number },
): Promise<void> {
  const { ok, failed, skipped } = end.tally;
  await journal.append({
    type: "end",
    ts: new Date().toISOString(),
    pipelines: [...end.pipelines],
    interrupted: end.interrupted,
    ok,
    failed,
    skipped,
  });
  emit({
    event: "run.end",
    pipeline: null,
    step: null,
    device: null,
    durationMs: Math.round(performance.now() - end.startedMs),
    status: end.interrupted ? "interrupted" : failed > 0 ? "failed" : "ok",
    ok,
    failed,
    skipped,
  });
}
