/**
 * `gpuplan run --ui plain|json` (and everything compile loads) must not load ink or react: walk the
 * static imports from src/ui/run/index.ts and check that none reaches them or the tui folder.
 * Type-only imports are erased under verbatimModuleSyntax, so they are allowed.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const ENTRY = join(ROOT, "src/ui/run/index.ts");
const STATIC_IMPORT = /^\s*(import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm;

function staticImports(file: string): string[] {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(STATIC_IMPORT)].map((m) => m[2] ?? "");
}

/** Every module reachable by static imports from `entry`: project files and bare package names. */
function staticGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() ?? "";
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of staticImports(file)) {
      if (!specifier.startsWith(".")) packages.add(specifier);
      else {
        // A .ts source, or a generated .js module (src/generated).
        const js = join(dirname(file), specifier);
        const ts = js.replace(/\.js$/, ".ts");
        queue.push(existsSync(ts) ? ts : js);
      }
    }
  }
  return { files: [...files].map((f) => relative(ROOT, f)).sort(), packages: [...packages].sort() };
}

describe("what the plain and json views load", () => {
  it("reaches neither ink, react nor the tui modules through static imports", () => {
    const { files, packages } = staticGraph(ENTRY);
    expect(files).toContain("src/ui/run/plain-view.ts");
    expect(files).toContain("src/ui/run/json-view.ts");
    expect(files.filter((f) => f.includes("/tui/"))).toEqual([]);
    expect(packages.filter((p) => /^(ink|react)(\/|$)/.test(p))).toEqual([]);
  });

  it("loads the live view only through dynamic imports (its opener, then the view)", () => {
    expect(readFileSync(ENTRY, "utf8")).toContain('await import("./tui/open-live-view.js")');
    const opener = join(ROOT, "src/ui/run/tui/open-live-view.ts");
    expect(readFileSync(opener, "utf8")).toContain('import("./live-view.js")');
    expect(staticGraph(opener).files).toEqual(["src/ui/run/tui/open-live-view.ts"]);
  });

  it("sees static imports when they are there (the check itself works)", () => {
    const { packages } = staticGraph(join(ROOT, "src/ui/run/tui/live-view.ts"));
    expect(packages).toEqual(expect.arrayContaining(["ink", "react"]));
  });
});
