// One limit on a plan's size, shared by compile and run (src/plan/plan-size.ts): run of a 344 MB
// plan had peaked at 4.1 GB and a 450 MB one ended Node with "heap out of memory"; a plan past the
// limit is now refused by its size before it is read, and compile refuses to write one.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_PLAN_BYTES, planReadLimit } from "../../src/plan/plan-size.js";
import { gpuplan } from "../helpers/cli.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const scratch = () => (dir ??= mkdtempSync(join(tmpdir(), "gpuplan-plan-size-")));

/** A sparse file of `bytes`: as big as a plan past the limit, without writing it. */
function sparse(name: string, bytes: number): string {
  const path = join(scratch(), name);
  writeFileSync(path, "");
  truncateSync(path, bytes);
  return path;
}

describe("a plan too big to read", () => {
  it("is refused by run --dry-run by its size, located, before it is read", () => {
    const plan = sparse("huge.json", MAX_PLAN_BYTES + 1);
    const r = gpuplan(["run", plan, "--dry-run"], { cwd: scratch() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("plan-too-large");
    expect(r.stderr).toContain("more than gpuplan reads of a plan (128 MiB)");
    expect(r.stderr).not.toMatch(/heap|at .*\.js:\d+/);
    const json = gpuplan(["run", plan, "--dry-run", "--json"], { cwd: scratch() });
    expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 1, problems: [{ code: "plan-too-large" }] });
  });

  it("is refused by report too", () => {
    const r = gpuplan(["report", sparse("huge.json", MAX_PLAN_BYTES + 1)], { cwd: scratch() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("plan-too-large");
  });

  it("is refused where Node's heap would not hold it, with the heap it needs", () => {
    // 64 MiB of plan in a 256 MiB heap: about 1.5 GiB to read and describe it.
    const r = gpuplan(["run", sparse("big.json", 64 * 2 ** 20), "--dry-run"], {
      cwd: scratch(),
      env: { NODE_OPTIONS: "--max-old-space-size=256" },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("plan-too-large");
    expect(r.stderr).toContain("NODE_OPTIONS=--max-old-space-size=1536");
    expect(r.stderr).not.toContain("FATAL");
  });

  it("the read limit is the shared one, or the heap's share where that is less", () => {
    expect(planReadLimit(8 * 2 ** 30)).toBe(MAX_PLAN_BYTES);
    expect(planReadLimit(2 ** 30)).toBe(Math.floor(2 ** 30 / 24));
  });
});

/** `pipelines` pipelines (a matrix), each step carrying 15 env values of 64 KiB: ~0.94 MiB of plan each. */
function widePipeline(pipelines: number): string {
  const env = Array.from({ length: 15 }, (_, i) => `B${i}: ${"x".repeat(2 ** 16)}`).join(", ");
  return [
    "version: 1",
    "name: wide",
    "defaults:",
    `  env: {${env}}`,
    "pipelines:",
    "  - name: p{i}",
    "    matrix:",
    `      i: [${Array.from({ length: pipelines }, (_, i) => i).join(",")}]`,
    "    steps:",
    "      - id: s",
    "        run: [t]",
    "        memory: numpy",
    "",
  ].join("\n");
}

describe("compile of a plan past the limit", () => {
  // 150 pipelines each carrying 15 env values of 64 KiB: a pipeline file of 960 KiB, a plan of
  // 141 MiB. Each value stays under the 128 KiB one string may pass to a program, and all of them
  // under 1 MiB, so the only problem is the plan's size (argument-sizes.test.ts has the others).
  const pipeline = widePipeline(150);

  it("writes no plan, and says so at the pipelines (-o, stdout and --json)", () => {
    const cwd = scratch();
    writeFileSync(join(cwd, "wide.yaml"), pipeline);
    const r = gpuplan(["compile", "wide.yaml", "-o", "plan.json", "--target", "cpu-only"], { cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("wide.yaml:6:3  error");
    expect(r.stderr).toContain("more than gpuplan run reads (128 MiB)  [plan-too-large]");
    expect(r.stderr).toContain("no plan written");
    expect(existsSync(join(cwd, "plan.json"))).toBe(false);
    // The temporary file the write had begun is gone too.
    expect(readdirSync(cwd)).toEqual(["wide.yaml"]);
    const out = gpuplan(["compile", "wide.yaml", "--target", "cpu-only"], { cwd });
    expect(out.exitCode).toBe(1);
    expect(out.stdout).toBe("");
    const json = gpuplan(["compile", "wide.yaml", "--target", "cpu-only", "--format", "json"], { cwd });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      plan: null,
      problems: [{ code: "plan-too-large", file: "wide.yaml", pointer: "/pipelines" }],
    });
  }, 60_000);
});

describe("compile of a plan to stdout", () => {
  // Measured before any of it goes out; up to 8 MiB of it is written from what was measured, a
  // bigger one is serialised again (src/cli/commands/compile.ts). Both sides of that line must be
  // the plan -o writes; that the smaller one is not serialised twice is test/plan/plan-size.test.ts's.
  it.each([
    [2, "under the 8 MiB kept"],
    [12, "over the 8 MiB kept"],
  ])(
    "of %i pipelines (%s) is the plan -o writes",
    (n) => {
      const cwd = scratch();
      writeFileSync(join(cwd, "wide.yaml"), widePipeline(n));
      const file = gpuplan(["compile", "wide.yaml", "-o", "plan.json", "--target", "cpu-only"], { cwd });
      expect(file.exitCode, file.stderr).toBe(0);
      const out = gpuplan(["compile", "wide.yaml", "--target", "cpu-only"], { cwd });
      expect(out.exitCode, out.stderr).toBe(0);
      const written = readFileSync(join(cwd, "plan.json"), "utf8");
      expect(Buffer.byteLength(written) > 8 * 2 ** 20).toBe(n === 12);
      expect(out.stdout).toBe(written);
    },
    60_000,
  );
});
