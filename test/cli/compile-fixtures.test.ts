/**
 * CLI end-to-end over fixture folders (STYLE.md §11): each `fixtures/compile/<case>/` holds a
 * `pipeline.yaml` (or `pipeline.txt` for text that is deliberately not YAML, which the linter
 * would otherwise reject), optionally an `inventory.yaml`/`inventory.json` and an `args.json` of extra
 * flags, and the expected outcome beside them: `expected.json` (exit code and located problems),
 * `expected-human.txt` (what a person sees on stderr: problems with their code frames and hints,
 * and the summary line; colour stripped, the fixture folder written `<fixture>`) and, for cases
 * that compile, `expected-plan.json` (the exact plan bytes, which the human format prints on stdout).
 * `UPDATE_FIXTURES=1 npx vitest run test/cli/compile-fixtures.test.ts` rewrites the expectations;
 * review the diff before committing it.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { compactJson } from "../../src/text/compact-json.js";
import { VERSION } from "../../src/version.js";
import { gpuplan, hasCrashed, ROOT } from "../helpers/cli.js";

const DIR = "fixtures/compile";
const UPDATE = process.env.UPDATE_FIXTURES === "1";

interface ExpectedProblem {
  code: string;
  severity: string;
  file?: string;
  line?: number;
  column?: number;
}
interface Expected {
  exitCode: number;
  problems: ExpectedProblem[];
}
interface Report {
  ok: boolean;
  problems: (ExpectedProblem & { message: string })[];
  plan: unknown;
}

/** Text as a person reads it, minus what depends on the machine or the release. */
function normalizeHuman(text: string, dir: string): string {
  return stripVTControlCharacters(text)
    .replaceAll(ROOT, "<root>")
    .replaceAll(`${dir}/`, "<fixture>/")
    .replaceAll(VERSION, "<version>");
}

const cases = readdirSync(join(ROOT, DIR), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe("gpuplan compile fixtures", () => {
  it("has enough cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  for (const name of cases) {
    it(name, () => {
      const dir = `${DIR}/${name}`;
      const at = (f: string) => join(ROOT, dir, f);
      const pipeline = `${dir}/${existsSync(at("pipeline.txt")) ? "pipeline.txt" : "pipeline.yaml"}`;
      const args = existsSync(at("args.json"))
        ? (JSON.parse(readFileSync(at("args.json"), "utf8")) as string[])
        : [];
      const inventory = ["inventory.yaml", "inventory.json"].find((f) => existsSync(at(f)));
      if (inventory) args.unshift("--inventory", `${dir}/${inventory}`);
      // Live detection would make the outcome depend on the machine running the tests.
      expect(args.some((a) => a === "--inventory" || a === "--target")).toBe(true);

      const r = gpuplan(["compile", pipeline, ...args, "--format", "json"]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      const report = JSON.parse(r.stdout) as Report;
      const actual: Expected = {
        exitCode: r.exitCode,
        problems: report.problems.map((p) => ({
          code: p.code,
          severity: p.severity,
          ...(p.file !== pipeline && { file: p.file }),
          ...(p.line !== undefined && { line: p.line, column: p.column }),
        })),
      };
      const planText = report.plan ? compactJson(report.plan) : undefined;

      // The default format, coloured as on a terminal: stripping the colour must leave the text.
      const human = gpuplan(["compile", pipeline, ...args], {
        env: { NO_COLOR: undefined, FORCE_COLOR: "1" },
      });
      expect(hasCrashed(human), human.stderr).toBe(false);
      expect(human.exitCode).toBe(r.exitCode);
      if (report.problems.length > 0) expect(stripVTControlCharacters(human.stderr)).not.toBe(human.stderr);
      const humanText = normalizeHuman(human.stderr, dir);

      if (UPDATE) {
        writeFileSync(at("expected-human.txt"), humanText);
        writeFileSync(at("expected.json"), `${JSON.stringify(actual, null, 2)}\n`);
        if (planText) writeFileSync(at("expected-plan.json"), planText);
        else rmSync(at("expected-plan.json"), { force: true });
      }
      const expected = JSON.parse(readFileSync(at("expected.json"), "utf8")) as Expected;
      expect(actual).toEqual(expected);
      expect(report.ok).toBe(expected.exitCode === 0);
      // Every problem from a file says where; every problem says what.
      for (const p of report.problems) {
        expect(p.message.length).toBeGreaterThan(0);
        if (p.file !== undefined && p.file !== "") expect(p.line, `${p.code} has no line`).toBeGreaterThan(0);
      }
      expect(humanText).toBe(readFileSync(at("expected-human.txt"), "utf8"));
      if (expected.exitCode === 0) {
        expect(planText).toBe(readFileSync(at("expected-plan.json"), "utf8"));
        expect(human.stdout).toBe(planText);
      } else {
        expect(human.stdout).toBe("");
        expect(report.plan).toBeNull();
        expect(existsSync(at("expected-plan.json"))).toBe(false);
      }
    });
  }
});
