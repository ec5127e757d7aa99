// An events line written twice is one event: the report's attempts and waits, and what
// compile --history learns, count it once (src/report/repeated-events.ts, read in run-folder.ts).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readHistory } from "../../src/history/read-history.js";
import { stepKey } from "../../src/history/step-key.js";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import { readRunFolder } from "../../src/report/run-folder.js";
import { buildRunReport } from "../../src/report/run-report.js";
import { tempDir } from "../helpers/cli.js";
import { planFor, writeRun } from "../history/helpers.js";
import { acquired, end, events, released, runEnd, runStart, start } from "./helpers/events.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE = `version: 1
name: tiles
pipelines:
  - name: p
    steps:
      - { id: seg, run: [python3, seg.py], memory: torch, vram: 2GiB, estimate: 10s }
`;

/** A run of one GPU step, its events written with some lines twice (by index). */
async function runWithRepeats(repeat: number[]) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "tiles.yaml");
  writeFileSync(file, PIPELINE);
  const plan = await planFor(file, targetInventory("2x-rtx3090"));
  const gpu = plan.pipelines[0]!.gpu!;
  const list = events([
    [0, runStart(["p"])],
    [1, acquired("p", gpu, [0], 700)],
    [2, start("p", "seg", gpu)],
    [10_002, end("p", "seg", gpu, 10_000, "ok", 1, { peakVramBytes: 1024 ** 3 })],
    [10_003, released("p", gpu, [0])],
    [10_004, runEnd(10_004, "ok", 1)],
  ]);
  const written = list.flatMap((e, i) => (repeat.includes(i) ? [e, e] : [e]));
  const runsDir = join(t.dir, ".gpuplan/runs");
  const dir = writeRun(runsDir, "20261123T100000Z-aaaaaa", plan, file, written);
  return { dir, file, runsDir };
}

describe("an events line written twice", () => {
  it("is one attempt and one slot wait in the report, with a note, wherever the copy is", async () => {
    // The slot, the start and the end each said again.
    const { dir } = await runWithRepeats([1, 2, 3]);
    const folder = await readRunFolder(dir);
    const model = buildRunReport(folder);
    expect(model.header.counts).toMatchObject({ steps: 1, ok: 1, attempts: 1, interrupted: 0 });
    expect(model.bars.map((b) => b.outcome)).toEqual(["ok"]);
    expect(model.rows[0]!.waitMs).toBe(700);
    expect(model.header.notes).toContain(
      "events.jsonl: 3 line(s) repeat an event already read and were read once (the first is line 3)",
    );
  });

  it("is one sample for compile --history, as the report counts it", async () => {
    const { file, runsDir } = await runWithRepeats([3]);
    const history = await readHistory(["auto"], file, "tiles", runsDir);
    const samples = history.steps.get(stepKey("p", "seg"))!;
    expect(samples.durationsMs).toEqual([10_000]);
    expect(samples.peaksBytes).toEqual([1024 ** 3]);
  });

  it("is not two events that differ in their attempt or time (a retry, a resumed session)", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const list = events([
      [0, runStart(["a"])],
      [1, start("a", "s", "cpu")],
      [2, end("a", "s", "cpu", 1, "error")],
      [3, start("a", "s", "cpu", 2)],
      [4, end("a", "s", "cpu", 1, "ok", 2)],
      [5, runStart(["a"])],
      [6, start("a", "s", "cpu")],
      [7, end("a", "s", "cpu", 1, "ok")],
    ]);
    writeFileSync(join(t.dir, "events.jsonl"), list.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const folder = await readRunFolder(t.dir);
    expect(folder.events).toHaveLength(list.length);
    expect(folder.notes.filter((n) => n.includes("repeat"))).toEqual([]);
  });
});
