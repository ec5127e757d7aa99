// A Slurm run's merged events.jsonl is put in time order at the end of the run, without reading it
// whole: a file past what one string may hold (512 MiB) ended such a run with an internal error.
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sortEventsFile } from "../../src/slurm/follow/sort-events-file.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const temp = () => (dir = mkdtempSync(join(tmpdir(), "gpuplan-sort-events-")));
const event = (ts: string, n: number) => `{"ts":"${ts}","event":"gpu.step.end","n":${n},"text":"é ✓"}`;

describe("sorting a Slurm run's events file", () => {
  it("orders lines by time, keeps lines of one moment in their order, drops empty lines, ends each line", async () => {
    const path = join(temp(), "events.jsonl");
    const lines = [
      event("2026-11-29T07:00:03.000Z", 1),
      event("2026-11-29T07:00:01.000Z", 2),
      "",
      event("2026-11-29T07:00:02.000Z", 3),
      event("2026-11-29T07:00:02.000Z", 4),
      event("2026-11-29T07:00:01.000Z", 5),
      "not an event",
      event("2026-11-29T07:00:04.000Z", 6),
    ];
    // The last line without its newline, as a killed writer may leave it.
    writeFileSync(path, lines.join("\n"));
    await sortEventsFile(path);
    expect(readFileSync(path, "utf8")).toBe(
      [
        "not an event",
        event("2026-11-29T07:00:01.000Z", 2),
        event("2026-11-29T07:00:01.000Z", 5),
        event("2026-11-29T07:00:02.000Z", 3),
        event("2026-11-29T07:00:02.000Z", 4),
        event("2026-11-29T07:00:03.000Z", 1),
        event("2026-11-29T07:00:04.000Z", 6),
        "",
      ].join("\n"),
    );
  });

  it("sorts a file of many lines read in several pieces", async () => {
    const path = join(temp(), "events.jsonl");
    // ~9 MiB: more than one 4 MiB piece, lines cut across pieces. Every second second, descending.
    const n = 60_000;
    const padding = "x".repeat(100);
    const ts = (i: number) => new Date(Date.UTC(2026, 10, 29) + i * 1000).toISOString();
    const text = Array.from(
      { length: n },
      (_, i) => `{"ts":"${ts(n - i)}","i":${i},"p":"${padding}"}\n`,
    ).join("");
    writeFileSync(path, text);
    await sortEventsFile(path);
    const sorted = readFileSync(path, "utf8").split("\n");
    expect(sorted.length).toBe(n + 1);
    expect(sorted[0]).toBe(`{"ts":"${ts(1)}","i":${n - 1},"p":"${padding}"}`);
    expect(sorted[n - 1]).toBe(`{"ts":"${ts(n)}","i":0,"p":"${padding}"}`);
    expect(sorted.slice(0, n).every((line, k) => line.startsWith(`{"ts":"${ts(k + 1)}"`))).toBe(true);
  });

  it("leaves a file already in order as it is, whatever its size, and a missing one missing", async () => {
    const path = join(temp(), "events.jsonl");
    // 520 MiB: more than V8 makes one string of (0x1fffffe8 characters). Sparse: nothing on disk
    // but its last lines, after one long line of zero bytes (no time: it sorts first).
    const fd = openSync(path, "w");
    writeSync(
      fd,
      `\n${event("2026-11-29T07:00:01.000Z", 1)}\n${event("2026-11-29T07:00:02.000Z", 2)}\n`,
      520 << 20,
    );
    closeSync(fd);
    const before = statSync(path);
    await sortEventsFile(path);
    const after = statSync(path);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    await expect(sortEventsFile(join(dir!, "gone.jsonl"))).resolves.toBeUndefined();
  });

  it("leaves a file with a line longer than any event in the order it has", async () => {
    const path = join(temp(), "events.jsonl");
    const fd = openSync(path, "w");
    writeSync(fd, `${event("2026-11-29T07:00:02.000Z", 1)}\n`);
    // 520 MiB of zero bytes (sparse), then an earlier event.
    writeSync(fd, `\n${event("2026-11-29T07:00:01.000Z", 2)}\n`, 520 << 20);
    closeSync(fd);
    const before = statSync(path);
    await sortEventsFile(path);
    expect(statSync(path).ino).toBe(before.ino);
  });
});
