// The generated validators' declarations sit in src/generated/*.d.ts, which `skipLibCheck` does not
// check: a declaration importing a type that no longer exists would silently become `any`. Pin
// their type here, where the type checker does look.
import { describe, expect, expectTypeOf, it } from "vitest";
import validateCompileReport from "../../src/generated/compile-report-validator.js";
import validateInventory from "../../src/generated/inventory-validator.js";
import validateLocks from "../../src/generated/locks-validator.js";
import validatePipeline from "../../src/generated/pipeline-validator.js";
import validatePlan from "../../src/generated/plan-validator.js";
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
});
