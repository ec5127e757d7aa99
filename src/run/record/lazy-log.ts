import { close, constants, openSync, write } from "node:fs";
import { dirname } from "node:path";
import { makeLastFoldersSync } from "./make-folders.js";

/** A log lost output: it could not be opened or written (`e` says why). */
export type LogLost = (path: string, e: unknown) => void;

export interface LazyLog {
  /** Queues `text`; false once more than HIGH_WATER_CHARS wait: the writer should wait for `drained`. */
  write(text: string): boolean;
  /** Resolves once what waits is back under HIGH_WATER_CHARS / 4 (at once if it is). */
  drained(): Promise<void>;
  end(create: boolean, done: () => void): void;
}

/**
 * A log that gpuplan writes itself (a warm worker's log, and the log of a step run as a worker
 * task), created at its first byte: a task that prints nothing leaves no file. Writes are queued
 * in order on one descriptor. Plain steps write their logs themselves (step-output.ts).
 * What waits is counted, so a writer faster than the disk (a worker flooding its stdout) can stop
 * reading its source instead of queueing without limit.
 */
const HIGH_WATER_CHARS = 1024 * 1024;

/**
 * `folderLevels`: how many folders of the path's own the log may make when they are missing
 * (`logs/` for a task's log; `logs/workers/` for a worker's), never the run folder above them.
 */
export function lazyLog(path: string, onLost: LogLost = () => undefined, folderLevels = 1): LazyLog {
  let fd: number | null = null;
  // Set once the file cannot be opened: the rest of the output is dropped, not thrown at the
  // reader of the worker's pipe (an uncaught error there ended gpuplan with a stack).
  let failed = false;
  const lose = (e: unknown) => {
    failed = true;
    onLost(path, e);
  };
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (pending > HIGH_WATER_CHARS / 4 || waiters.length === 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };
  const ensure = (): number | null => {
    if (fd === null && !failed) {
      try {
        makeLastFoldersSync(dirname(path), folderLevels);
        // Not through a link planted under the name (step-output.ts openOutput says why).
        fd = openSync(
          path,
          constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
          0o666,
        );
      } catch (e) {
        lose(e);
      }
    }
    return fd;
  };
  return {
    write(text) {
      const target = ensure();
      if (target === null) return true;
      pending += text.length;
      chain = chain.then(
        () =>
          new Promise<void>((resolve) =>
            write(target, text, (e) => {
              // A full disk: said (the run's records are incomplete), and the output goes on.
              if (e) onLost(path, e);
              pending -= text.length;
              settle();
              resolve();
            }),
          ),
      );
      return pending <= HIGH_WATER_CHARS;
    },
    drained() {
      if (pending <= HIGH_WATER_CHARS / 4) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    end(create, done) {
      if (create) ensure();
      void chain.then(() => {
        if (fd === null) return done();
        close(fd, () => done());
      });
    },
  };
}
