// The run summed up from its events: what the executor returns and the views count.
import { describe, expect, it } from "vitest";
import { createTally, summarize, tallyEvent } from "../../../src/run/outcome/run-tally.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import { ev, failureEvents, makePlan } from "../../ui/run/fixtures.js";

const tallyOf = (events: readonly RunEvent[]) => events.reduce(tallyEvent, createTally(makePlan().pipelines));

describe("run tally", () => {
  it("counts each step once, when its last attempt ends: a retried OOM is not a failure until it is the last", () => {
    const tally = tallyOf(failureEvents());
    // report/export ok; plate-1/segment failed (no retries planned), its measure skipped;
    // plate-2/segment's first OOM is followed by a planned retry, still running.
    expect([tally.ok, tally.failed, tally.skipped]).toEqual([1, 1, 1]);
    expect(tally.failures.map((f) => `${f.pipeline}/${f.step}:${f.status}`)).toEqual(["plate-1/segment:oom"]);
    const after = tallyEvent(
      tally,
      ev(22_000, "gpu.step.end", "plate-2", "segment", "cuda:0", {
        status: "oom",
        exitCode: 1,
        signal: null,
        durationMs: 1,
        attempt: 2,
        hint: "lower the batch size",
        stderrTail: ["CUDA out of memory"],
        logPath: "p2@2.out.log",
      }),
    );
    expect(after.failures.at(-1)).toEqual({
      pipeline: "plate-2",
      step: "segment",
      device: "cuda:0",
      status: "oom",
      exitCode: 1,
      signal: null,
      stderrTail: ["CUDA out of memory"],
      logPath: "p2@2.out.log",
      hint: "lower the batch size",
    });
  });

  it("counts a step an earlier attempt finished as ok, a lock timeout as a failure without a log, and reads the end", () => {
    const tally = tallyOf([
      ev(0, "run.start", null, null, null, {
        schema: "gpuplan/run-events@1",
        pipelines: ["plate-1"],
        runDir: "d",
      }),
      ev(1, "gpu.step.skip", "plate-1", "segment", "cuda:0", { reason: "done before", cause: "completed" }),
      ev(2, "gpu.step.end", "plate-1", "measure", "cuda:0", {
        status: "lock-timeout",
        exitCode: null,
        signal: null,
        durationMs: 300,
        attempt: 1,
        hint: "raise --lock-timeout",
        stderrTail: [],
      }),
      ev(3, "run.end", null, null, null, {
        durationMs: 3,
        status: "interrupted",
        ok: 1,
        failed: 1,
        skipped: 0,
      }),
    ]);
    expect(summarize(tally)).toEqual({
      run: "20261122-010000-abcd",
      runDir: "d",
      ok: 1,
      failed: 1,
      skipped: 0,
      interrupted: true,
      durationMs: 3,
      failures: [
        {
          pipeline: "plate-1",
          step: "measure",
          device: "cuda:0",
          status: "lock-timeout",
          exitCode: null,
          signal: null,
          stderrTail: [],
          logPath: "",
          hint: "raise --lock-timeout",
        },
      ],
    });
  });

  it("never changes the tally it is given", () => {
    const before = createTally(makePlan().pipelines);
    const frozen = structuredClone({ ...before, policies: [...before.policies] });
    tallyOf(failureEvents());
    failureEvents().reduce(tallyEvent, before);
    expect({ ...before, policies: [...before.policies] }).toEqual(frozen);
  });
});
