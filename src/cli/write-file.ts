/**
 * What the CLI writes for the user (a plan, an inventory, a report, sbatch scripts): atomically
 * (src/plan/write-atomic.ts), and Ctrl-C, SIGTERM or SIGHUP meanwhile removes the temporary file,
 * then stops the process as the signal would (a shell reads 130 after Ctrl-C), the file at the
 * path untouched. A big plan takes seconds to write, and each interrupted write used to leave a
 * `.plan.json.PID.HEX.tmp` of tens of MB behind; the writer gives the event loop a turn every
 * 20 ms, so the signal is heard within about that (it waited for the write's end).
 *
 * A path the user named gets the folders it needs, as `mkdir -p` would: one rule for every file
 * and folder gpuplan writes (compile -o, detect --save, report -o, export -o, run --events), as
 * vitest --outputFile, eslint -o, pytest --junitxml or nextflow -with-report do. Refusing sent
 * every CI script through a `mkdir -p plans` first, which our own README forgot twice.
 */
// lstatSync, not node:fs/promises: a compile or dry run loads no fs/promises (decision 0007).
import { lstatSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  type Content,
  descriptorOf,
  type PathChoice,
  refuseFolderName,
  type WriteMode,
  writeFileAtomic,
} from "../plan/write-atomic.js";
import { errnoOf, fileError } from "../problems/file-errors.js";
import { refuseRunRecord } from "./run-records.js";

/** What a write cleans up after before stopping as the signal would (SIGQUIT is left as it is: a core dump). */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Hear STOP_SIGNALS with `handler` until the returned function is called. */
export function listenForStop(handler: (signal: NodeJS.Signals) => void): () => void {
  const handlers = STOP_SIGNALS.map((signal) => {
    const heard = () => handler(signal);
    process.on(signal, heard);
    return [signal, heard] as const;
  });
  return () => {
    for (const [signal, heard] of handlers) process.off(signal, heard);
  };
}

/** `choice`: "chosen" when gpuplan picked the path itself (a link there is replaced, not followed). */
export async function writeUserFile(
  path: string,
  text: Content,
  what?: string,
  choice: PathChoice = "named",
): Promise<WriteMode> {
  let tmp: string | null = null;
  let stopListening: (() => void) | null = null;
  const forget = () => {
    stopListening?.();
    stopListening = null;
  };
  // Listened for only while a temporary file exists: a FIFO or a pipe is written with blocking
  // write(2)s that a handled signal does not end (it restarts them), and a reader that stopped
  // reading would have held Ctrl-C for good, where the default action ends gpuplan at once.
  const watch = (t: string | null) => {
    tmp = t;
    if (t === null) forget();
    else
      stopListening ??= listenForStop((signal) => {
        if (tmp !== null) rmSync(tmp, { force: true });
        forget();
        process.kill(process.pid, signal);
      });
  };
  try {
    if (choice === "named") {
      // Before any folder is made for it.
      refuseFolderName(path, what ?? "file");
      refuseRunRecord(path, "-o");
      await makeParentFolders(path, what ?? "file");
    }
    return await writeFileAtomic(path, text, what, watch, choice);
  } finally {
    forget();
  }
}

/**
 * Whether a path the user named is this process's stdout: `-` (as `compile -o -` has it),
 * /dev/stdout, /dev/fd/1. A command whose result also goes to stdout prints it once instead.
 */
export function isStdoutPath(path: string): boolean {
  return path === "-" || descriptorOf(resolve(path)) === 1;
}

/**
 * Make the folders above `path` when nothing is there yet. A link at `path` is left for the write
 * to follow or refuse: no folder is made where a link points. A file where a folder is needed, or
 * a folder the user may not write, is said as the write would say it.
 */
async function makeParentFolders(path: string, what: string): Promise<void> {
  if (path === "-" || descriptorOf(resolve(path)) !== null) return;
  try {
    lstatSync(path);
    return;
  } catch (e) {
    if (errnoOf(e) !== "ENOENT") return;
  }
  // Not mkdir's recursive option: it spins forever under /proc (make-folders.ts).
  const { makeFoldersSync } = await import("../run/record/make-folders.js");
  try {
    makeFoldersSync(dirname(resolve(path)));
  } catch (e) {
    throw fileError(e, path, "write", what);
  }
}
