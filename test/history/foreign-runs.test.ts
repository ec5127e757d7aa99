// `--history auto` looks at the newest runs of the runs folder; an attack had 2,000 runs of other
// pipeline files, 50 with 5.6 MB of events each, take 53 s: every run's events were parsed before
// its owner was known. Now a run's header and plan say whose it is, and only its own runs' events
// are read.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readHistory } from "../../src/history/read-history.js";
import * as runFolder from "../../src/report/run-folder.js";
import { tempDir } from "../helpers/cli.js";
import { choose, inventory } from "../helpers/inventory.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { planFor, writeRun } from "./helpers.js";

vi.mock("../../src/report/run-folder.js", async (original) => {
  const real = await original<typeof import("../../src/report/run-folder.js")>();
  return { ...real, readRunEvents: vi.fn(real.readRunEvents), readRunHead: vi.fn(real.readRunHead) };
});

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE =
  "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [x], estimate: 1s }\n";

describe("--history auto among other files' runs", () => {
  it("reads the events of its own runs only", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const mine = join(t.dir, "mine.yaml");
    const other = join(t.dir, "other", "other.yaml");
    mkdirSync(join(t.dir, "other"));
    writeFileSync(mine, PIPELINE);
    writeFileSync(other, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const cpu = choose(inventory([]));
    const lines = events([
      [0, runStart(["p"])],
      [1, start("p", "s", "cpu")],
      [2, end("p", "s", "cpu", 2000)],
      [3, runEnd(2000, "ok", 1, 0)],
    ]);
    writeRun(runsDir, "20261123T100000Z-aaaaaa", await planFor(mine, cpu), mine, lines);
    for (let i = 0; i < 20; i++)
      writeRun(
        runsDir,
        `20261124T1000${String(i).padStart(2, "0")}Z-bbbbbb`,
        await planFor(other, cpu),
        other,
        lines,
      );
    const read = vi.mocked(runFolder.readRunEvents);
    read.mockClear();
    const history = await readHistory(["auto"], mine, "p", runsDir);
    expect(history.runs).toEqual(["20261123T100000Z-aaaaaa"]);
    expect(history.notes).toContain(`left out 20 run(s) of other pipeline files in ${runsDir}`);
    expect(read.mock.calls.map(([head]) => head.runDir)).toEqual([join(runsDir, "20261123T100000Z-aaaaaa")]);
  });

  it("passes over other files' runs from their first bytes: only its own are read whole, and it learns the same", async () => {
    // Each run's whole journal and checked plan cost ~2.4 ms: 24 s for 10,000 runs of other files
    // beside fewer than five of this one's.
    const t = tempDir();
    cleanups.push(t.cleanup);
    const mine = join(t.dir, "mine.yaml");
    const other = join(t.dir, "other", "other.yaml");
    mkdirSync(join(t.dir, "other"));
    writeFileSync(mine, PIPELINE);
    writeFileSync(other, PIPELINE);
    const runsDir = join(t.dir, ".gpuplan/runs");
    const cpu = choose(inventory([]));
    const lines = events([
      [0, runStart(["p"])],
      [1, start("p", "s", "cpu")],
      [2, end("p", "s", "cpu", 2000)],
      [3, runEnd(2000, "ok", 1, 0)],
    ]);
    const own = ["20261123T100000Z-aaaaaa", "20261123T110000Z-aaaaaa"];
    for (const id of own) writeRun(runsDir, id, await planFor(mine, cpu), mine, lines);
    for (let i = 0; i < 30; i++)
      writeRun(
        runsDir,
        `20261124T1000${String(i).padStart(2, "0")}Z-bbbbbb`,
        await planFor(other, cpu),
        other,
        lines,
      );
    // A hand-edited plan of another file (one line): its first bytes say nothing plain, so it is read whole.
    const edited = writeRun(runsDir, "20261125T100000Z-cccccc", await planFor(other, cpu), other, lines);
    writeFileSync(join(edited, "plan.json"), JSON.stringify(await planFor(other, cpu)));
    const head = vi.mocked(runFolder.readRunHead);
    head.mockClear();
    const history = await readHistory(["auto"], mine, "p", runsDir);
    expect(history.runs).toEqual(own);
    expect(history.notes).toContain(`left out 31 run(s) of other pipeline files in ${runsDir}`);
    expect(history.steps.get([...history.steps.keys()][0]!)?.durationsMs).toEqual([2000, 2000]);
    expect(head.mock.calls.map(([dir]) => dir).sort()).toEqual(
      [edited, ...own.map((id) => join(runsDir, id))].sort(),
    );
  });
});
