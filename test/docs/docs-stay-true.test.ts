// The hand-written docs (README.md, docs/guides, docs/architecture.md) must stay true:
// - every relative link and heading anchor resolves, and every repository path they name exists
//   (so the module map cannot point at a file that moved);
// - every `$ gpuplan …` in a ```console block prints what the block shows (stdout, then stderr),
//   run from a scratch directory that holds the examples;
// - every pipeline file (```yaml starting with `version: 1`) and inventory short form (```yaml
//   starting with `gpus:`) in them is one gpuplan accepts without errors.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchor } from "../../scripts/schema-docs.mjs";
import { loadInventoryFile } from "../../src/inventory/load-inventory.js";
import { checkPipelineText } from "../../src/pipeline/load-pipeline.js";

const ROOT = resolve(import.meta.dirname, "../..");
const rel = (p: string) => p.slice(ROOT.length + 1);

function markdownIn(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => rel(join(e.parentPath, e.name)));
}
const handWritten = ["README.md", "docs/architecture.md", ...markdownIn("docs/guides")];
const allDocs = ["README.md", ...markdownIn("docs")];
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

/** Fenced blocks with their language, and the text outside them. */
function blocks(text: string): { lang: string; body: string }[] {
  return [...text.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}
const prose = (text: string) => text.replace(/^```[\s\S]*?^```$/gm, "");

function anchorsOf(path: string): Set<string> {
  return new Set([...prose(read(path)).matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!)));
}

describe("links and paths in the docs", () => {
  it.each(allDocs)("%s: every relative link resolves, anchors included", (doc) => {
    const broken: string[] = [];
    for (const m of prose(read(doc)).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, fragment] = target.split("#") as [string, string | undefined];
      const file = path === "" ? join(ROOT, doc) : resolve(dirname(join(ROOT, doc)), path);
      if (!existsSync(file)) broken.push(target);
      else if (fragment && file.endsWith(".md") && !anchorsOf(rel(file)).has(fragment)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it.each(handWritten)("%s: every repository path it names exists", (doc) => {
    const missing = [
      ...prose(read(doc)).matchAll(
        /`((?:src|schemas|scripts|test|bench|examples|fixtures|docs|bin)\/[^`\s]*)`/g,
      ),
    ]
      .map((m) => m[1]!.replace(/[.,:;]$/, ""))
      .filter((p) => !/[<>*…{}]/.test(p) && !existsSync(join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  it("every docs/ file the source code cites exists", () => {
    const missing: string[] = [];
    for (const e of readdirSync(join(ROOT, "src"), { withFileTypes: true, recursive: true })) {
      if (!e.isFile() || !e.name.endsWith(".ts")) continue;
      const text = readFileSync(join(e.parentPath, e.name), "utf8");
      for (const m of text.matchAll(/\bdocs\/[\w./-]+\.md\b/g))
        if (!existsSync(join(ROOT, m[0]))) missing.push(`${rel(join(e.parentPath, e.name))}: ${m[0]}`);
    }
    expect(missing).toEqual([]);
  });
});

/** `$ command` lines and the output each is shown with, from the ```console blocks of a doc. */
function consoleExamples(doc: string): { command: string; output: string }[] {
  const out: { command: string; output: string }[] = [];
  for (const block of blocks(read(doc)).filter((b) => b.lang === "console")) {
    for (const part of block.body.split(/^(?=\$ )/m).filter((p) => p.startsWith("$ "))) {
      const [first, ...rest] = part.split("\n");
      out.push({ command: first!.slice(2), output: rest.join("\n") });
    }
  }
  return out;
}

const scratch = mkdtempSync(join(tmpdir(), "gpuplan-docs-"));
symlinkSync(join(ROOT, "examples"), join(scratch, "examples"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("console examples print what they show", () => {
  const examples = handWritten.flatMap((doc) => consoleExamples(doc).map((e) => ({ doc, ...e })));
  it("there are examples to check", () => {
    expect(examples.length).toBeGreaterThan(1);
  });

  it.each(examples)("$doc: $command", ({ command, output }) => {
    const words = command.split(/\s+/);
    const args = words[0] === "npx" ? words.slice(2) : words.slice(1);
    expect(words[0] === "gpuplan" || (words[0] === "npx" && words[1] === "gpuplan"), command).toBe(true);
    const r = spawnSync(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
      cwd: scratch,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: undefined },
    });
    expect(`${r.stdout}${r.stderr}`).toBe(output);
  });
});

describe("files in the docs are ones gpuplan accepts", () => {
  const yamlBlocks = handWritten.flatMap((doc) =>
    blocks(read(doc))
      .filter((b) => b.lang === "yaml")
      .map((b) => ({ doc, body: b.body })),
  );

  it.each(yamlBlocks.filter((b) => b.body.startsWith("version: 1")))(
    "$doc: a pipeline file",
    ({ doc, body }) => {
      const errors = checkPipelineText(doc, body).problems.filter((p) => p.severity === "error");
      expect(errors.map((p) => `${p.code}: ${p.message}`)).toEqual([]);
    },
  );

  it.each(yamlBlocks.filter((b) => b.body.startsWith("gpus:")))("$doc: an inventory", async ({ body }) => {
    const file = join(scratch, "inventory.yaml");
    writeFileSync(file, body);
    const choice = await loadInventoryFile(file);
    expect(choice.problems).toEqual([]);
    expect(choice.inventory?.gpus.length).toBeGreaterThan(0);
  });
});

describe("tables in the guides that mirror a schema", () => {
  it("the warm-workers guide explains exactly the eviction reasons of the run-events schema", () => {
    const schema = JSON.parse(read("schemas/run-events.schema.json")) as {
      $defs: { EvictReason: { enum: string[] } };
    };
    const table = read("docs/guides/warm-workers.md").split("## Reuse and eviction")[1]!.split("\n## ")[0]!;
    const reasons = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(reasons.sort()).toEqual([...schema.$defs.EvictReason.enum].sort());
  });
});

describe("the architecture's module map", () => {
  it("names every folder of src/ (and every room of src/run/)", () => {
    const text = read("docs/architecture.md");
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !["generated", "schema-types"].includes(e.name))
      .map((e) => `src/${e.name}/`);
    const rooms = readdirSync(join(ROOT, "src/run"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `src/run/${e.name}/`);
    expect([...folders, ...rooms].filter((f) => !text.includes(`\`${f}\``))).toEqual([]);
  });
});
