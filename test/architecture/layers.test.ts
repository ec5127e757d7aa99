/**
 * The one direction of flow, kept by a test rather than by review: the core (every folder of src/
 * but the two below) never imports the presentation layer (src/ui) or the CLI (src/cli), and the
 * presentation layer never imports the CLI. Every import counts — static, type-only, re-exports and
 * dynamic `import()` — since a type the core takes from src/ui is already a dependency on it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
// `from "x"`, `import "x"`, `import("x")`, `export … from "x"`; comments are stripped first.
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** The layer a file under src/ belongs to: "cli", "ui", or "core". */
function layerOf(file: string): "cli" | "ui" | "core" {
  const top = relative(SRC, file).split(sep)[0];
  return top === "cli" ? "cli" : top === "ui" ? "ui" : "core";
}

const FORBIDDEN: Record<"cli" | "ui" | "core", ReadonlyArray<"cli" | "ui">> = {
  cli: [],
  ui: ["cli"],
  core: ["ui", "cli"],
};

/** The relative imports of one source text, each resolved to a path. */
function importsOf(file: string, source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  return [...code.matchAll(SPECIFIER)]
    .map((m) => m[1] ?? "")
    .filter((s) => s.startsWith("."))
    .map((s) => resolve(dirname(file), s));
}

/** Each import that crosses the layers the wrong way, as `file → import`. */
function violations(file: string, source: string): string[] {
  const forbidden = FORBIDDEN[layerOf(file)];
  return importsOf(file, source)
    .filter((target) => target.startsWith(SRC + sep) && forbidden.includes(layerOf(target) as "cli" | "ui"))
    .map((target) => `${relative(ROOT, file)} → ${relative(ROOT, target)}`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(e.name) ? [path] : [];
  });
}

describe("layers", () => {
  it("the core imports neither src/ui nor src/cli, and src/ui does not import src/cli", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => violations(f, readFileSync(f, "utf8")))).toEqual([]);
  });

  it("sees each kind of import that crosses the wrong way (the check itself works)", () => {
    const file = join(SRC, "run/some-module.ts");
    const source = [
      'import type { UiMode } from "../ui/run/view.js";',
      'export { x } from "../cli/output.js";',
      'const m = await import(\n  "../ui/run/index.js");',
      'import "../ui/paint.js";',
      'import { ok } from "./record/events.js";',
      '// import { commented } from "../ui/table.js";',
    ].join("\n");
    expect(violations(file, source)).toEqual([
      "src/run/some-module.ts → src/ui/run/view.js",
      "src/run/some-module.ts → src/cli/output.js",
      "src/run/some-module.ts → src/ui/run/index.js",
      "src/run/some-module.ts → src/ui/paint.js",
    ]);
    expect(violations(join(SRC, "ui/table.ts"), 'import { a } from "../cli/paint.js";')).toHaveLength(1);
    expect(violations(join(SRC, "cli/main.ts"), 'import { a } from "../ui/paint.js";')).toEqual([]);
  });
});
