// Reading a run folder for a report (src/report/run-folder.ts): the newest run by default, and a
// damaged folder read as far as it can be, with notes, never a crash or a hang.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/problems/errors.js";
import { findRunDir, readRunFolder } from "../../src/report/run-folder.js";
import { tempDir } from "../helpers/cli.js";
import { end, events, runStart, start } from "./helpers/events.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};
const lines = (list: unknown[]) => `${list.map((e) => JSON.stringify(e)).join("\n")}\n`;

describe("finding a run", () => {
  it("takes the newest run (ids sort by start time), an id, or a path; says when there is none", async () => {
    const runs = join(temp(), "runs");
    for (const id of ["20261123T100000Z-aaaaaa", "20261124T090000Z-bbbbbb", "20261122T230000Z-cccccc"])
      mkdirSync(join(runs, id), { recursive: true });
    mkdirSync(join(runs, "not-a-run"));
    expect(await findRunDir(undefined, runs)).toBe(join(runs, "20261124T090000Z-bbbbbb"));
    expect(await findRunDir("20261123T100000Z-aaaaaa", runs)).toBe(join(runs, "20261123T100000Z-aaaaaa"));
    expect(await findRunDir(join(runs, "20261122T230000Z-cccccc"), runs)).toBe(
      join(runs, "20261122T230000Z-cccccc"),
    );
    await expect(findRunDir("20990101T000000Z-ffffff", runs)).rejects.toMatchObject({ code: "unknown-run" });
    await expect(findRunDir(undefined, join(runs, "none"))).rejects.toBeInstanceOf(UsageError);
  });
});

describe("reading a run folder", () => {
  it("keeps the run events, and says how many lines were not run events (torn, foreign, newer)", async () => {
    const dir = temp();
    const good = events([
      [0, runStart(["a"])],
      [1, start("a", "s", "cpu")],
      [5, end("a", "s", "cpu", 4)],
    ]);
    writeFileSync(
      join(dir, "events.jsonl"),
      `${lines([good[0], { hello: "world" }, good[1], { ...good[0], schema: "gpuplan/run-events@2" }, good[2]])}{"ts":"2026-11-`,
    );
    const folder = await readRunFolder(dir);
    expect(folder.events).toEqual(good);
    expect(folder.notes).toEqual(
      expect.arrayContaining([
        "journal.jsonl: missing",
        expect.stringMatching(/^plan\.json: missing/),
        "events.jsonl: written by a newer gpuplan (another run-events version); some events were not read",
        "events.jsonl: 3 line(s) are not run events and were left out (the first is line 2)",
      ]),
    );
  });

  it("does not hang on a FIFO where a file should be, nor crash on a directory or a damaged plan", async () => {
    const dir = temp();
    execFileSync("mkfifo", [join(dir, "journal.jsonl")]);
    execFileSync("mkfifo", [join(dir, "events.jsonl")]);
    mkdirSync(join(dir, "plan.json"));
    const folder = await readRunFolder(dir);
    expect(folder).toMatchObject({ header: null, plan: null, events: [] });
    expect(folder.notes).toEqual(
      expect.arrayContaining(["journal.jsonl: not a regular file", "events.jsonl: not a regular file"]),
    );
    const other = temp();
    writeFileSync(join(other, "plan.json"), '{"schema": "gpuplan/plan@1", "pipel');
    writeFileSync(join(other, "journal.jsonl"), "null\n");
    const damaged = await readRunFolder(other);
    expect(damaged.plan).toBeNull();
    expect(damaged.notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^plan\.json: .*estimates and GPUs are unknown$/),
        "journal.jsonl: its first line is not a run header",
      ]),
    );
  });

  it("carries the last stderr lines: a failed attempt's from its event, an ok one's from its log, without terminal codes", async () => {
    const dir = temp();
    mkdirSync(join(dir, "logs"));
    writeFileSync(join(dir, "logs/a@ok.err.log"), "one\ntwo\n\n\u001b[31mthree\u001b[0m\u0007\n");
    const evs = events([
      [0, runStart(["a"])],
      [1, { ...start("a", "ok", "cpu"), stderrPath: ".gpuplan/runs/elsewhere/logs/a@ok.err.log" }],
      [2, end("a", "ok", "cpu", 1, "ok", 1, { stderrPath: ".gpuplan/runs/elsewhere/logs/a@ok.err.log" })],
      [3, start("a", "bad", "cpu")],
      [4, end("a", "bad", "cpu", 1, "error", 1, { stderrTail: ["x".repeat(400), "ValueError"] })],
    ]);
    writeFileSync(join(dir, "events.jsonl"), lines(evs));
    const folder = await readRunFolder(dir);
    // Colour codes left out, other control characters shown as such.
    expect(folder.stderrTails.get("a\u0000ok\u00001")).toEqual(["two", "three\ufffd"]);
    expect(folder.stderrTails.get("a\u0000bad\u00001")).toEqual([`${"x".repeat(300)}…`, "ValueError"]);
  });
});
