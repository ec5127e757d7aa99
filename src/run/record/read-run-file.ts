/**
 * Reading a file of a run folder for `--resume` (journal.jsonl, plan.json): the folder may have
 * been damaged or tampered with, so the file is opened without blocking (a FIFO in its place
 * would otherwise wait forever for a writer), checked to be a regular file of a sane size, and
 * only then read. What is wrong is a `damaged-run` usage error naming the file.
 */
import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";

/** A run's journal and plan are small; more than this is not one gpuplan wrote. */
const MAX_RUN_FILE_BYTES = 256 * 1024 * 1024;

/** The file's text; `what` names it in messages ("journal", "plan"). */
export async function readRunFile(path: string, what: string): Promise<string> {
  return (await readRunFileBytes(path, what)).toString("utf8");
}

/** The file's bytes, read as readRunFile reads them: plan.json's are checked against the journal's digest. */
export async function readRunFileBytes(path: string, what: string): Promise<Buffer> {
  let handle: FileHandle;
  try {
    // node:fs/promises loaded here: a dry run imports this module but reads no run file (#17).
    const { open } = process.getBuiltinModule("node:fs/promises");
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") throw damagedRun(path, "is missing");
    if (errnoOf(e) === "ELOOP") throw damagedRun(path, "is a symbolic link");
    throw fileError(e, path, "read", `the run's ${what}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw damagedRun(path, `is ${kindOf(info)}, not a regular file`);
    if (info.size > MAX_RUN_FILE_BYTES)
      throw damagedRun(path, `is ${info.size} bytes, more than gpuplan writes`);
    return await handle.readFile();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw fileError(e, path, "read", `the run's ${what}`);
  } finally {
    await handle.close();
  }
}

/** A run folder's file that cannot be resumed from: `--resume: <path> <what is wrong>`. */
export function damagedRun(path: string, wrong: string): UsageError {
  return new UsageError(
    `--resume: ${path} ${wrong}`,
    "damaged-run",
    "the run folder was changed after gpuplan wrote it; restore the file, or start a new run without --resume",
  );
}

/** What a file is, for a message: "a FIFO", "a directory", "a regular file". */
export function kindOf(info: {
  isFile(): boolean;
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isSymbolicLink?(): boolean;
}): string {
  if (info.isFile()) return "a regular file";
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isSymbolicLink?.()) return "a symbolic link";
  return "a device";
}
