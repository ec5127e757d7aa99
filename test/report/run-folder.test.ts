// Reading a run folder for a report (src/report/run-folder.ts): the newest run by default, and a
// damaged folder read as far as it can be, with notes, never a crash or a hang.
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/problems/errors.js";
import { checkRunFolder, findRunDir, readRunFolder } from "../../src/report/run-folder.js";
import { runIdsNewestFirst } from "../../src/runs/run-order.js";
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

  it("a folder with none of a run's files (the runs folder, any other folder, an empty run) is no run to report", async () => {
    const root = temp();
    const runs = join(root, "runs");
    mkdirSync(join(runs, "20261123T100000Z-aaaaaa"), { recursive: true });
    writeFileSync(join(runs, "20261123T100000Z-aaaaaa", "events.jsonl"), "");
    mkdirSync(join(root, "other"));
    writeFileSync(join(root, "other", "notes.txt"), "");
    await expect(checkRunFolder(runs, runs, runs)).rejects.toMatchObject({
      code: "unknown-run",
      message: `${runs} is not a run folder: it has none of journal.jsonl, plan.json, events.jsonl`,
      hint: expect.stringContaining("it holds runs: name one of them"),
    });
    await expect(checkRunFolder(join(root, "other"), "other", runs)).rejects.toMatchObject({
      code: "unknown-run",
      hint: expect.stringContaining("name a run id or a run folder"),
    });
    const empty = join(runs, "20261124T090000Z-bbbbbb");
    mkdirSync(empty);
    await expect(checkRunFolder(empty, "20261124T090000Z-bbbbbb", runs)).rejects.toMatchObject({
      code: "unknown-run",
    });
    // A damaged run folder is still a run: its report says what could not be read.
    execFileSync("mkfifo", [join(empty, "journal.jsonl")]);
    await expect(checkRunFolder(empty, "20261124T090000Z-bbbbbb", runs)).resolves.toBeUndefined();
    await expect(checkRunFolder(join(runs, "20261123T100000Z-aaaaaa"), "x", runs)).resolves.toBeUndefined();
  });

  it("an exported array's slurm-JOB is a run only for a Slurm job id (10 digits at most)", async () => {
    const runs = join(temp(), "runs");
    for (const id of ["slurm-4294967295", "slurm-42949672950", `slurm-${"9".repeat(240)}`])
      mkdirSync(join(runs, id), { recursive: true });
    expect(await runIdsNewestFirst(runs)).toEqual(["slurm-4294967295"]);
    expect(await findRunDir(undefined, runs)).toBe(join(runs, "slurm-4294967295"));
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

  it("never reads a log that is a hard link to a file elsewhere (gpuplan writes each by one name)", async () => {
    const root = temp();
    const secret = join(root, "key");
    writeFileSync(secret, "SECRET-LINE\n");
    const stderrPath = ".gpuplan/runs/r/logs/a@hard.err.log";
    const evs = events([
      [0, runStart(["a"])],
      [1, { ...start("a", "hard", "cpu"), stderrPath }],
      [2, end("a", "hard", "cpu", 1, "ok", 1, { stderrPath })],
    ]);
    const dir = join(root, "run");
    mkdirSync(join(dir, "logs"), { recursive: true });
    writeFileSync(join(dir, "events.jsonl"), lines(evs));
    linkSync(secret, join(dir, "logs/a@hard.err.log"));
    const folder = await readRunFolder(dir);
    expect(JSON.stringify([...folder.stderrTails])).not.toContain("SECRET");
    expect(folder.notes.join("\n")).toContain("a hard link to a file elsewhere");
  });

  it("never reads a log, the logs folder or a run file through a link, nor a FIFO swapped in for a log; says so in one note", async () => {
    const root = temp();
    const secret = join(root, "key");
    writeFileSync(secret, "-----BEGIN KEY-----\nSECRET-LINE\n-----END KEY-----\n");
    const step = (name: string, t: number) => [
      [t, { ...start("a", name, "cpu"), stderrPath: `.gpuplan/runs/r/logs/a@${name}.err.log` }],
      [t + 1, end("a", name, "cpu", 1, "ok", 1, { stderrPath: `.gpuplan/runs/r/logs/a@${name}.err.log` })],
    ];
    const evs = events([
      [0, runStart(["a"])],
      ...(step("linked", 1) as [number, Record<string, unknown>][]),
      ...(step("fifo", 3) as [number, Record<string, unknown>][]),
      ...(step("plain", 5) as [number, Record<string, unknown>][]),
    ]);
    const dir = join(root, "run");
    mkdirSync(join(dir, "logs"), { recursive: true });
    writeFileSync(join(dir, "events.jsonl"), lines(evs));
    symlinkSync(secret, join(dir, "logs/a@linked.err.log"));
    execFileSync("mkfifo", [join(dir, "logs/a@fifo.err.log")]);
    writeFileSync(join(dir, "logs/a@plain.err.log"), "fine\n");
    const folder = await readRunFolder(dir);
    expect(JSON.stringify([...folder.stderrTails])).not.toContain("SECRET");
    expect(folder.stderrTails.get("a\u0000plain\u00001")).toEqual(["fine"]);
    expect(folder.notes).toContain(
      "logs: 2 log file(s) not read, their last lines not shown: logs/a@linked.err.log (a symbolic link, which a report does not follow), and 1 more",
    );

    // The logs folder itself a link to a folder outside the run: its files are not the run's.
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "a@plain.err.log"), "SECRET-LINE\n");
    rmSync(join(dir, "logs"), { recursive: true });
    symlinkSync(elsewhere, join(dir, "logs"));
    const linkedDir = await readRunFolder(dir);
    expect(JSON.stringify([...linkedDir.stderrTails])).not.toContain("SECRET");
    expect(linkedDir.notes.join("\n")).toContain("outside the run folder");

    // events.jsonl and journal.jsonl as links: not read, said.
    const copy = join(root, "copy");
    mkdirSync(copy);
    symlinkSync(join(dir, "events.jsonl"), join(copy, "events.jsonl"));
    symlinkSync(secret, join(copy, "journal.jsonl"));
    const linked = await readRunFolder(copy);
    expect(linked.events).toEqual([]);
    expect(linked.notes).toEqual(
      expect.arrayContaining([
        "events.jsonl: a symbolic link, which a report does not follow",
        "journal.jsonl: a symbolic link, which a report does not follow",
      ]),
    );
  });

  it("reads a run folder named through a link (the folder itself may be one)", async () => {
    const root = temp();
    const dir = join(root, "real");
    mkdirSync(join(dir, "logs"), { recursive: true });
    writeFileSync(
      join(dir, "events.jsonl"),
      lines(
        events([
          [0, runStart(["a"])],
          [1, { ...start("a", "s", "cpu"), stderrPath: "logs/a@s.err.log" }],
          [2, end("a", "s", "cpu", 1, "ok", 1, { stderrPath: "logs/a@s.err.log" })],
        ]),
      ),
    );
    writeFileSync(join(dir, "logs/a@s.err.log"), "hello\n");
    symlinkSync(dir, join(root, "alias"));
    const folder = await readRunFolder(join(root, "alias"));
    expect(folder.events.length).toBe(3);
    expect(folder.stderrTails.get("a\u0000s\u00001")).toEqual(["hello"]);
  });
});
