// The generated validators' declarations sit in src/generated/*.d.ts, which `skipLibCheck` does not
// check: a declaration importing a type that no longer exists would silently become `any`. Pin
// their type here, where the type checker does look.
import { describe, expect, expectTypeOf, it } from "vitest";
import validateCompileReport from "../../src/generated/compile-report-validator.js";
import validateInventory from "../../src/generated/inventory-validator.js";
import validateLocks from "../../src/generated/locks-validator.js";
import validatePipeline from "../../src/generated/pipeline-validator.js";
import validatePlan from "../../src/generated/plan-validator.js";
import validateRunEvent from "../../src/generated/run-events-validator.js";
import type { AjvError } from "../../src/problems/schema-errors.js";

describe("generated validators", () => {
  it("are typed functions with ajv's error list, not any", () => {
    for (const validate of [
      validatePipeline,
      validateInventory,
      validatePlan,
      validateCompileReport,
      validateLocks,
    ]) {
      expectTypeOf(validate).not.toBeAny();
      expectTypeOf(validate).parameters.toEqualTypeOf<[unknown]>();
      expectTypeOf(validate).returns.toEqualTypeOf<boolean>();
      expectTypeOf(validate.errors).toEqualTypeOf<AjvError[] | null | undefined>();
      expect(validate({})).toBe(false);
      expect(validate.errors?.length).toBeGreaterThan(0);
    }
  });

  it("checks a run event against its own kind only (the `event` field picks it)", () => {
    // Every line of events.jsonl is checked as a report or a Slurm follower reads it. With a plain
    // oneOf and allErrors, each line was tried against all the kinds, and the misses' errors built:
    // ~55 µs an event, most of a big report's read (a 25 MB run: 8.2 s, 3.7 s with the dispatch).
    const end = {
      ts: "2026-11-23T10:00:00.000Z",
      event: "gpu.step.end",
      run: "20261123T100000Z-aaaaaa",
      pipeline: "p",
      step: "s",
      device: "cpu",
      attempt: 1,
      status: "ok",
      exitCode: 0,
      signal: null,
      durationMs: 5,
    };
    expect(validateRunEvent(end), JSON.stringify(validateRunEvent.errors)).toBe(true);
    const { durationMs: _, ...broken } = end;
    expect(validateRunEvent(broken)).toBe(false);
    // Its own kind's one complaint, not every other kind's misses beside it.
    expect(validateRunEvent.errors?.map((e) => [e.keyword, e.params])).toEqual([
      ["required", { missingProperty: "durationMs" }],
    ]);
    expect(validateRunEvent({ ...end, event: "gpu.step.bogus" })).toBe(false);
    expect(validateRunEvent({ ...end, event: 5 })).toBe(false);
  });
});
