// A log gpuplan writes itself (a warm worker's, a worker task's) makes the run's own log folders
// again when they were removed mid-run, but never the run folder around them: it made them with
// mkdir -p, so a run folder someone removed came back as a folder of logs without a journal,
// which `gpuplan runs` lists as a run gpuplan was killed in.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { lazyLog } from "../../../src/run/record/lazy-log.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function writeAndEnd(path: string, levels: number): Promise<unknown[]> {
  const lost: unknown[] = [];
  const log = lazyLog(path, (_p, e) => lost.push(e), levels);
  log.write("first line\n");
  return new Promise((resolve) => log.end(true, () => resolve(lost)));
}

it("makes logs/workers/ again when removed, with the run folder there", async () => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-lazy-log-"));
  const run = join(dir, "run");
  mkdirSync(run);
  const path = join(run, "logs", "workers", "seg@cuda:0.log");
  expect(await writeAndEnd(path, 2)).toEqual([]);
  expect(readFileSync(path, "utf8")).toBe("first line\n");
});

it("never makes the run folder itself again: the output is said lost", async () => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-lazy-log-"));
  const run = join(dir, "run");
  const lost = await writeAndEnd(join(run, "logs", "workers", "seg@cuda:0.log"), 2);
  expect(lost).toEqual([expect.objectContaining({ code: "ENOENT" })]);
  expect(existsSync(run)).toBe(false);
  // A task's log (logs/ only) the same way.
  const task = await writeAndEnd(join(run, "logs", "p@s.1.log"), 1);
  expect(task).toEqual([expect.objectContaining({ code: "ENOENT" })]);
  expect(existsSync(run)).toBe(false);
});
