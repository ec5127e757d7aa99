// Reading events.jsonl a chunk at a time (src/report/read-lines.ts): lines cut by a chunk's edge,
// a character cut there, a last line without a newline, and a line too long to hold.
import { writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readLines } from "../../src/report/read-lines.js";
import { tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

async function linesOf(text: string, max: number) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = join(t.dir, "events.jsonl");
  writeFileSync(file, text);
  const handle = await open(file, "r");
  try {
    const out: { number: number; text: string | null }[] = [];
    for await (const line of readLines(handle, max)) out.push(line);
    return out;
  } finally {
    await handle.close();
  }
}

describe("reading a file's lines a chunk at a time", () => {
  it("gives each line whole across chunk edges, multi-byte characters too, and the last without a newline", async () => {
    // 1 MiB chunks: the é (2 bytes) straddles the first edge, the line holding it spans two chunks.
    const first = "x".repeat(1024 * 1024 - 1);
    const lines = await linesOf(`a\n${first}é${"y".repeat(10)}\n\nlast`, 4 * 1024 * 1024);
    expect(lines.map((l) => l.number)).toEqual([1, 2, 3, 4]);
    expect(lines[1]!.text).toBe(`${first}é${"y".repeat(10)}`);
    expect(lines.map((l) => l.text?.length)).toEqual([1, first.length + 11, 0, 4]);
    expect(lines[3]!.text).toBe("last");
  });

  it("gives a line longer than it keeps as null, and goes on with the next", async () => {
    const lines = await linesOf(`ok\n${"z".repeat(3 * 1024 * 1024)}\nafter\n${"w".repeat(50)}`, 1024 * 1024);
    expect(lines).toEqual([
      { number: 1, text: "ok" },
      { number: 2, text: null },
      { number: 3, text: "after" },
      { number: 4, text: "w".repeat(50) },
    ]);
  });
});
