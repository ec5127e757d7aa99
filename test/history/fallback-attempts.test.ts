// compile --history and the on_oom CPU fallback: an attempt a GPU step ran on the CPU after an OOM
// measured the CPU, not the GPU the plan gives the step, so its duration is not the step's estimate.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { choose, GiB, inventory } from "../helpers/inventory.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { compileWithHistory, planFor, writeRun } from "./helpers.js";

const PIPELINE = `version: 1
name: fallback
pipelines:
  - name: seg-{n}
    matrix: { n: [1, 2] }
    steps:
      - { id: segment, run: [x], memory: torch, vram: 4GiB, estimate: 10s, on_oom: { retries: 0, fallback: cpu } }
`;

const MACHINE = choose(inventory([{ name: "NVIDIA L4", memory: "24GiB", compute_capability: "8.9" }]));
const RUN = "20261123T100000Z-aaaaaa";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

describe("compile --history after an on_oom CPU fallback", () => {
  it("learns a GPU step's estimate from its GPU attempts, not from the attempt that fell back to the CPU", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "fallback.yaml");
    writeFileSync(file, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    const gpu = plan.pipelines[0]!.steps[0]!.device;
    const peak = { peakVramBytes: 3 * GiB };
    writeRun(
      runsDir,
      RUN,
      plan,
      file,
      events([
        [0, runStart(["seg-1", "seg-2"])],
        [1, start("seg-1", "segment", gpu)],
        [2, end("seg-1", "segment", gpu, 12_000, "ok", 1, peak)],
        [3, start("seg-2", "segment", gpu)],
        [4, end("seg-2", "segment", gpu, 1_000, "oom", 1, peak)],
        [
          5,
          {
            event: "gpu.step.retry",
            pipeline: "seg-2",
            step: "segment",
            device: gpu,
            attempt: 1,
            of: 2,
            reason: "oom",
            nextDevice: "cpu",
            rung: "cpu",
          },
        ],
        [6, start("seg-2", "segment", "cpu", 2)],
        // Forty times slower on the CPU: a GPU step given this estimate would be planned as such.
        [7, end("seg-2", "segment", "cpu", 480_000, "ok", 2)],
        [8, runEnd(500_000, "ok", 2)],
      ]),
    );
    const r = await compileWithHistory(file, MACHINE, [RUN], runsDir);
    for (const p of r.plan!.pipelines) {
      const s = p.steps[0]!;
      expect(s.device).toBe(gpu);
      expect(s.estimateMs).toBe(12_000);
      expect(s.learned?.estimateMs).toEqual({ fromFile: 10_000, samples: 1, runs: [RUN] });
    }
  });

  it("keeps the file's estimate when the step's only ok attempt fell back to the CPU", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = join(t.dir, "fallback.yaml");
    writeFileSync(file, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const plan = await planFor(file, MACHINE);
    const gpu = plan.pipelines[0]!.steps[0]!.device;
    writeRun(
      runsDir,
      RUN,
      plan,
      file,
      events([
        [0, runStart(["seg-1"])],
        [1, start("seg-1", "segment", gpu)],
        [2, end("seg-1", "segment", gpu, 1_000, "oom", 1, { peakVramBytes: 5 * GiB })],
        [
          3,
          {
            event: "gpu.step.retry",
            pipeline: "seg-1",
            step: "segment",
            device: gpu,
            attempt: 1,
            of: 2,
            reason: "oom",
            nextDevice: "cpu",
            rung: "cpu",
          },
        ],
        [4, start("seg-1", "segment", "cpu", 2)],
        [5, end("seg-1", "segment", "cpu", 480_000, "ok", 2)],
        [6, runEnd(490_000, "ok", 1)],
      ]),
    );
    const r = await compileWithHistory(file, MACHINE, [RUN], runsDir);
    const s = r.plan!.pipelines[0]!.steps[0]!;
    expect(s.estimateMs).toBe(10_000);
    expect(s.learned?.estimateMs).toBeUndefined();
    // What the GPU attempt held is still learned: it is why the step fell back.
    expect(s.learned?.vramBytes?.peakBytes).toBe(5 * GiB);
  });
});
