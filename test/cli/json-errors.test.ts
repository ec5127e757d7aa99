// Under --json, a command that cannot do its job still prints JSON on stdout — a gpuplan/error@1
// document with the failure's code and the exit status — and says the same on stderr for a person;
// stdout had nothing, which `| jq` reads as no input and succeeds on. compile keeps its own report;
// run --json without --dry-run (the events as JSON Lines) prints nothing that is not an event.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import validate from "../../src/generated/error-validator.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

const MISSING = "/nonexistent/gpuplan-test-library.so";
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

const cases: [string[], string][] = [
  [["status", "nope", "--json"], "unknown-run"],
  [["runs", "--json", "--keep", "2"], "conflicting-options"],
  [["runs", "--json", "--bogus"], "unknown-option"],
  [["detect", "--json", "--timeout", "banana"], "invalid-duration"],
  // Well-formed flags: detect's own fast path (detect-cli.ts), not commander's.
  [["detect", "--json", "--save", "/dev/null/inventory.json"], "unwritable-file"],
  [["targets", "--json", "extra"], "too-many-arguments"],
  [["presets", "--json", "--nope"], "unknown-option"],
  [["locks", "--json", "--lock-dir", ""], "invalid-option-value"],
  [["export", "nope.json", "--to", "slurm", "-o", "out", "--json"], "unreadable-file"],
  [["run", "nope.json", "--dry-run", "--json"], "unreadable-file"],
  [["run", "nope.json", "--ui=json", "--dry-run"], "unreadable-file"],
];

describe("--json failures are a gpuplan/error@1 document on stdout", () => {
  it.each(cases)("gpuplan %j: %s", (args, code) => {
    const r = gpuplan(args, { cwd: t.dir, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(hasCrashed(r)).toBe(false);
    const doc = JSON.parse(r.stdout);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc).toMatchObject({ schema: "gpuplan/error@1", ok: false, exitCode: 2 });
    expect(doc.problems).toEqual([expect.objectContaining({ code, severity: "error" })]);
    expect(r.stderr).toContain(`gpuplan: error: ${doc.problems[0].message}  [${code}]`);
  });

  it("run --dry-run --json of a plan this machine cannot run: the problems that stopped it, located, exit 1", () => {
    const plan = join(t.dir, "h100.json");
    const compile = gpuplan([
      "compile",
      join(ROOT, "examples/cell-painting.yaml"),
      "--target",
      "dgx-h100",
      "-o",
      plan,
    ]);
    expect(compile.exitCode, compile.stderr).toBe(0);
    const r = gpuplan(["run", plan, "--dry-run", "--json"], { cwd: t.dir, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc).toMatchObject({ schema: "gpuplan/error@1", ok: false, exitCode: 1 });
    expect(doc.problems[0]).toMatchObject({ code: "gpu-missing", severity: "error", file: plan });
    expect(r.stderr).toContain("[gpu-missing]");
    // Without --dry-run, --json is the events stream: no document that is not an event.
    const streamed = gpuplan(["run", plan, "--json"], { cwd: t.dir, env: NO_GPU });
    expect(streamed.exitCode).toBe(1);
    expect(streamed.stdout).toBe("");
  });

  it("without --json, stdout stays empty; run --json's event stream gets no document; compile keeps its report", () => {
    for (const args of [
      ["status", "nope"],
      ["run", "nope.json", "--json"],
      ["run", "nope.json", "--ui", "json"],
      ["status", "nope", "--", "--json"],
    ]) {
      const r = gpuplan(args, { cwd: t.dir, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("gpuplan: error:");
    }
    const compile = gpuplan(["compile", "nope.yaml", "--json"], { cwd: t.dir, env: NO_GPU });
    expect(JSON.parse(compile.stdout).schema).toBe("gpuplan/compile-report@1");
  });
});
