// Events to a FIFO whose reader falls behind: a write never waits for the reader, what it has not
// taken waits in a bounded backlog and past it is read back from the run's own events.jsonl, and the
// end waits for the reader: it gets every event, whole lines, in order. Only a reader that leaves
// (EPIPE), a stop while waiting, or a FIFO nobody opens loses events (records-incomplete).
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openEventFiles } from "../../../src/run/record/event-files.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import { type RecordFailure, recordFailures } from "../../../src/run/record/record-failures.js";
import { openStreamPath, type StreamSink } from "../../../src/run/record/stream-target.js";
import { jsonText } from "../../../src/text/json-text.js";
import { tempDir } from "../../helpers/cli.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Whether the FIFO has a reader now (an open for writing that does not wait succeeds). */
const openStreamProbe = (fifo: string): true | null => {
  const fd = openStreamPath(fifo);
  if (fd === null) return null;
  closeSync(fd);
  return true;
};

const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : "");

/** ~300 bytes a line, numbered. */
const event = (i: number) => ({ event: "test.line", i, pad: "x".repeat(280) }) as unknown as RunEvent;

describe("events to a FIFO", () => {
  it("a reader that falls behind never blocks a write, loses nothing: past the memory bound the run's own file is read back, and the end waits for it", async () => {
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
    // An earlier session's lines (a resumed run): the read-back starts after them.
    writeFileSync(own, `${JSON.stringify({ earlier: true })}\n`);
    const events = openEventFiles([own, fifo], failures, { maxBacklogBytes: 256 * 1024 });
    const started = performance.now();
    // ~1.2 MB: far more than the FIFO (64 KiB) and the memory backlog hold.
    for (let i = 0; i < 4000; i++) events.write(event(i));
    // A blocking write waited here for the reader's 10 s.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(warned).toEqual([]);

    // The end waits for the reader, which starts reading 2 s into the wait: gpuplan gave it 1 s.
    setTimeout(() => writeFileSync(go, ""), 2000);
    const waits: [string, number][] = [];
    await events.close({ onWait: (path, bytes) => waits.push([path, bytes]) });
    await readerDone;
    expect(failures.incomplete()).toEqual([]);
    expect(waits).toHaveLength(1);
    expect(waits[0]![0]).toBe(fifo);
    expect(waits[0]![1]).toBeGreaterThan(256 * 1024);
    const lines = read(out).split("\n");
    expect(lines.pop()).toBe("");
    // Every event, whole lines, in order; the run's own file has the same lines after its earlier one.
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([...Array(4000).keys()]);
    expect(readFileSync(own, "utf8")).toBe(`${JSON.stringify({ earlier: true })}\n${read(out)}`);
  }, 30_000);

  it("a reader that never reads: the end waits until stopped (Ctrl-C), then says what it did not take", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fifo = join(dir, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = spawn("sh", ["-c", 'exec < "$1"; exec sleep 30', "sh", fifo], { stdio: "ignore" });
    cleanups.push(() => reader.kill("SIGKILL"));
    // The reader has the FIFO open before the first write (an open that found none drops nothing, but waits differently).
    while (openStreamProbe(fifo) === null) await new Promise((r) => setTimeout(r, 20));
    const failures = recordFailures();
    const events = openEventFiles([join(dir, "events.jsonl"), fifo], failures);
    for (let i = 0; i < 1000; i++) events.write(event(i));
    const stop = new AbortController();
    const stopAt = performance.now() + 3000;
    setTimeout(() => stop.abort(), 3000);
    await events.close({ stop: stop.signal });
    // It waited past the old one-second limit, until stopped, and returned at once then.
    expect(performance.now()).toBeGreaterThanOrEqual(stopAt - 50);
    expect(performance.now() - stopAt).toBeLessThan(2000);
    expect(failures.incomplete()).toEqual([
      {
        file: fifo,
        reason: expect.stringMatching(/^stopped while its reader had .* of events yet to take$/),
      },
    ]);
  }, 30_000);

  it("a reader that goes away (EPIPE): the loss is said as such, and the run's own file keeps every event", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const fifo = join(dir, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    // Reads one line and leaves.
    const reader = spawn("sh", ["-c", 'head -n 1 "$1" > /dev/null', "sh", fifo], { stdio: "ignore" });
    cleanups.push(() => reader.kill("SIGKILL"));
    const readerDone = new Promise<void>((r) => reader.on("close", () => r()));
    const failures = recordFailures();
    const own = join(dir, "events.jsonl");
    const events = openEventFiles([own, fifo], failures);
    events.write(event(0));
    await readerDone;
    for (let i = 1; i < 1000; i++) events.write(event(i));
    await events.close();
    expect(failures.incomplete()).toEqual([
      { file: fifo, reason: "its reader went away (EPIPE); later events are not sent" },
    ]);
    expect(readFileSync(own, "utf8").trim().split("\n")).toHaveLength(1000);
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

describe("events to a stream gpuplan already has (--ui json's stdout, a socket as stdout)", () => {
  /** A sink that takes nothing until released: what a reader that does not read looks like. */
  const stalledSink = () => {
    const got: Buffer[] = [];
    const waiting: (() => void)[] = [];
    let open = false;
    const sink: StreamSink = {
      write(bytes, done) {
        got.push(Buffer.from(bytes));
        if (open) setImmediate(done, null);
        else waiting.push(() => done(null));
      },
    };
    const release = () => {
      open = true;
      for (const w of waiting.splice(0)) w();
    };
    return { sink, got, release };
  };

  it("a view that does not read holds no more than the bound in memory: the rest is read back from the run's own file, and it gets every line, then its summary", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const own = join(dir, "events.jsonl");
    const failures = recordFailures();
    const view = stalledSink();
    const events = openEventFiles([own], failures, { maxBacklogBytes: 64 * 1024, view: view.sink });
    // ~1.2 MB, far past the 64 KiB bound.
    for (let i = 0; i < 4000; i++) events.write(event(i));
    events.writeToView('{"event":"run.summary"}\n');
    events.closeFiles();
    // What waited in the file is read from there when the reader gets to it: changed in place
    // now (same length), it shows which lines came from memory and which from the file.
    const text = readFileSync(own, "utf8");
    writeFileSync(own, text.replaceAll("x", "y"));
    view.release();
    await events.close();
    const got = Buffer.concat(view.got).toString("utf8");
    const lines = got.split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.at(-1)).toBe('{"event":"run.summary"}');
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([
      ...Array(4000).keys(),
    ]);
    const fromMemory = lines.filter((l) => l.includes("xxx")).join("\n").length;
    expect(fromMemory).toBeGreaterThan(0);
    expect(fromMemory).toBeLessThanOrEqual(64 * 1024 + 64 * 1024);
    expect(got.length).toBe(text.length + '{"event":"run.summary"}\n'.length);
    // The view's losses are not the records'.
    expect(failures.incomplete()).toEqual([]);
  }, 30_000);

  it("a view whose reader went away (EPIPE) stops being written, and that is no record's loss", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    let writes = 0;
    const sink: StreamSink = {
      write(_bytes, done) {
        writes++;
        setImmediate(done, Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    };
    const failures = recordFailures();
    const events = openEventFiles([join(dir, "events.jsonl")], failures, { view: sink });
    events.write(event(0));
    events.closeFiles();
    await new Promise((r) => setTimeout(r, 50));
    events.writeToView("{}\n");
    await events.close();
    expect(writes).toBe(1);
    expect(failures.incomplete()).toEqual([]);
  });

  it("the run's own file is written as the JSON view prints (jsonText): a C1 control is escaped, so the view's lines are its bytes", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const own = join(dir, "events.jsonl");
    const events = openEventFiles([own]);
    const e = { event: "test.line", name: "a\u009b2Jb\u2028" } as unknown as RunEvent;
    events.write(e);
    await events.close();
    expect(readFileSync(own, "utf8")).toBe(`${jsonText(e)}\n`);
    expect(readFileSync(own, "utf8")).toContain("\\u009b");
  });
});

describe("events appended to a file an earlier run left torn", () => {
  // A full disk or a file size limit (ulimit -f) cut the earlier run's last event short; a resume
  // appends to the same events.jsonl, and its first event must not be glued onto the broken line.
  it("the new events start a line of their own, each whole, in the run's file and in --events FILE", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const own = join(dir, "events.jsonl");
    const extra = join(dir, "extra.jsonl");
    const torn = `${jsonText(event(0))}\n{"ts":"2026-11-27T22:14:15.529Z","event":"gpu.st`;
    writeFileSync(own, torn);
    writeFileSync(extra, torn);
    const failures = recordFailures();
    const events = openEventFiles([own, extra], failures);
    events.write(event(1));
    events.write(event(2));
    await events.close();
    for (const file of [own, extra]) {
      const lines = read(file).split("\n");
      expect(lines.slice(0, 2).join("\n")).toBe(torn);
      expect(lines.slice(2).map((l) => (l ? JSON.parse(l).i : l))).toEqual([1, 2, ""]);
    }
    expect(failures.incomplete()).toEqual([]);
  });
});
