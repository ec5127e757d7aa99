import { describe, expect, it } from "vitest";
import type { StepFailure } from "../../../src/run/outcome/run-tally.js";
import type { ColorLevel } from "../../../src/ui/paint.js";
import { createView, resolveUiMode } from "../../../src/ui/run/index.js";
import {
  ALL_PIPELINES,
  captureStream,
  ev,
  failedSummary,
  failureEvents,
  makePlan,
  plainText,
  RUN,
} from "./fixtures.js";

/** A plain view without colour, and its stderr. */
async function uncolouredView() {
  const err = captureStream();
  const view = await createView("plain", {
    plan: makePlan(),
    pipelines: ALL_PIPELINES,
    out: captureStream(),
    err,
    colorLevel: 0,
  });
  return { view, err };
}

async function plainRun(colorLevel: ColorLevel) {
  const out = captureStream();
  const err = captureStream();
  const view = await createView("plain", {
    plan: makePlan(),
    pipelines: ALL_PIPELINES,
    out,
    err,
    colorLevel,
  });
  for (const event of failureEvents()) view.onEvent(event);
  view.onOutput("plate-2", "segment", "stdout", "tile 1/96");
  view.onEvent(
    ev(30_000, "gpu.step.end", "plate-3", "segment", "cuda:0", {
      status: "timeout",
      exitCode: null,
      signal: "SIGTERM",
      durationMs: 600_000,
      attempt: 1,
    }),
  );
  view.onEvent(
    ev(30_001, "gpu.step.retry", "plate-3", "segment", "cpu", {
      attempt: 2,
      of: 2,
      reason: "oom",
      nextDevice: "cpu",
    }),
  );
  view.onEvent(ev(30_002, "gpu.step.start", "plate-3", "segment", "cpu", { attempt: 2, logPath: "p3.log" }));
  view.onOutput("plate-3", "segment", "stderr", "falling back to numpy");
  view.onEvent(
    ev(30_003, "gpu.step.end", "plate-3", "segment", "cpu", {
      status: "error",
      exitCode: null,
      signal: "SIGKILL",
      durationMs: 0,
      attempt: 2,
    }),
  );
  await view.close(failedSummary());
  return { out: out.text(), err: err.text() };
}

describe("the plain view", () => {
  it("stands in for a live view that cannot be loaded, saying why: the run goes on", async () => {
    // Node 20 with packages reached through links (pnpm's layout) failed inside ink's dependencies
    // with "onetime is not a function", and the run ended before its first step.
    const err = captureStream();
    const view = await createView(
      "tui",
      { plan: makePlan(), pipelines: ALL_PIPELINES, out: captureStream(), err, colorLevel: 0 },
      () => Promise.reject(new TypeError("onetime is not a function\u001b[2J")),
    );
    expect(err.text()).toMatch(
      /^warning {2}the live view \(--ui tui\) could not be loaded \(onetime is not a function\\x1b\[2J\); the run is shown in plain lines {2}\[live-view-unavailable\]\n/,
    );
    for (const event of failureEvents()) view.onEvent(event);
    await view.close(failedSummary());
    expect(err.text()).toContain("[plate-1/segment cuda:0] started");
    expect(err.text()).toContain("run 20261122-010000-abcd failed: 5 ok, 1 failed, 1 skipped");
  });

  it("writes prefixed lifecycle and output lines, then the summary, all on stderr", async () => {
    const { out, err } = await plainRun(0);
    expect(out).toBe("");
    expect(`\n${err}`).toMatchInlineSnapshot(`
      "
      [run] started run 20261122-010000-abcd (5 pipelines) in .gpuplan/runs/20261122-010000-abcd
      [plate-1 cuda:0] waiting for a slot on cuda:0
      [plate-1 cuda:0] got slot 0 of cuda:0 after 2ms
      [plate-1/segment cuda:0] started
      [plate-2 cuda:0] got slot 1 of cuda:0
      [plate-2/segment cuda:0] started
      [plate-3 cuda:0] waiting for a slot on cuda:0
      [train cuda:1] got slot 0 of cuda:1
      [train/fit cuda:1] waiting for all 2 slots of cuda:1 (exclusive)
      [train/fit cuda:1] got all 2 slots of cuda:1 (exclusive) after 10ms
      [train/fit cuda:1] started
      [report/export cpu] started
      [report/export cpu] finished ok in 12.2s
      [plate-1/segment cuda:0] failed: out of GPU memory (exit 1) after 19.9s
      [plate-3 cuda:0] got slot 0 of cuda:0 after 19.9s
      [plate-1/measure cuda:0] skipped: needs plate-1/segment, which failed
      [plate-2/segment cuda:0] failed: out of GPU memory (exit 1) after 20.9s
      [plate-2/segment cuda:0] retrying (attempt 2 of 2) on cuda:0 after oom
      [plate-2/segment cuda:0] started (attempt 2)
      [plate-2/segment cuda:0] tile 1/96
      [plate-3/segment cuda:0] failed: timed out after 10m
      [plate-3/segment cpu] retrying (attempt 2 of 2) on cpu after oom
      [plate-3/segment cpu] started (attempt 2)
      [plate-3/segment cpu] falling back to numpy
      [plate-3/segment cpu] failed: killed by SIGKILL after 0ms

      run 20261122-010000-abcd failed: 5 ok, 1 failed, 1 skipped in 1m35s
      run dir: .gpuplan/runs/20261122-010000-abcd

      ✗ plate-1/segment on cuda:0: oom (exit 1)
        last stderr lines:
          Traceback (most recent call last):
          torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB
        log:  .gpuplan/runs/20261122-010000-abcd/plate-1/segment.log
        hint: lower the step's batch size, or give it more memory (vram:) so fewer pipelines share cuda:0
      "
    `);
  });

  it("never moves the cursor, and colours only when asked", async () => {
    const plain = await plainRun(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for escape codes
    expect(plain.err).not.toMatch(/\u001b/);
    const coloured = await plainRun(1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: only SGR colour codes may appear
    expect(coloured.err.replace(/\u001b\[[0-9;]*m/g, "")).not.toMatch(/\u001b/);
    expect(coloured.err).toContain("\u001b[31m");
    expect(plainText(coloured.err)).toBe(plain.err);
  });

  it("an exclusive step on a one-slot GPU says it has the GPU, not that it got its pipeline's slot again", async () => {
    // What the executor sends for a one-step pipeline whose step is exclusive on a one-slot GPU:
    // the pipeline's slot, then the step's upgrade to every slot — the same one.
    const { view, err } = await uncolouredView();
    const lock = { gpu: "cuda:0", slots: [0] };
    view.onEvent(
      ev(0, "gpu.lock.acquired", "seg", null, "cuda:0", { ...lock, waitedMs: 0, exclusive: false }),
    );
    view.onEvent(
      ev(1, "gpu.lock.acquired", "seg", "fit", "cuda:0", { ...lock, waitedMs: 0, exclusive: true }),
    );
    view.onEvent(ev(2, "gpu.step.start", "seg", "fit", "cuda:0", { attempt: 1, logPath: "seg/fit.log" }));
    await view.close(null);
    expect(err.text()).toBe(
      "[seg cuda:0] got slot 0 of cuda:0\n[seg/fit cuda:0] has all of cuda:0 (exclusive)\n[seg/fit cuda:0] started\n",
    );
  });

  it("names a step that never started by its status alone, with no log line", async () => {
    const { view, err } = await uncolouredView();
    const [failure] = failedSummary().failures;
    if (!failure) throw new Error("fixture has a failure");
    const waited: StepFailure = {
      ...failure,
      status: "lock-timeout",
      exitCode: null,
      stderrTail: [],
      logPath: "",
      hint: "raise --lock-timeout",
    };
    await view.close({ ...failedSummary(), failures: [waited] });
    expect(err.text()).toContain("✗ plate-1/segment on cuda:0: lock-timeout\n  hint: raise --lock-timeout\n");
  });

  it("says which step used more VRAM than its reservation, as the step goes and in the summary", async () => {
    const { view, err } = await uncolouredView();
    const GiB = 1024 ** 3;
    const over = { attempt: 2, peakVramBytes: 9 * GiB, reservationBytes: 6 * GiB };
    view.onEvent(ev(1_000, "gpu.step.over_reservation", "plate-2", "segment", "cuda:1", over));
    const summary = { ...failedSummary(), failures: [], failed: 0 };
    await view.close({
      ...summary,
      overReservations: [{ pipeline: "plate-2", step: "segment", device: "cuda:1", ...over }],
    });
    const text = err.text();
    expect(text).toContain("used 9 GiB of VRAM, over its reservation of 6 GiB");
    expect(text).toContain(
      "! plate-2/segment on cuda:1 (attempt 2) used 9 GiB of VRAM, over its reservation of 6 GiB\n  hint: raise `vram`",
    );
  });

  it("over-reservations past ten are told per step: a warm worker's thousand tasks are one line", async () => {
    const { view, err } = await uncolouredView();
    const GiB = 1024 ** 3;
    const overReservations = Array.from({ length: 1000 }, (_, i) => ({
      pipeline: `plate-${i + 1}`,
      step: "segment",
      device: i % 2 ? "cuda:1" : "cuda:0",
      attempt: 1,
      peakVramBytes: (i === 500 ? 9 : 3) * GiB,
      reservationBytes: 2 * GiB,
    }));
    overReservations.push({ ...overReservations[0]!, step: "embed\u001b[2J", peakVramBytes: 5 * GiB });
    await view.close({ ...failedSummary(), failures: [], failed: 0, overReservations });
    const lines = err.text().split("\n");
    expect(lines.filter((l) => l.startsWith("! "))).toEqual([
      "! step segment: 1000 attempts (pipelines plate-1, plate-2, plate-3, …; on cuda:0, cuda:1) used up to 9 GiB of VRAM, over a reservation of at most 2 GiB",
      "! step embed\\x1b[2J: 1 attempt (pipelines plate-1; on cuda:0) used up to 5 GiB of VRAM, over a reservation of at most 2 GiB",
    ]);
    expect(err.text()).toContain("hint: raise `vram`");
  });

  it("a stderr line past 2,000 characters is shown cut in the summary, its colour sequence cut escaped", async () => {
    const { view, err } = await uncolouredView();
    const [first] = failedSummary().failures;
    // A 60 KB JSON dump on one line, a progress bar redrawn with CR, and a colour sequence the cut falls in.
    const dump = `{"error": "${"y".repeat(60_000)}"}`;
    const bar = `${"\r 10%".repeat(5_000)}\r100% done`;
    const cutColour = `${"z".repeat(1_998)}\u001b[31mred`;
    await view.close({
      ...failedSummary(),
      failures: [{ ...first!, stderrTail: [dump, bar, cutColour, "last"] }],
    });
    const lines = err.text().split("\n");
    const shown = lines.slice(lines.findIndex((l) => l.includes("last stderr lines:")) + 1).slice(0, 4);
    expect(shown[0]).toBe(
      `    ${dump.slice(0, 2_000)}… [${(dump.length - 2_000).toLocaleString("en-US")} more characters; the log has the whole line]`,
    );
    expect(shown[1]).toBe("    100% done");
    expect(shown[2]).toBe(`    ${"z".repeat(1_998)}\\x1b[… [6 more characters; the log has the whole line]`);
    expect(shown[3]).toBe("    last");
    expect(err.text()).not.toContain("\u001b");
  });

  it("failures past ten are grouped by step and reason: a thousand failed plates stay readable", async () => {
    const { view, err } = await uncolouredView();
    const [first] = failedSummary().failures;
    const failures = Array.from({ length: 1000 }, (_, i) => ({
      ...first!,
      pipeline: `plate-${i + 1}`,
      logPath: `.gpuplan/runs/${RUN}/plate-${i + 1}/segment.log`,
      device: i % 2 ? "cuda:1" : "cuda:0",
      ...(i === 500 ? { status: "timeout" as const, exitCode: null, signal: "SIGTERM" } : {}),
    }));
    // 25 other steps that failed once each: 20 group lines at most, then a count.
    for (let k = 0; k < 25; k++)
      failures.push({ ...first!, pipeline: "plate-1", step: `qc-${k}\u001b[2J`, logPath: "x.log" });
    await view.close({ ...failedSummary(), failed: failures.length, failures });
    const text = err.text();
    const lines = text.split("\n");
    // Ten blocks in full, each with its stderr tail and log.
    expect(lines.filter((l) => l.startsWith("✗ plate-"))).toHaveLength(10);
    expect(lines.filter((l) => l.includes("last stderr lines:"))).toHaveLength(10);
    expect(text).toContain(`log:  .gpuplan/runs/${RUN}/plate-10/segment.log`);
    expect(text).not.toContain("plate-11/segment.log");
    const grouped = lines.filter((l) => l.startsWith("✗ ") && !l.startsWith("✗ plate-"));
    expect(grouped).toEqual([
      "✗ 989 more failures of step segment: oom (exit 1) (pipelines plate-11, plate-12, plate-13, …; on cuda:0, cuda:1)",
      "✗ 1 more failure of step segment: timeout (killed by SIGTERM) (pipelines plate-501; on cuda:0)",
      ...Array.from(
        { length: 18 },
        (_, k) => `✗ 1 more failure of step qc-${k}\\x1b[2J: oom (exit 1) (pipelines plate-1; on cuda:0)`,
      ),
      "✗ 7 more failures of other steps or reasons",
    ]);
    expect(text).toContain(`every failure: .gpuplan/runs/${RUN}/events.jsonl (gpu.step.end)`);
    expect(lines.length).toBeLessThan(120);
  });

  it("ten failures or fewer are each told in full", async () => {
    const { view, err } = await uncolouredView();
    const [first] = failedSummary().failures;
    const failures = Array.from({ length: 10 }, (_, i) => ({ ...first!, pipeline: `plate-${i + 1}` }));
    await view.close({ ...failedSummary(), failed: 10, failures });
    expect(
      err
        .text()
        .split("\n")
        .filter((l) => l.startsWith("✗ ")),
    ).toHaveLength(10);
    expect(err.text()).not.toContain("more failure");
    expect(err.text()).not.toContain("every failure:");
  });

  it("says what an on_oom rung did when the retry is announced", async () => {
    const { view, err } = await uncolouredView();
    const GiB = 1024 ** 3;
    const retry = { attempt: 2, of: 3, reason: "oom" as const };
    view.onEvent(
      ev(1_000, "gpu.step.retry", "plate-2", "segment", "cuda:0", {
        ...retry,
        rung: "wait",
        scale: 1,
        waitedMs: 3_200,
        freeBytes: 40 * GiB,
      }),
    );
    view.onEvent(
      ev(2_000, "gpu.step.retry", "plate-2", "segment", "cuda:0", {
        ...retry,
        attempt: 3,
        rung: "smaller",
        scale: 0.5,
      }),
    );
    await view.close({ ...failedSummary(), failures: [], failed: 0 });
    expect(err.text()).toContain(
      "retrying (attempt 2 of 3) on cuda:0 after oom: wait (waited 3.2s, 40 GiB free)",
    );
    expect(err.text()).toContain("retrying (attempt 3 of 3) on cuda:0 after oom: smaller (scale 0.5)");
  });

  it("says how to resume an interrupted run", async () => {
    const { view, err } = await uncolouredView();
    await view.close({ ...failedSummary(), failures: [], failed: 0, interrupted: true });
    expect(err.text()).toContain(`run ${RUN} interrupted: 5 ok, 0 failed, 1 skipped in 1m35s`);
    expect(err.text()).toContain(`Resume with: gpuplan run --resume ${RUN}`);
  });

  it("offers no resume when the session says none can work (its journal was deleted)", async () => {
    const { view, err } = await uncolouredView();
    await view.close(
      { ...failedSummary(), failures: [], failed: 0, interrupted: true },
      { resumable: false },
    );
    expect(err.text()).toContain(`run ${RUN} interrupted: 5 ok, 0 failed, 1 skipped in 1m35s`);
    expect(err.text()).not.toContain("--resume");
  });

  it("offers no bare resume while Slurm jobs it could not cancel may still run: it says what comes first", async () => {
    const { view, err } = await uncolouredView();
    await view.close({
      ...failedSummary(),
      failures: [],
      failed: 0,
      interrupted: true,
      // sbatch's words: outside text.
      uncancelledJobs: ["4242", "4243\x1b[2J"],
    });
    // A resume now is refused (slurm-run-active) while the jobs are in Slurm.
    expect(err.text()).not.toContain("Resume with:");
    expect(err.text()).toContain(
      "Slurm jobs 4242 '4243\\x1b[2J' may still be queued or running, and --resume is refused until they have left Slurm: " +
        `scancel 4242 '4243\\x1b[2J' (or wait for them: gpuplan status ${RUN}), then resume with: gpuplan run --resume ${RUN}`,
    );
    expect(err.text()).not.toContain("\x1b[2J");
  });
});

describe("plain view: warm workers", () => {
  it("says when a worker loads, is ready and is stopped, and not for every reuse", async () => {
    const { view, err } = await uncolouredView();
    const fields = { model_key: "cyto3", allocated_devices: ["cuda:0"] };
    view.onEvent(
      ev(0, "gpu.model.load_start", "plate-1", "segment", "cuda:0", { ...fields, ready_timeout_ms: 60_000 }),
    );
    view.onEvent(
      ev(1500, "gpu.model.load_complete", "plate-1", "segment", "cuda:0", {
        ...fields,
        duration_ms: 1500,
        pid: 4242,
      }),
    );
    view.onEvent(
      ev(1600, "gpu.model.cache_reuse", "plate-2", "segment", "cuda:0", { ...fields, idle_ms: 3 }),
    );
    view.onEvent(ev(9000, "gpu.model.cache_evict", null, null, "cuda:0", { ...fields, reason: "shutdown" }));
    // Lines go out in batches, at most 20 ms late.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = plainText(err.text());
    expect(text).toContain("plate-1/segment cuda:0] loading worker cyto3");
    expect(text).toMatch(/worker cyto3 ready in 1\.5s/);
    expect(text).toContain("worker cyto3 stopped (shutdown)");
    expect(text).not.toContain("idle");
  });
});

describe("resolveUiMode", () => {
  const tty = { isTTY: true, columns: 120 };
  it("auto is the live view only on a sized terminal outside CI (as ink judges CI)", () => {
    expect(resolveUiMode("auto", tty, { TERM: "xterm" })).toBe("tui");
    expect(resolveUiMode("auto", { isTTY: false }, { TERM: "xterm" })).toBe("plain");
    // A pty nobody gave a size: ink would draw zero columns wide.
    expect(resolveUiMode("auto", { isTTY: true, columns: 0 }, { TERM: "xterm" })).toBe("plain");
    expect(resolveUiMode("auto", { isTTY: true }, { TERM: "xterm" })).toBe("plain");
    expect(resolveUiMode("auto", tty, { TERM: "dumb" })).toBe("plain");
    for (const env of [{ CI: "true" }, { CI: "" }, { CONTINUOUS_INTEGRATION: "1" }, { CI_JOB_ID: "7" }])
      expect(resolveUiMode("auto", tty, { TERM: "xterm", ...env })).toBe("plain");
    for (const env of [{ CI: "0" }, { CI: "false" }])
      expect(resolveUiMode("auto", tty, { TERM: "xterm", ...env })).toBe("tui");
  });

  it("an explicit mode is kept", () => {
    expect(resolveUiMode("tui", { isTTY: false }, { CI: "1" })).toBe("tui");
    expect(resolveUiMode("json", tty, {})).toBe("json");
  });
});
