// Pipelines whose names differ only in characters a file name cannot hold (`/`, `:`, spaces,
// non-ASCII) or after the first 120 characters never share a log file: each pipeline's output
// is in its own files, a failure is classified from its own stderr, and a silent pipeline
// removes nothing of another's.
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { logStem } from "../../../src/run/record/log-names.js";
import { execute, type Harness, planFrom } from "../helpers/harness.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const long = "L".repeat(120);
const NAMES = ["x/y", "x:y", "x y", "x_y", "xé", "xè", `${long}a`, `${long}b`, "x?y", "x*y"];

describe("log file names", () => {
  it("look-alike pipeline names get a log each: output, classification and clean-up stay their own", async () => {
    const plan = planFrom(`
version: 1
name: look-alike
registry: { platform_priority: [cpu], max_parallel_pipelines: 10 }
pipelines:
  - name: "{n}"
    matrix: { n: ${JSON.stringify(NAMES)} }
    steps:
      - id: say
        run: [node, say-name.mjs]
        memory: numpy
`);
    for (let run = 0; run < 3; run++) {
      h?.cleanup();
      h = await execute(plan);
      const ends = h.events.filter((e) => e.event === "gpu.step.end");
      expect(ends).toHaveLength(NAMES.length);
      const byName = new Map(ends.map((e) => [e.pipeline, e]));
      // `x:y` failed with its own ValueError; nobody else's "out of memory" line makes it an OOM.
      expect(byName.get("x:y")).toMatchObject({ status: "error", exitCode: 1 });
      expect(h.summary).toMatchObject({ ok: NAMES.length - 1, failed: 1 });
      const paths = ends.map((e) => e.logPath);
      expect(new Set(paths).size).toBe(NAMES.length);
      for (const name of NAMES) {
        if (name.includes(" ")) continue;
        const e = byName.get(name)!;
        expect(readFileSync(e.logPath!, "utf8")).toBe(`out of ${name}\n`);
        expect(readFileSync(e.stderrPath!, "utf8").split("\n")[0]).toBe(`err of ${name}`);
      }
      // Every line shown came from the pipeline it is shown under.
      const mine = h.output.filter((o) => /^(out|err) of /.test(o.line));
      expect(mine).toHaveLength(2 * (NAMES.length - 1));
      for (const o of mine) expect(o.line.slice("out of ".length)).toBe(o.pipeline);
      // The silent pipeline left no files, and removed none: two per other pipeline.
      expect(readdirSync(`${h.runDir}/logs`)).toHaveLength(2 * (NAMES.length - 1));
    }
  });

  it("names are readable, stable, and within the file-name limit", () => {
    expect(logStem("plate-P1", "normalize", 1)).toBe("plate-P1@normalize");
    expect(logStem("plate-P1", "normalize", 3)).toBe("plate-P1@normalize@3");
    const slash = logStem("x/y", "s", 1);
    expect(slash).toMatch(/^x_y~[0-9a-f]{10}@s$/);
    expect(logStem("x/y", "s", 1)).toBe(slash);
    expect(logStem("x_y", "s", 1)).toBe("x_y@s");
    expect(logStem("xé", "s", 1)).not.toBe(logStem("xè", "s", 1));
    expect(logStem(".", "s", 1)).not.toBe(".@s");
    const huge = logStem("p".repeat(5000), "s".repeat(300), 999);
    expect(Buffer.byteLength(`${huge}.out.log`)).toBeLessThanOrEqual(255);
    expect(basename(huge)).toBe(huge);
  });
});
