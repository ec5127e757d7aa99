// The on_oom ladder end to end on fake NVML GPUs: steps that run out of memory (PyTorch's message
// on stderr) until a rung makes them fit — a smaller work size read from GPUPLAN_OOM_SCALE, a
// wait until the GPU has the step's reservation free, another GPU, the whole GPU — each rung a
// gpu.step.retry event saying what it did.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

const GiB = 1024 ** 3;
let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

interface Seen {
  attempt: number;
  scale: number;
  gpus: string;
  budget: string | null;
  at: number;
}

/** Run one pipeline whose step `s` runs `step.mjs record.jsonl MODE ARG` with `onOom`; events and what each attempt saw. */
function runLadder(
  mode: string,
  onOom: string,
  options: { vram?: string; scenario?: string; before?: (cwd: string) => void } = {},
) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  copyFileSync(join(ROOT, "fixtures/run/oom-ladder/step.mjs"), join(cwd, "step.mjs"));
  copyFileSync(join(ROOT, "fixtures/report/two-gpus.scenario"), join(cwd, "gpus.scenario"));
  if (options.scenario) appendFileSync(join(cwd, "gpus.scenario"), `\n${options.scenario}\n`);
  mkdirSync(join(cwd, "locks"));
  writeFileSync(
    join(cwd, "p.yaml"),
    `version: 1
name: ladder
registry: { max_pipelines_per_gpu: 2 }
pipelines:
  - name: p
    steps:
      - id: s
        run: [node, step.mjs, record.jsonl, ${mode.split(" ").join(", ")}]
        memory: torch
        vram: ${options.vram ?? "4GiB"}
        on_oom: ${onOom}
`,
  );
  options.before?.(cwd);
  const env = {
    ...fakeEnv(
      "busy.scenario",
      { nvml: fakeLib("nvml") },
      { GPUPLAN_FAKE_SCENARIO: join(cwd, "gpus.scenario") },
    ),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    CI: "1",
  };
  const r = gpuplan(["run", "p.yaml", "--ui", "json"], { cwd, env });
  const events: Ev[] = r.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const seen: Seen[] = readFileSync(join(cwd, "record.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  return { r, events, seen, cwd };
}

type Ev = { event: string; [field: string]: unknown };
const retries = (events: Ev[]) => events.filter((e) => e.event === "gpu.step.retry");
const UUIDS = ["GPU-5b0e6a8c-2d1f-4c3b-9a8e-7f6d5c4b3a21", "GPU-a1c2e3f4-5b6d-4e7f-8091-a2b3c4d5e6f7"];

describe.skipIf(!fakeLibsBuilt)("on_oom ladder (fake NVML)", () => {
  it("smaller: every attempt reads GPUPLAN_OOM_ATTEMPT and GPUPLAN_OOM_SCALE, halved (or scaled as told) by each smaller rung", () => {
    const { r, events, seen } = runLadder(
      "until-scale 0.125",
      "{ ladder: [smaller, { smaller: 0.25 }, cpu] }",
    );
    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(0);
    expect(seen.map((s) => [s.attempt, s.scale])).toEqual([
      [1, 1],
      [2, 0.5],
      [3, 0.125],
    ]);
    expect(retries(events)).toEqual([
      expect.objectContaining({ attempt: 2, of: 4, reason: "oom", rung: "smaller", scale: 0.5 }),
      expect.objectContaining({ attempt: 3, of: 4, reason: "oom", rung: "smaller", scale: 0.125 }),
    ]);
    // Still on its GPU: the CPU rung was not needed.
    expect(seen.every((s) => UUIDS.includes(s.gpus))).toBe(true);
  }, 60_000);

  it("retries and fallback read as a ladder: retry, then cpu", () => {
    const { r, events, seen } = runLadder("until-attempt 9", "{ retries: 1, fallback: cpu }");
    expect(r.exitCode).toBe(1);
    expect(seen.map((s) => s.gpus === "")).toEqual([false, false, true]);
    expect(retries(events).map((e) => [e.rung, e.device === "cpu", e.nextDevice])).toEqual([
      ["retry", false, undefined],
      ["cpu", true, "cpu"],
    ]);
  }, 60_000);

  it("wait: the retry starts once the GPU has the step's reservation free", () => {
    // Both GPUs nearly full (under 4 GiB free); the first attempt has 70 GiB freed a second after it fails.
    const full = `nvml.0.used = ${78 * GiB}\nnvml.1.used = ${21 * GiB}`;
    const { r, events, seen } = runLadder("free-later freed.scenario", "{ ladder: [wait] }", {
      scenario: full,
      before: (cwd) =>
        writeFileSync(join(cwd, "freed.scenario"), `\nnvml.0.used = ${8 * GiB}\nnvml.1.used = ${1 * GiB}\n`),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const [retry] = retries(events);
    expect(retry).toMatchObject({ rung: "wait", attempt: 2 });
    expect(Number(retry?.waitedMs)).toBeGreaterThanOrEqual(700);
    expect(Number(retry?.freeBytes)).toBeGreaterThanOrEqual(4 * GiB);
    expect(retry?.note).toBeUndefined();
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(700);
  }, 60_000);

  it("other-gpu: the retry runs on the run's GPU with more free memory, in a slot free at once", () => {
    // Whichever GPU the plan picked is made nearly full; the other has room.
    const { r, events, seen } = runLadder("until-moved", "{ ladder: [other-gpu] }", {
      vram: "2GiB",
      before: (cwd) => {
        const compiled = gpuplan(["run", "p.yaml", "--dry-run", "--ui", "json"], {
          cwd,
          env: {
            ...fakeEnv(
              "busy.scenario",
              { nvml: fakeLib("nvml") },
              { GPUPLAN_FAKE_SCENARIO: join(cwd, "gpus.scenario") },
            ),
            CI: "1",
          },
        });
        const device = String(JSON.parse(compiled.stdout).pipelines[0].steps[0].device);
        const index = device.split(":")[1];
        const total = index === "0" ? 80 : 22.5;
        appendFileSync(join(cwd, "gpus.scenario"), `\nnvml.${index}.used = ${(total - 1) * GiB}\n`);
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.gpus).not.toBe(seen[0]!.gpus);
    expect(UUIDS).toContain(seen[1]!.gpus);
    const [retry] = retries(events);
    expect(retry).toMatchObject({ rung: "other-gpu", nextDevice: retry?.device });
    expect(Number(retry?.freeBytes)).toBeGreaterThan(2 * GiB);
    // The borrowed slot is taken and given back like any other.
    const gpuOf = (uuid: string) => (uuid === UUIDS[0] ? "cuda:0" : "cuda:1");
    expect(retry?.device).toBe(gpuOf(seen[1]!.gpus));
  }, 60_000);

  it("exclusive: the retry has every slot of its GPU and the GPU's whole budget", () => {
    const { r, events, seen } = runLadder("until-attempt 2", "{ ladder: [exclusive] }");
    expect(r.exitCode, r.stderr).toBe(0);
    const names = events.map((e) => `${e.event}${e.exclusive ? "(exclusive)" : ""}`);
    const retryAt = names.indexOf("gpu.step.retry");
    expect(names.indexOf("gpu.lock.acquired(exclusive)")).toBeGreaterThan(names.indexOf("gpu.step.end"));
    expect(names.indexOf("gpu.lock.acquired(exclusive)")).toBeLessThan(retryAt);
    expect(retries(events)[0]).toMatchObject({ rung: "exclusive" });
    expect(Number(seen[1]!.budget)).toBeGreaterThan(Number(seen[0]!.budget));
  }, 60_000);

  it("a CPU fallback that fails otherwise (the step needs a GPU) says it was the fallback after an OOM", () => {
    const { r, events } = runLadder("gpu-only", "{ retries: 0, fallback: cpu }");
    expect(r.exitCode).toBe(1);
    const ends = events.filter((e) => e.event === "gpu.step.end");
    expect(ends.map((e) => [e.device === "cpu" ? "cpu" : "gpu", e.status])).toEqual([
      ["gpu", "oom"],
      ["cpu", "error"],
    ]);
    // Before: "see the last lines of stderr above", under a framework's "No CUDA GPUs are available".
    expect(ends[1]!.hint).toContain("on_oom fallback to the CPU");
    expect(ends[1]!.hint).toContain("ran out of GPU memory");
    const summary = events.find((e) => e.event === "run.summary") as
      | { failures?: { hint: string }[] }
      | undefined;
    expect(summary?.failures?.[0]?.hint).toContain("should not end its on_oom ladder with cpu");
  }, 60_000);
});
