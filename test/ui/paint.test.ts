// The painter is chalk at the level the CLI decided, and chalk costs nothing where there is no
// colour: a compile into a pipe (every benchmark, every CI log) never loads it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadPaint, noPaint, stripColor } from "../../src/ui/paint.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

describe("loadPaint", () => {
  it("level 0 is identity; levels 1–3 paint with chalk's codes", async () => {
    expect(await loadPaint(0)).toBe(noPaint);
    expect(noPaint.red("x")).toBe("x");
    const paint = await loadPaint(1);
    expect(paint.red("x")).toBe("\u001b[31mx\u001b[39m");
    expect(paint.bold(paint.dim("x"))).toBe("\u001b[1m\u001b[2mx\u001b[22m\u001b[1m\u001b[22m");
    expect(stripColor(paint.green("ok"))).toBe("ok");
    expect((await loadPaint(3)).level).toBe(3);
  });
});

describe("chalk on the start-up path", () => {
  const chalkChunks = (modules: string[]): string[] =>
    modules
      .map((m) => m.replace(/^(esm|cjs) /, ""))
      .filter((url) => url.startsWith("file:"))
      .filter((url) => readFileSync(fileURLToPath(url), "utf8").includes("The `level` option should be"));

  /** The bundle's modules a compile loads (NO_COLOR set by the helper unless `env` says otherwise). */
  const compileModules = (env: Record<string, string | undefined>): string[] => {
    const t = tempDir();
    try {
      const log = join(t.dir, "modules.log");
      const r = gpuplan(["compile", join(ROOT, "examples/cell-painting.yaml"), "--target", "dgx-h100"], {
        nodeArgs: ["--import", join(ROOT, "test/helpers/record-modules.mjs")],
        env: { GPUPLAN_TEST_MODULE_LOG: log, GPUPLAN_TEST_MODULE_PATTERN: "dist/bundle/", ...env },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    } finally {
      t.cleanup();
    }
  };

  it("a compile with no colour loads no chunk that holds chalk; forced colour does", () => {
    const plain = compileModules({});
    expect(plain.length).toBeGreaterThan(0);
    expect(chalkChunks(plain)).toEqual([]);
    // The check itself works: with FORCE_COLOR the same compile loads chalk's chunk.
    expect(chalkChunks(compileModules({ FORCE_COLOR: "1", NO_COLOR: undefined }))).toHaveLength(1);
  });
});
