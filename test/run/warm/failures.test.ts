import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeEnding, describeFailure } from "../../../src/ui/run/format.js";
import { execute, type Harness } from "../helpers/harness.js";
import { count, warmPlan, workerRecords, workerStep } from "./helpers.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

/** Pipelines p-1, p-2, … on one slot, in order, each sending its own flag to one key. */
function modes(list: string[], options: Parameters<typeof workerStep>[1] = {}) {
  const plan = warmPlan(
    workerStep("seg", { key: "m", args: ["--mode"], ...options }),
    "max_pipelines_per_gpu: 1",
    list.length,
  );
  // The matrix gives p-1, p-2, …: each pipeline's task gets its own flag.
  plan.pipelines.forEach((p, i) => {
    for (const s of p.steps) if (s.worker) s.worker.args = [list[i]!];
  });
  return plan;
}

describe("warm workers: failures", () => {
  it("a worker that crashes mid-task: error eviction, the step fails, the next task loads a fresh one", async () => {
    h = await execute(modes(["--crash", "--ok", "--ok"]));
    expect(h.summary).toMatchObject({ ok: 2, failed: 1 });
    expect(h.summary.failures[0]).toMatchObject({ pipeline: "p-1", status: "error" });
    expect(h.summary.failures[0]!.hint).toContain("the next task starts a fresh worker");
    expect(count(h.events, "gpu.model.cache_evict", "error")).toBe(1);
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    const loads = workerRecords(h.dir).filter((r) => r.what === "load");
    expect(new Set(loads.map((r) => r.pid)).size).toBe(2);
    expect(h.lock.held.get("cuda:0")).toBe(0);
  });

  it("a worker that exits 0 without answering: said so, not a bare `exit 0` that reads as success", async () => {
    h = await execute(modes(["--exit-0"]));
    const failure = h.summary.failures[0]!;
    expect(failure).toMatchObject({ pipeline: "p-1", status: "error", exitCode: 0 });
    expect(describeFailure(failure)).toBe("exited 0 without answering its task");
    expect(failure.hint).toContain("the worker exited without answering its task (exit code 0)");
    const end = h.events.find((e) => e.event === "gpu.step.end")!;
    expect(end.event === "gpu.step.end" && describeEnding(end)).toMatch(
      /^failed: exited 0 without answering its task after /,
    );
  });

  it("a second reply to a task, while idle: the next task is not blamed, it starts a fresh worker (the guide's promise)", async () => {
    h = await execute(modes(["--reply-twice", "--ok"]));
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    expect(count(h.events, "gpu.model.cache_evict", "error")).toBe(1);
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    // The broken worker was sent nothing more.
    const tasks = workerRecords(h.dir).filter((r) => r.what === "task");
    expect(new Set(tasks.map((r) => r.pid)).size).toBe(2);
    // Its log and the next task's log say whose reply it was.
    expect(readFileSync(join(h.runDir, "logs", "p-2@seg.log"), "utf8")).toContain(
      "broke the protocol after its last task: the worker answered task p-1/seg#1 a second time (one reply per task), after that task had ended; a fresh one is started",
    );
  });

  it("a second reply to a task while the next one runs: that task fails, naming the task answered twice; no `exit unknown`", async () => {
    const plan = modes(["--ok", "--ok"]);
    plan.pipelines[0]!.steps[0]!.worker!.args = ["--reply-twice-late", "300"];
    plan.pipelines[1]!.steps[0]!.worker!.args = ["--sleep", "3000"];
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 1, failed: 1 });
    const failure = h.summary.failures[0]!;
    expect(failure).toMatchObject({ pipeline: "p-2", status: "error", exitCode: null });
    expect(failure.hint).toContain(
      "protocol: the worker answered task p-1/seg#1 a second time (one reply per task), while task p-2/seg#1 ran",
    );
    const end = h.events.find((e) => e.event === "gpu.step.end" && e.pipeline === "p-2")!;
    expect(end.event === "gpu.step.end" && describeEnding(end)).toMatch(/^failed: error after /);
  });

  it("a reply line over the 16 MiB limit (64 MiB without a newline) fails its task with a clear error, memory bounded", async () => {
    const before = process.memoryUsage().rss;
    const started = performance.now();
    h = await execute(modes(["--flood", "--ok"]));
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(h.summary).toMatchObject({ ok: 1, failed: 1 });
    expect(h.summary.failures[0]).toMatchObject({ pipeline: "p-1", status: "error" });
    expect(h.summary.failures[0]!.hint).toContain(
      "protocol: a stdout line longer than 16 MiB without a newline (a reply must fit in one line of at most that)",
    );
    // The broken worker is replaced; the next task runs in a fresh one.
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    // 64 MiB went through; gpuplan held at most the 16 MiB limit of it (32 MiB as UTF-16), not all.
    expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
  }, 30_000);

  it("an error reply fails the step and replaces the worker", async () => {
    h = await execute(modes(["--error", "--ok"]));
    expect(h.summary).toMatchObject({ ok: 1, failed: 1 });
    expect(h.summary.failures[0]!.hint).toContain("bad input (fixture)");
    expect(count(h.events, "gpu.model.cache_evict", "error")).toBe(1);
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
  });

  it("an error reply of a megabyte is cut to 2,000 characters where it is said (the step log keeps it whole)", async () => {
    h = await execute(modes(["--error-huge"]));
    const failure = h.summary.failures[0]!;
    // It was printed whole, twice, and written whole, twice, into the step's gpu.step.end.
    expect(failure.hint).toContain("huge");
    expect(failure.hint).toContain("… (1046584 more characters)");
    expect(failure.hint?.length).toBeLessThan(2500);
    const end = h.events.find((e) => e.event === "gpu.step.end")!;
    expect(JSON.stringify(end).length).toBeLessThan(6000);
    // The step's log keeps the whole reply's error.
    const log = readFileSync(join(h.runDir, "logs", "p-1@seg.log"), "utf8");
    expect(log).toContain(`x`.repeat(1024 * 1024));
  });

  it("no ready line within ready_timeout: load-timeout, retried once, then the step fails", async () => {
    const plan = warmPlan(
      workerStep("seg", { flags: ["--never-ready"], extra: "" }).replace(
        "worker:\n",
        "worker:\n          ready_timeout: 300ms\n",
      ),
    );
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 0, failed: 1 });
    expect(h.summary.failures[0]).toMatchObject({ status: "load-timeout" });
    expect(h.summary.failures[0]!.hint).toContain("ready_timeout (300 ms)");
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    const retries = h.events.filter((e) => e.event === "gpu.step.retry");
    expect(retries.map((e) => e.reason)).toEqual(["load-timeout"]);
    const ends = h.events.filter((e) => e.event === "gpu.step.end").map((e) => [e.status, e.attempt]);
    expect(ends).toEqual([
      ["load-timeout", 1],
      ["load-timeout", 2],
    ]);
    // Both workers were stopped: their records end with no task.
    expect(workerRecords(h.dir).filter((r) => r.what === "task")).toEqual([]);
  });

  it("an OOM reply is oom: on_oom retries it, then falls back to a worker on the CPU", async () => {
    const plan = modes(["--oom"], { extra: "on_oom: { retries: 1, fallback: cpu }" });
    h = await execute(plan);
    const ends = h.events.filter((e) => e.event === "gpu.step.end").map((e) => [e.status, e.device]);
    expect(ends).toEqual([
      ["oom", "cuda:0"],
      ["oom", "cuda:0"],
      ["oom", "cpu"],
    ]);
    expect(h.summary.failures[0]).toMatchObject({ status: "oom", device: "cpu" });
    expect(count(h.events, "gpu.step.oom")).toBe(3);
    // The CPU attempt's worker sees no GPU.
    const loads = workerRecords(h.dir).filter((r) => r.what === "load");
    expect(loads.at(-1)!.cuda).toBe("");
    expect(h.events.filter((e) => e.event === "gpu.model.load_start").at(-1)?.allocated_devices).toEqual([
      "cpu",
    ]);
  });

  it("an OOM while loading (framework message on stderr) is oom too", async () => {
    h = await execute(warmPlan(workerStep("seg", { flags: ["--oom-on-load"] })));
    expect(h.summary.failures[0]).toMatchObject({ status: "oom" });
    expect(h.summary.failures[0]!.hint).toContain("while loading");
    const log = readFileSync(join(h.runDir, "logs", "p-1@seg.log"), "utf8");
    expect(log).toContain("CUDA out of memory");
  });
});
