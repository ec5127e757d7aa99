// An event's ts is outside text: the schema's pattern (dddd-dd-ddTdd:dd:dd.dddZ) takes
// "2026-13-45T99:99:99.999Z", which is no time at all. A run.start stamped so (a hand edit, a
// torn and rewritten line) made `gpuplan report` and `report --format trace` an internal error
// ("Invalid time value", a stack) where it should read the rest of the run with a note.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readRunFolder } from "../../src/report/run-folder.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { end, events, runEnd, runStart, start } from "./helpers/events.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const UNREAL = "2026-13-45T99:99:99.999Z";

function runWithUnrealStart(): { dir: string; run: string } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const run = join(t.dir, "20261123T100000Z-abcdef");
  mkdirSync(run);
  const list = events([
    [0, runStart(["p"])],
    [1, start("p", "s", "cpu")],
    [2, end("p", "s", "cpu", 1000)],
    [3, runEnd(3, "ok", 1)],
  ]).map((e) => JSON.stringify(e));
  list[0] = list[0]!.replace(/"ts":"[^"]*"/, `"ts":"${UNREAL}"`);
  writeFileSync(join(run, "events.jsonl"), `${list.join("\n")}\n`);
  return { dir: t.dir, run };
}

describe("an event stamped with a time that does not exist", () => {
  it("is not a run event: the reader leaves it out and says at which line", async () => {
    const { run } = runWithUnrealStart();
    const folder = await readRunFolder(run);
    expect(folder.events.map((e) => e.event)).toEqual(["gpu.step.start", "gpu.step.end", "run.end"]);
    expect(folder.firstBadLines.get("events.jsonl")).toBe(1);
    expect(folder.notes.join("\n")).toContain("1 line(s) are not run events");
  });

  it.each([["html"], ["trace"]])(
    "report --format %s reads the rest of the run, with a note, exit 0",
    (format) => {
      const { dir, run } = runWithUnrealStart();
      const out = join(dir, `out.${format}`);
      const r = gpuplan(["report", run, "--format", format, "-o", out], { cwd: dir });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.stderr).not.toContain("internal error");
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toContain("not run events");
      expect(readFileSync(out, "utf8").length).toBeGreaterThan(0);
    },
  );
});
