/**
 * A seeded sample of the compile fuzz campaign (`npm run fuzz` runs 10,000): inputs of every
 * category through the real CLI, judged as the campaign judges them — no crash, every problem
 * located, nothing raw on the terminal, under 1 GB — except for time, which a test does not
 * measure (the campaign prints it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CATEGORY_NAMES, fuzzInputs } from "./inputs.mjs";
import { judge, runCase } from "./run-case.mjs";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-fuzz-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("compile fuzz campaign (sample)", () => {
  it("the generator is deterministic and covers every category", () => {
    const a = [...fuzzInputs(11, 40)];
    const b = [...fuzzInputs(11, 40)];
    expect(a.map((i) => i.pipeline.toString("base64"))).toEqual(b.map((i) => i.pipeline.toString("base64")));
    expect(new Set(a.map((i) => i.category))).toEqual(new Set(CATEGORY_NAMES));
  });

  it("the judge sees what it must (control)", () => {
    const ok = { hung: false, signal: null, exitCode: 1, cpuMs: 100, rssMb: 50, format: "json", stderr: "" };
    const located = { problems: [{ code: "x", file: "f.yaml", line: 3, column: 1 }] };
    expect(judge({ ...ok, stdout: JSON.stringify(located) }, ["f.yaml"])).toEqual([]);
    const unlocated = { problems: [{ code: "x", file: "f.yaml" }] };
    expect(judge({ ...ok, stdout: JSON.stringify(unlocated) }, ["f.yaml"])).toEqual(["unlocated: x"]);
    expect(judge({ ...ok, stdout: "{}", stderr: "TypeError: x\n    at f (a.js:1:2)\n" }, [])[0]).toMatch(
      /^crash/,
    );
    expect(judge({ ...ok, stdout: "{}", signal: "SIGABRT" }, [])).toContain("crash: signal SIGABRT");
    expect(judge({ ...ok, stdout: "{}", rssMb: 2048 }, [])).toEqual(["memory: 2048 MB"]);
    expect(
      judge({ ...ok, format: "human", stdout: "", stderr: "f.yaml:1:1  error  \u001b[2J" }, ["f.yaml"]),
    ).toEqual(["raw control character on the terminal"]);
    expect(judge({ ...ok, format: "human", stdout: "", stderr: "f.yaml  error  x" }, ["f.yaml"])).toEqual([
      "unlocated problem in human output",
    ]);
  });

  // Several processes each; on two shared cores next to the rest of the suite that takes a while.
  it("every category through gpuplan compile: no crash, located, escaped, bounded", {
    timeout: 600_000,
  }, async () => {
    for (const input of fuzzInputs(7, 24)) {
      for (const format of ["json", "human"]) {
        const r = await runCase(input, dir, format);
        const broken = r.violations.filter((v: string) => !v.startsWith("slow"));
        expect(
          broken,
          `#${input.id} ${input.category}: ${input.describe} (${format})\n${r.stderr.slice(0, 3000)}`,
        ).toEqual([]);
      }
    }
  });
});
