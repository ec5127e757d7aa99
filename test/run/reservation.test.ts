// What a pipeline reserves and against what (#16 item 3): one reservation function for admission,
// the wait rung and over-reservation reports; admission against the budget pipelines share (the
// GPU's budget less its warm workers' reserve); and a slot an on_oom other-gpu rung borrows on
// another GPU reserved like any other.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exceededReservation, reservationBytes } from "../../src/run/outcome/reservation.js";
import type { PlannedPipeline } from "../../src/schema-types/plan.js";
import { inventory } from "../helpers/inventory.js";
import { execute, type Harness, maxConcurrent, planFrom, records } from "./helpers/harness.js";

const GiB = 1024 ** 3;
const oneGpu = () => inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" }]);
let h: Harness | undefined;
let dirs: string[] = [];
afterEach(() => {
  h?.cleanup();
  h = undefined;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe("one reservation", () => {
  it("admission and over-reservation reports read the same figure, whichever step", () => {
    const plan = planFrom(`
version: 1
name: two-sizes
pipelines:
  - name: p
    steps:
      - { id: small, run: [node, record.mjs, a], memory: torch, vram: 2GiB }
      - { id: big, run: [node, record.mjs, b], memory: torch, vram: 6GiB, needs: [small] }
`);
    const p = plan.pipelines[0]!;
    expect(reservationBytes(p)).toBe(p.reservationBytes);
    // The small step is reported against what its pipeline was admitted with, not its own 2 GiB.
    expect(exceededReservation(p, 3 * GiB)).toBeNull();
    expect(exceededReservation(p, p.reservationBytes + 1)).toBe(p.reservationBytes);
    // A plan that reserves nothing for a GPU pipeline (written by another tool): its steps' most.
    const none: PlannedPipeline = { ...p, reservationBytes: 0 };
    expect(reservationBytes(none)).toBe(6 * GiB);
    expect(exceededReservation(none, 3 * GiB)).toBeNull();
    const [first, ...rest] = none.steps;
    const undeclared = (s: typeof first) => ({ ...s, vramBytes: null });
    expect(reservationBytes({ ...none, steps: [undeclared(first), ...rest.map(undeclared)] })).toBeNull();
  });
});

describe("admission at run time", () => {
  it("admits against the budget less the warm workers' reserve: two 25 GiB pipelines do not share 60 − 20 GiB", async () => {
    const plan = planFrom(
      `
version: 1
name: warm-reserve
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 4 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2] }
    steps:
      - { id: s, run: [node, record.mjs, "{p}", "300"], memory: torch, vram: 25GiB }
`,
      oneGpu(),
    );
    const gpu = plan.registry[0]!;
    expect(gpu.maxPipelines).toBe(2);
    expect(gpu.memoryBudgetBytes).toBe(60 * GiB);
    // As compile keeps it for warm workers (a plan with max_warm_per_gpu and a worker this big).
    gpu.warmReserveBytes = 20 * GiB;
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    expect(maxConcurrent(records(h.dir))).toBe(1);
    for (const c of h.lock.calls.filter((x) => x.call === "acquire"))
      expect(c.request).toMatchObject({ reservationBytes: 25 * GiB, budgetBytes: 40 * GiB });
  });

  it("an other-gpu rung's borrowed slot reserves the pipeline's memory against that GPU's budget", async () => {
    const plan = planFrom(`
version: 1
name: borrow
pipelines:
  - name: p
    steps:
      - id: s
        run: [node, oom-ladder/step.mjs, RECORD, until-moved]
        memory: torch
        vram: 4GiB
        on_oom: { ladder: [other-gpu] }
`);
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-borrow-"));
    dirs.push(dir);
    const record = join(dir, "seen.jsonl");
    const step = plan.pipelines[0]!.steps[0]!;
    step.argv = [step.argv[0], ...step.argv.slice(1).map((a) => (a === "RECORD" ? record : a))];
    const home = step.uuid;
    // The step's own GPU is nearly full; the other has room.
    const sampler = {
      gpus: async () =>
        plan.registry.map((r) => {
          const used = r.uuid === home ? r.memoryBytes - GiB : GiB;
          return {
            gpu: r.gpu,
            uuid: r.uuid,
            totalBytes: r.memoryBytes,
            usedBytes: used,
            freeBytes: r.memoryBytes - used,
          };
        }),
      cpu: async () => null,
      prefetch: () => {},
      fresh() {
        return this.gpus();
      },
    };
    h = await execute(plan, { sampler, dir: mkdtempSync(join(tmpdir(), "gpuplan-borrow-run-")) });
    expect(h.summary).toMatchObject({ ok: 1, failed: 0 });
    const seen = readFileSync(record, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(seen).toHaveLength(2);
    const other = plan.registry.find((r) => r.uuid !== home)!;
    const borrowed = h.lock.calls.find((c) => c.call === "acquire" && c.gpu === other.gpu);
    expect(borrowed?.request).toEqual({
      reservationBytes: plan.pipelines[0]!.reservationBytes,
      budgetBytes: other.memoryBudgetBytes - other.warmReserveBytes,
      wait: false,
    });
    expect(plan.pipelines[0]!.reservationBytes).toBeGreaterThan(0);
  });
});
