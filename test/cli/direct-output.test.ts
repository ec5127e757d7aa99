// gpuplan prints its texts with write(2) on fd 1 and 2 instead of through Node's streams
// (src/cli/output-guard.ts). A reader slower than the writer must still get every byte, in order:
// from a blocking pipe (the usual case: write(2) waits) and from a non-blocking one, which a
// parent outside libuv (a shell's coprocess, an asyncio program) may hand over: write(2) then
// fails with EAGAIN and the rest goes through Node's stream. Node's own spawn makes a child's
// fd 0–2 blocking, so a preload turns O_NONBLOCK on inside the child.
import { spawn } from "node:child_process";
import { closeSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import koffi from "koffi";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ROOT, tempDir, writeBigPipeline } from "../helpers/cli.js";

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

const pipe2 = koffi.load("libc.so.6").func("int pipe2(_Out_ int *fds, int flags)") as (
  fds: number[],
  flags: number,
) => number;

/** A preload that makes fd 1 non-blocking and counts, in `marker`, the writes that met EAGAIN. */
function nonBlockingStdout(marker: string): string {
  const file = join(t.dir, "nonblocking-stdout.cjs");
  writeFileSync(
    file,
    `const koffi = require(${JSON.stringify(join(ROOT, "node_modules/koffi"))});
const fcntl = koffi.load("libc.so.6").func("int fcntl(int fd, int cmd, ...)");
const O_NONBLOCK = 0o4000, F_GETFL = 3, F_SETFL = 4;
if (fcntl(1, F_SETFL, "int", fcntl(1, F_GETFL) | O_NONBLOCK) !== 0) throw new Error("fcntl");
const fs = require("node:fs");
const writeSync = fs.writeSync;
fs.writeSync = function (fd, ...rest) {
  try {
    return writeSync.call(this, fd, ...rest);
  } catch (e) {
    if (fd === 1 && e.code === "EAGAIN") fs.appendFileSync(${JSON.stringify(marker)}, "x");
    throw e;
  }
};
`,
  );
  return file;
}

interface Ended {
  stdout: string;
  stderr: string;
  code: number | null;
  eagain: number;
}

/** Compile to stdout into a pipe of our own, read 64 KiB at a time with pauses between reads. */
async function compileIntoSlowPipe(nonBlocking: boolean): Promise<Ended> {
  const fds = [0, 0];
  expect(pipe2(fds, 0)).toBe(0);
  const [readEnd, writeEnd] = fds as [number, number];
  const marker = join(t.dir, "eagain");
  writeFileSync(marker, "");
  const preload = nonBlocking ? ["--require", nonBlockingStdout(marker)] : [];
  const args = [
    ...preload,
    join(ROOT, "bin/gpuplan.js"),
    "compile",
    writeBigPipeline(t.dir, 600, `-${"x".repeat(40)}`),
    "--target",
    "cpu-only",
  ];
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", writeEnd, "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  closeSync(writeEnd);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  for (;;) {
    const n = readSync(readEnd, buffer, 0, buffer.length, null);
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
    await new Promise((r) => setTimeout(r, 2));
  }
  closeSync(readEnd);
  const eagain = readFileSync(marker, "utf8").length;
  // The child's exit first: its summary on stderr may still be on its way when stdout ends (an
  // object literal would read `stderr` before awaiting the exit, and flake under load).
  const code = await exited;
  return { stdout: Buffer.concat(chunks).toString("utf8"), stderr, code, eagain };
}

it.each([
  ["a blocking pipe", false],
  ["a non-blocking pipe (EAGAIN)", true],
])("a slow reader of %s gets the whole plan, and the summary follows on stderr", async (_, nonBlocking) => {
  const r = await compileIntoSlowPipe(nonBlocking);
  expect(r.stderr).toMatch(/^gpuplan compile: 600 pipelines \(all on CPU\)/);
  expect(r.code).toBe(0);
  // The non-blocking case did meet a full pipe: the hand-over to Node's stream was exercised.
  if (nonBlocking) expect(r.eagain).toBeGreaterThan(0);
  expect(r.stdout.length).toBeGreaterThan(1_000_000);
  const plan = JSON.parse(r.stdout);
  expect(plan.pipelines).toHaveLength(600);
});
