import { describe, expect, it } from "vitest";
import { describeStaleness } from "../../src/plan/staleness.js";

const plan = (fields: Record<string, unknown>) =>
  JSON.stringify({
    schema: "gpuplan/plan@2",
    gpuplanVersion: "1.0.0",
    source: { file: "p.yaml", sha256: "0".repeat(64) },
    inventory: { label: "target:cpu-only", fingerprint: `sha256:${"1".repeat(64)}`, gpus: 0 },
    ...fields,
  });

describe("staleness message", () => {
  it("shows an absent value as (none), never undefined", () => {
    const message = describeStaleness(plan({ gpuplanVersion: undefined }), plan({}));
    expect(message).toBe("it was written by gpuplan (none), this is 1.0.0");
  });

  it("shows a structured value as compact JSON, never [object Object]", () => {
    const message = describeStaleness(
      plan({ schema: "gpuplan/plan@2", source: { file: { a: [1] }, sha256: "0".repeat(64) } }),
      plan({}),
    );
    expect(message).toContain('it records the pipeline as {"a":[1]}, this compile as p.yaml');
    expect(message).not.toMatch(/undefined|\[object Object\]/);
  });

  it("shows a missing inventory label as (none)", () => {
    const message = describeStaleness(
      plan({ inventory: { fingerprint: `sha256:${"2".repeat(64)}`, gpus: 0 } }),
      plan({}),
    );
    expect(message).toContain("(none) → target:cpu-only");
    expect(message).not.toMatch(/undefined|\[object Object\]/);
  });
});
