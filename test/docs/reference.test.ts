// The reference pages are generated (scripts/generate-docs.mjs): each committed page must be what
// the generator makes from today's schemas, commander program, code registry and decision records.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_MEANINGS } from "../../scripts/cli-docs.mjs";
import {
  GENERATED_DIRS,
  GENERATED_FILES,
  OTHER_VARIABLES,
  referencePages,
} from "../../scripts/generate-docs.mjs";
import { createProgram } from "../../src/cli/program.js";
import { compilePlan } from "../../src/compile/compile.js";
import { LIBRARIES } from "../../src/detect/libraries.js";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import { checkPipelineText } from "../../src/pipeline/load-pipeline.js";
import { CODES } from "../../src/problems/codes.js";
import { EXIT } from "../../src/problems/exit-codes.js";
import { computeStepEnv } from "../../src/run/step/step-env.js";
import { SLURM_ENVIRONMENT_RULES } from "../../src/slurm/command-environment.js";

const ROOT = join(import.meta.dirname, "../..");
const pages = await referencePages({
  createProgram,
  CODES,
  EXIT,
  LIBRARIES,
  computeStepEnv,
  SLURM_ENVIRONMENT_RULES,
  compilePlan,
  checkPipelineText,
  targetInventory,
});

function committed(): string[] {
  const found: string[] = [];
  for (const dir of GENERATED_DIRS)
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true }))
      if (e.isFile()) found.push(join(e.parentPath, e.name).slice(ROOT.length + 1));
  return [...found, ...GENERATED_FILES].sort();
}

describe("generated reference", () => {
  it("every generated page is committed, and nothing else sits among them", () => {
    expect(committed(), "run npm run docs").toEqual(Object.keys(pages).sort());
  });

  it.each(Object.keys(pages))("%s is up to date (npm run docs)", (path) => {
    expect(readFileSync(join(ROOT, path), "utf8"), `${path} is stale: run npm run docs`).toBe(pages[path]);
  });
});

describe("what the generated pages cannot see by themselves", () => {
  const sources = readdirSync(join(ROOT, "src"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.parentPath.includes("schema-types"))
    .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"))
    .join("\n");
  const environment = pages["docs/reference/environment.md"]!;

  it("every GPUPLAN_* variable the code names is on the environment page", () => {
    const named = new Set([...sources.matchAll(/\bGPUPLAN_[A-Z_]+\b/g)].map((m) => m[0]));
    expect([...named].filter((v) => !new RegExp(`\\b${v}\\b`).test(environment)).sort()).toEqual([]);
  });

  it("every variable the page lists by hand is one the code reads", () => {
    for (const { name } of OTHER_VARIABLES) expect(sources, name).toContain(name);
  });

  it("every exit status has its meaning written down", () => {
    expect(Object.keys(EXIT_MEANINGS).sort()).toEqual(Object.keys(EXIT).sort());
  });

  it("the README names every command", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const command of createProgram("human").commands)
      expect(readme, command.name()).toContain(`\`gpuplan ${command.name()}`);
  });
});

describe("decision records", () => {
  const files = readdirSync(join(ROOT, "docs/decisions")).filter((f) => f !== "README.md");
  it.each(files)("%s is NNNN-title.md with a title and a date", (file) => {
    expect(file).toMatch(/^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.md$/);
    const text = readFileSync(join(ROOT, "docs/decisions", file), "utf8");
    expect(text).toMatch(/^# \S/);
    expect(text).toMatch(/^Date: \d{4}-\d\d-\d\d\b/m);
  });

  it("numbers are unique", () => {
    const numbers = files.map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
