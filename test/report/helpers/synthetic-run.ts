/**
 * A big run folder without running it: a real plan (a matrix pipeline compiled against a built-in
 * target) and the events a run of it would write — pipelines taking slots in plan order, steps
 * with durations around their estimates, some OOMs retried, some failures (the rest of their
 * pipeline skipped), memory readings at every step's start and end. Every event is a schema-valid
 * run event (the test checks). Seeded, so the same call gives the same folder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compilePlan } from "../../../src/compile/compile.js";
import { targetInventory } from "../../../src/inventory/load-inventory.js";
import { loadPipelineFile } from "../../../src/pipeline/load-pipeline.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import type { GpuplanPlan } from "../../../src/schema-types/plan.js";

export interface SyntheticRun {
  runDir: string;
  plan: GpuplanPlan;
  events: RunEvent[];
  attempts: number;
}

const pipelineYaml = (wells: number) => `
version: 1
name: screen-${wells}
registry: { max_parallel_pipelines: 64 }
pipelines:
  - name: well-{w}
    matrix: { w: [${Array.from({ length: wells }, (_, i) => `W${String(i + 1).padStart(4, "0")}`).join(", ")}] }
    steps:
      - { id: load, run: [python3, steps/load.py, --well, "{w}", --channels, "5"], memory: numpy, estimate: 20s }
      - { id: denoise, run: [python3, steps/denoise.py, --well, "{w}"], memory: { input: numpy, output: cupy }, vram: 6GiB, needs: [load], estimate: 40s }
      - id: segment
        run: [python3, steps/segment.py, --model, cellpose-cyto3, --well, "{w}"]
        memory: torch
        vram: 14GiB
        needs: [denoise]
        estimate: 90s
        on_oom: { retries: 1 }
      - { id: measure, run: [python3, steps/measure.py, --well, "{w}"], memory: { input: torch, output: numpy }, vram: 4GiB, needs: [segment], estimate: 30s }
      - { id: export, run: [python3, steps/export.py, --well, "{w}", --to, "s3://lab/screen/{w}.parquet"], memory: numpy, needs: [measure], estimate: 10s }
`;

/** A small deterministic generator (LCG): the same seed, the same run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export async function writeSyntheticRun(
  dir: string,
  wells: number,
  target = "dgx-h100",
): Promise<SyntheticRun> {
  const file = join(dir, "screen.yaml");
  writeFileSync(file, pipelineYaml(wells));
  const compiled = compilePlan(await loadPipelineFile(file), targetInventory(target));
  if (!compiled.plan)
    throw new Error(`synthetic plan did not compile: ${compiled.problems.map((p) => p.message).join("; ")}`);
  const plan = compiled.plan;
  const run = "20261123T120000Z-5a5a5a";
  const runDir = join(dir, ".gpuplan/runs", run);
  mkdirSync(join(runDir, "logs"), { recursive: true });
  writeFileSync(join(runDir, "plan.json"), compiled.planText!);
  writeFileSync(
    join(runDir, "journal.jsonl"),
    `${JSON.stringify({ type: "run", run, startedAt: "2026-11-23T12:00:00.000Z", input: "screen.yaml", baseDir: dir, pipelines: plan.pipelines.map((p) => p.name) })}\n`,
  );
  const rnd = random(42);
  const t0 = Date.parse("2026-11-23T12:00:00.000Z");
  const events: (RunEvent & { _t: number })[] = [];
  const rel = `.gpuplan/runs/${run}`;
  const push = (t: number, e: Record<string, unknown>) => {
    const { event, pipeline = null, step = null, device = null, ...rest } = e;
    events.push({ ts: "", event, run, pipeline, step, device, ...rest, _t: t } as unknown as RunEvent & {
      _t: number;
    });
  };
  push(t0, {
    event: "run.start",
    schema: "gpuplan/run-events@1",
    pipelines: plan.pipelines.map((p) => p.name),
    runDir: rel,
  });
  const slots = new Map(plan.registry.map((r) => [r.gpu, new Array<number>(r.maxPipelines).fill(t0)]));
  const used = new Map(plan.registry.map((r) => [r.gpu, 2 * 1024 ** 3]));
  let attempts = 0;
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  const order = [...plan.pipelines].sort((a, b) => a.estimatedStartMs - b.estimatedStartMs);
  for (const p of order) {
    const gpu = p.gpu!;
    const entry = plan.registry.find((r) => r.gpu === gpu)!;
    const free = slots.get(gpu)!;
    const slot = free.indexOf(Math.min(...free));
    let t = free[slot]!;
    if (t > t0)
      push(t0 + 5, {
        event: "gpu.lock.wait",
        pipeline: p.name,
        device: gpu,
        gpu,
        slots: 1,
        exclusive: false,
        holders: [],
      });
    push(t, {
      event: "gpu.lock.acquired",
      pipeline: p.name,
      device: gpu,
      gpu,
      slots: [slot],
      waitedMs: t - t0,
      exclusive: false,
    });
    let dead = false;
    for (const s of p.steps) {
      if (dead) {
        push(t, {
          event: "gpu.step.skip",
          pipeline: p.name,
          step: s.id,
          device: s.device,
          reason: `needs ${p.name}/measure, which failed`,
          cause: "dependency-failed",
        });
        skipped++;
        continue;
      }
      const oom = s.id === "segment" && rnd() < 0.03;
      const fail = s.id === "measure" && rnd() < 0.01;
      const tries = oom ? 2 : 1;
      for (let a = 1; a <= tries; a++) {
        const ms = Math.round(s.estimateMs * (0.5 + rnd() * 1.3));
        const log = `${rel}/logs/${p.name}@${s.id}${a > 1 ? `@${a}` : ""}`;
        push(t, {
          event: "gpu.step.start",
          pipeline: p.name,
          step: s.id,
          device: s.device,
          attempt: a,
          logPath: `${log}.out.log`,
          stderrPath: `${log}.err.log`,
        });
        attempts++;
        const reading = (at: "step.start" | "step.end") => {
          if (s.device === "cpu") return;
          const u = used.get(gpu)!;
          push(t + (at === "step.start" ? 20 : ms + 20), {
            event: "gpu.memory.snapshot",
            pipeline: p.name,
            step: s.id,
            device: s.device,
            at,
            gpus: [
              {
                gpu,
                uuid: entry.uuid,
                usedBytes: u,
                freeBytes: entry.memoryBytes - u,
                totalBytes: entry.memoryBytes,
              },
            ],
          });
        };
        if (s.device !== "cpu")
          used.set(gpu, Math.min(entry.memoryBytes, used.get(gpu)! + (s.vramBytes ?? 0)));
        reading("step.start");
        const status = oom && a === 1 ? "oom" : fail ? "error" : "ok";
        if (s.device !== "cpu") used.set(gpu, Math.max(2 * 1024 ** 3, used.get(gpu)! - (s.vramBytes ?? 0)));
        reading("step.end");
        t += ms;
        if (status === "oom")
          push(t, {
            event: "gpu.step.oom",
            pipeline: p.name,
            step: s.id,
            device: s.device,
            framework: "pytorch",
            attempt: a,
          });
        push(t, {
          event: "gpu.step.end",
          pipeline: p.name,
          step: s.id,
          device: s.device,
          status,
          exitCode: status === "ok" ? 0 : 1,
          signal: null,
          durationMs: ms,
          attempt: a,
          logPath: `${log}.out.log`,
          stderrPath: `${log}.err.log`,
          ...(s.device !== "cpu" && { peakVramBytes: Math.round((s.vramBytes ?? 0) * (0.6 + rnd() * 0.5)) }),
          ...(status === "oom" && {
            framework: "pytorch",
            hint: "lower the batch size or raise vram",
            stderrTail: [
              "Traceback (most recent call last):",
              '  File "segment.py", line 88, in <module>',
              "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            ],
          }),
          ...(status === "error" && {
            hint: "see the step's log",
            stderrTail: ["ValueError: no nuclei found in any field"],
          }),
        });
        if (status === "oom")
          push(t, {
            event: "gpu.step.retry",
            pipeline: p.name,
            step: s.id,
            device: s.device,
            attempt: 2,
            of: 2,
            reason: "oom",
          });
        if (status === "ok") ok++;
        if (status === "error") {
          failed++;
          dead = true;
        }
      }
    }
    push(t, {
      event: "gpu.lock.released",
      pipeline: p.name,
      device: gpu,
      gpu,
      slots: [slot],
      exclusive: false,
    });
    free[slot] = t;
  }
  const end = Math.max(...events.map((e) => e._t));
  push(end, {
    event: "run.end",
    durationMs: end - t0,
    status: failed ? "failed" : "ok",
    ok,
    failed,
    skipped,
  });
  events.sort((a, b) => a._t - b._t);
  const clean = events.map(({ _t, ...e }) => ({ ...e, ts: new Date(_t).toISOString() }) as RunEvent);
  // ts first, as the run writes it.
  const lines = clean.map((e) => {
    const { ts, ...rest } = e;
    return JSON.stringify({ ts, ...rest });
  });
  writeFileSync(join(runDir, "events.jsonl"), `${lines.join("\n")}\n`);
  return { runDir, plan, events: clean, attempts };
}
