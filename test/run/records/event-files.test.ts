// Events to a FIFO whose reader falls behind: a write never waits for the reader, what it has not
// taken waits in a bounded backlog, past it events are dropped and reported once (records-incomplete),
// and the reader gets whole lines, in order. The run folder's own events.jsonl gets every event.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openEventFiles } from "../../../src/run/record/event-files.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import { type RecordFailure, recordFailures } from "../../../src/run/record/record-failures.js";
import { tempDir } from "../../helpers/cli.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");

/** ~300 bytes a line, numbered. */
const event = (i: number) => ({ event: "test.line", i, pad: "x".repeat(280) }) as unknown as RunEvent;

describe("events to a FIFO", () => {
  it("a reader that falls behind never blocks a write: a bounded backlog, the rest dropped and said once, whole lines in order", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fifo = join(dir, "events.fifo");
    const go = join(dir, "go");
    const out = join(dir, "read.jsonl");
    execFileSync("mkfifo", [fifo]);
    // Opens the FIFO and reads nothing until `go` exists (10 s at most), then everything into a
    // file (a pipe back to this process could fill while a blocking write held it).
    const reader = spawn(
      "sh",
      [
        "-c",
        'exec < "$1"; i=0; while [ ! -e "$2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; exec cat > "$3"',
        "sh",
        fifo,
        go,
        out,
      ],
      { stdio: "ignore" },
    );
    cleanups.push(() => reader.kill("SIGKILL"));
    const readerDone = new Promise<void>((r) => reader.on("close", () => r()));

    const warned: RecordFailure[] = [];
    const failures = recordFailures((f) => warned.push(f));
    const own = join(dir, "events.jsonl");
    const events = openEventFiles([own, fifo], failures, { maxBacklogBytes: 256 * 1024 });
    const started = performance.now();
    // ~1.2 MB: far more than the FIFO (64 KiB) and the backlog hold.
    for (let i = 0; i < 4000; i++) events.write(event(i));
    // A blocking write waited here for the reader's 10 s.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(warned).toEqual([{ file: fifo, reason: expect.stringMatching(/events are dropped/) }]);

    writeFileSync(go, "");
    while (read(out) === "") await new Promise((r) => setTimeout(r, 20));
    await events.close();
    await readerDone;
    const lines = read(out).split("\n");
    expect(lines.pop()).toBe("");
    const numbers = lines.map((l) => (JSON.parse(l) as { i: number }).i);
    // The oldest events went out; later ones were dropped while the backlog was full.
    expect(numbers[0]).toBe(0);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.length).toBeLessThan(4000);
    expect(numbers.every((n, k) => k === 0 || n > numbers[k - 1]!)).toBe(true);
    expect(failures.incomplete().map((f) => f.file)).toEqual([fifo]);
    // The run folder's own file is a regular file: every event, written as it came.
    expect(readFileSync(own, "utf8").trim().split("\n")).toHaveLength(4000);
  }, 30_000);

  it("a FIFO nobody reads yet: opening it does not wait, and the events wait for the reader that opens it later", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fifo = join(dir, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    const out = join(dir, "read.jsonl");
    const reader = spawn("sh", ["-c", 'sleep 6; exec cat "$1" > "$2"', "sh", fifo, out], { stdio: "ignore" });
    cleanups.push(() => reader.kill("SIGKILL"));
    const readerDone = new Promise<void>((r) => reader.on("close", () => r()));
    const failures = recordFailures();
    const started = performance.now();
    const events = openEventFiles([join(dir, "events.jsonl"), fifo], failures);
    for (let i = 0; i < 10; i++) events.write(event(i));
    // A blocking open waited here until the reader came (6 s).
    expect(performance.now() - started).toBeLessThan(3000);
    while (read(out).split("\n").length <= 10) await new Promise((r) => setTimeout(r, 50));
    await events.close();
    await readerDone;
    expect(
      read(out)
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { i: number }).i),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(failures.incomplete()).toEqual([]);
  }, 30_000);

  it("a FIFO nobody ever reads: the run's end does not wait for a reader, and says the events were dropped", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fifo = join(dir, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    const failures = recordFailures();
    const events = openEventFiles([join(dir, "events.jsonl"), fifo], failures);
    events.write(event(0));
    const started = performance.now();
    await events.close();
    // A second's flush at most; slack for a loaded machine.
    expect(performance.now() - started).toBeLessThan(6000);
    expect(failures.incomplete()).toEqual([
      { file: fifo, reason: "nobody opened it for reading; events are dropped" },
    ]);
  }, 30_000);
});
