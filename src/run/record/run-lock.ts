/**
 * One gpuplan per run folder: `run.lock` in the folder, flocked for as long as the run goes on
 * (a new run from its first step, a resumed one before it reads the journal), with the holder's
 * pid written in it for the message a second `--resume` gets. The kernel drops the lock when its
 * holder dies, kill -9 included, so a lock is never stale; only the pid text is informative, and
 * it is read as digits only.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { tryLockWholeFile } from "../../libc/whole-file-lock.js";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import { isStepSessionAlive, liveSessions } from "../step/step-session.js";
import { readJournal } from "./journal.js";
import { attemptLogFiles } from "./log-names.js";
import { damagedRun, kindOf } from "./read-run-file.js";

export interface RunLock {
  /** Let go of the run folder (closing the file drops the lock). */
  release(): Promise<void>;
}

/** Take the run folder's lock, or throw `run-in-use` naming the gpuplan that holds it. */
export async function takeRunLock(runDir: string, run: string): Promise<RunLock> {
  const path = join(runDir, "run.lock");
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: a FIFO put in its place would otherwise wait for a reader.
    handle = await open(
      path,
      constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o644,
    );
  } catch (e) {
    if (errnoOf(e) === "ELOOP") throw damagedRun(path, "is a symbolic link");
    throw fileError(e, path, "write", "the run's lock file");
  }
  // A FIFO, socket or device opens (O_RDWR never waits) but cannot be truncated or hold the pid:
  // the folder is not one gpuplan left, and is said so rather than crashing on ftruncate.
  const info = await handle.stat().catch(async (e: unknown) => {
    await handle.close();
    throw fileError(e, path, "read", "the run's lock file");
  });
  if (!info.isFile()) {
    await handle.close();
    throw damagedRun(path, `is ${kindOf(info)}, not a regular file`);
  }
  let taken: boolean;
  try {
    taken = await tryLockWholeFile(handle.fd);
  } catch {
    // No flock here (koffi cannot load the C library, a file system without locks): the run goes
    // on unguarded, as it did before run.lock, rather than not at all.
    taken = true;
  }
  if (!taken) {
    const text = await handle.readFile("utf8").catch(() => "");
    await handle.close();
    const pid = /^\d{1,10}/.exec(text)?.[0];
    throw new UsageError(
      `run ${run} is being run by another gpuplan${pid ? ` (pid ${pid})` : ""}; one gpuplan runs a run folder at a time`,
      "run-in-use",
      pid
        ? `wait for it to end, or stop it (kill ${pid}) and resume again`
        : "wait for it to end, then resume again",
    );
  }
  await handle.truncate(0);
  await handle.write(`${process.pid}\n`, 0);
  return { release: () => handle.close() };
}

/**
 * Whether a gpuplan runs the folder now (for `gpuplan runs` and its prune): its lock is held. The
 * look takes the lock for an instant when it is free, so a resume started in that instant is told
 * the run is in use — and may simply be started again.
 */
export async function isRunInUse(runDir: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: a FIFO in its place would otherwise wait forever for a writer.
    handle = await open(
      join(runDir, "run.lock"),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (e) {
    // Out of file descriptors says nothing of the run: the caller decides (prune keeps it).
    if (isFdLimit(e)) throw e;
    // No lock file: a run from before run.lock, or one that never started.
    return false;
  }
  try {
    // Not a lock gpuplan made (a FIFO, a device): no gpuplan holds it; the listing says it is damaged.
    if (!(await handle.stat()).isFile()) return false;
    return !(await tryLockWholeFile(handle.fd));
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * Whether a run may not be removed: a gpuplan holds it, or a step it started still runs (gpuplan
 * was killed, its step was not: the step writes its logs into the folder, and `--resume` waits
 * for it). A journal that cannot be read tells no steps.
 */
export async function isRunOrStepAlive(runDir: string): Promise<boolean> {
  if (await isRunInUse(runDir)) return true;
  // A damaged journal tells no steps; one that could not be read now (out of file descriptors,
  // permissions) might, and is let through: prune keeps a run it cannot judge.
  const journal = await readJournal(runDir).catch((e: unknown) =>
    e instanceof UsageError && e.code === "unreadable-file" ? Promise.reject(e) : null,
  );
  if (!journal?.unfinished.length) return false;
  // A step's group may be gone while something it started lives on in its session (step-session.ts).
  const sessions = liveSessions();
  const run = journal.header.run;
  return journal.unfinished.some((a) =>
    isStepSessionAlive({ ...a, run, logs: attemptLogFiles(runDir, a.pipeline, a.step, a.attempt) }, sessions),
  );
}

const isFdLimit = (e: unknown): boolean => errnoOf(e) === "EMFILE" || errnoOf(e) === "ENFILE";
