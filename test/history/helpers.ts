/** Run folders as `gpuplan run` leaves them (plan.json, journal.jsonl, events.jsonl), for compile --history. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compilePlan } from "../../src/compile/compile.js";
import { readHistory } from "../../src/history/read-history.js";
import type { InventoryChoice } from "../../src/inventory/load-inventory.js";
import { loadPipelineFile } from "../../src/pipeline/load-pipeline.js";
import type { RunEvent } from "../../src/run/record/events.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";

/** Compile the pipeline file (no history): the plan a run would have run. */
export async function planFor(file: string, choice: InventoryChoice): Promise<GpuplanPlan> {
  const r = compilePlan(await loadPipelineFile(file), choice);
  if (!r.plan) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r.plan;
}

/** Write run `id` of `plan` (compiled from `pipelineFile`) with these events into `runsDir`. */
export function writeRun(
  runsDir: string,
  id: string,
  plan: GpuplanPlan,
  pipelineFile: string,
  events: readonly RunEvent[],
): string {
  const dir = join(runsDir, id);
  mkdirSync(join(dir, "logs"), { recursive: true });
  writeFileSync(join(dir, "plan.json"), `${JSON.stringify(plan, null, 2)}\n`);
  const header = {
    type: "run",
    run: id,
    startedAt: "2026-11-23T10:00:00.000Z",
    input: "plan.json",
    baseDir: dirname(pipelineFile),
    pipelines: plan.pipelines.map((p) => p.name),
  };
  writeFileSync(join(dir, "journal.jsonl"), `${JSON.stringify(header)}\n`);
  writeFileSync(
    join(dir, "events.jsonl"),
    events.map((e) => `${JSON.stringify({ ...e, run: id })}\n`).join(""),
  );
  return dir;
}

/** Load and compile `file` learning from `refs`, as compile --history does. */
export async function compileWithHistory(
  file: string,
  choice: InventoryChoice,
  refs: string[],
  runsDir: string,
) {
  const loaded = await loadPipelineFile(file);
  const history = await readHistory(refs, file, loaded.resolved!.name, runsDir);
  return { history, ...compilePlan(loaded, choice, { history }) };
}
