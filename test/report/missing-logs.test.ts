// A report of a run whose steps wrote no stderr, or whose logs were pruned, opens no log that is
// not there: the logs folder is listed once (src/report/run-folder.ts), not each file tried.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "../helpers/cli.js";
import { end, events, runStart, start } from "./helpers/events.js";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("../../src/report/open-in-folder.js", async (original) => {
  const real = await original<typeof import("../../src/report/open-in-folder.js")>();
  return {
    ...real,
    openInFolder: (folder: string, path: string, oneName?: boolean) => {
      opened.push(path);
      return real.openInFolder(folder, path, oneName);
    },
  };
});
const { readRunFolder } = await import("../../src/report/run-folder.js");

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
  opened.length = 0;
});

function runOfSteps(n: number, withLogsFolder: boolean): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  if (withLogsFolder) mkdirSync(join(t.dir, "logs"));
  const list = events([
    [0, runStart(["a"])],
    ...Array.from({ length: n }, (_, i) => [
      [1 + 2 * i, start("a", `s${i}`, "cpu")] as [number, Record<string, unknown>],
      [
        2 + 2 * i,
        end("a", `s${i}`, "cpu", 1, "ok", 1, { stderrPath: `.gpuplan/runs/r/logs/a@s${i}.err.log` }),
      ] as [number, Record<string, unknown>],
    ]).flat(),
  ]);
  writeFileSync(join(t.dir, "events.jsonl"), list.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return t.dir;
}

describe("the last stderr lines of a run's ok steps", () => {
  it("are read only from logs that are there", async () => {
    const dir = runOfSteps(50, true);
    writeFileSync(join(dir, "logs/a@s7.err.log"), "warning: slow disk\n");
    const folder = await readRunFolder(dir);
    expect(folder.stderrTails.get("a\u0000s7\u00001")).toEqual(["warning: slow disk"]);
    expect(folder.stderrTails.size).toBe(1);
    expect(opened.filter((p) => p.endsWith(".err.log"))).toEqual([join(dir, "logs/a@s7.err.log")]);
    expect(folder.notes.filter((n) => n.startsWith("logs:"))).toEqual([]);
  });

  it("are none, with no log opened and nothing said, when the logs folder was pruned", async () => {
    const dir = runOfSteps(50, false);
    const folder = await readRunFolder(dir);
    expect(folder.stderrTails.size).toBe(0);
    expect(opened.filter((p) => p.endsWith(".err.log"))).toEqual([]);
    expect(folder.notes.filter((n) => n.startsWith("logs:"))).toEqual([]);
  });
});
