import { close, mkdirSync, openSync, write } from "node:fs";
import { dirname } from "node:path";

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

export function lazyLog(path: string): LazyLog {
  let fd: number | null = null;
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (pending > HIGH_WATER_CHARS / 4 || waiters.length === 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };
  const ensure = (): number => {
    if (fd === null) {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, "a");
    }
    return fd;
  };
  return {
    write(text) {
      const target = ensure();
      pending += text.length;
      chain = chain.then(
        () =>
          new Promise<void>((resolve) =>
            write(target, text, () => {
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
