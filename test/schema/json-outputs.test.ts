// Every JSON document a command prints is described by a schema in schemas/, carries that
// schema's version in its `schema` field, and is spelt `--json` on every command: the real
// outputs of the built CLI are validated here against the generated validators.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import validateDryRun from "../../src/generated/dry-run-validator.js";
import validateInventory from "../../src/generated/inventory-validator.js";
import validateLocks from "../../src/generated/locks-validator.js";
import validatePresets from "../../src/generated/presets-validator.js";
import validateTargets from "../../src/generated/targets-validator.js";
import { createSlotLock } from "../../src/run/lock/index.js";
import { fakeEnv } from "../detect/fake-libs.js";
import { gpuplan, ROOT } from "../helpers/cli.js";

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

type Validator = ((data: unknown) => boolean) & { errors?: unknown };

/** Parse stdout, check its `schema` field (written in the schema file too), and validate. */
function expectDocument(
  stdout: string,
  schemaFile: string,
  version: string,
  validate: Validator,
): Record<string, unknown> {
  const doc = JSON.parse(stdout) as Record<string, unknown>;
  expect(doc.schema).toBe(version);
  expect(readFileSync(join(ROOT, "schemas", schemaFile), "utf8")).toContain(`"const": "${version}"`);
  expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
  return doc;
}

describe("JSON outputs match their schemas", () => {
  it("targets --json (gpuplan/targets@1)", () => {
    const r = gpuplan(["targets", "--json"]);
    expect(r.exitCode).toBe(0);
    const doc = expectDocument(r.stdout, "targets.schema.json", "gpuplan/targets@1", validateTargets);
    expect((doc.targets as unknown[]).length).toBeGreaterThan(5);
  });

  it("presets --json (gpuplan/presets@1)", () => {
    const r = gpuplan(["presets", "--json"]);
    expect(r.exitCode).toBe(0);
    const doc = expectDocument(r.stdout, "presets.schema.json", "gpuplan/presets@1", validatePresets);
    expect((doc.presets as unknown[]).length).toBeGreaterThan(3);
  });

  it("run --dry-run --json, and its older spelling --ui json (gpuplan/dry-run@1)", () => {
    const cwd = mkdtempSync(join(tmpdir(), "gpuplan-dry-run-"));
    try {
      const example = join(ROOT, "examples/hello-cpu.yaml");
      const json = gpuplan(["run", example, "--dry-run", "--json"], { cwd, env: NO_GPU });
      expect(json.exitCode, json.stderr).toBe(0);
      const doc = expectDocument(json.stdout, "dry-run.schema.json", "gpuplan/dry-run@1", validateDryRun);
      expect((doc.pipelines as unknown[]).length).toBe(3);
      const ui = gpuplan(["run", example, "--dry-run", "--ui", "json"], { cwd, env: NO_GPU });
      const again = JSON.parse(ui.stdout) as { run: string };
      expect(JSON.parse(ui.stdout.replaceAll(again.run, String(doc.run)))).toEqual(doc);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("locks --json with a held slot (gpuplan/locks@2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-locks-json-"));
    const lock = createSlotLock({ dir });
    const lease = await lock.acquire({
      uuid: "GPU-00000000-0000-0000-0000-000000000001",
      gpu: "cuda:0",
      maxPipelines: 2,
      holder: { pid: process.pid, run: "r1", pipeline: "p", step: "s", since: new Date(0).toISOString() },
      wait: false,
      reservationBytes: 1024,
      budgetBytes: 4096,
    });
    try {
      const r = gpuplan(["locks", "--json", "--lock-dir", dir]);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = expectDocument(r.stdout, "locks.schema.json", "gpuplan/locks@2", validateLocks);
      expect(doc.dir).toBe(dir);
      expect((doc.gpus as { slots: { held: boolean }[] }[])[0]!.slots.some((s) => s.held)).toBe(true);
    } finally {
      lease.release();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("detect --json (gpuplan/inventory@1)", () => {
    const r = gpuplan(["detect", "--json"], { env: fakeEnv("h100x8-mig.scenario", {}) });
    expect(r.exitCode, r.stderr).toBe(0);
    expectDocument(r.stdout, "inventory.schema.json", "gpuplan/inventory@1", validateInventory);
  });

  it("every command that prints JSON takes --json", () => {
    const help = (command: string) => gpuplan([command, "--help"]).stdout;
    for (const command of ["compile", "detect", "run", "locks", "targets", "presets", "export"]) {
      expect(help(command), command).toMatch(/^ {2}--json\b/m);
    }
  });
});
