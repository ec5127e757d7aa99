import { close, mkdirSync, openSync, write } from "node:fs";
import { dirname } from "node:path";

export interface LazyLog {
  write(text: string): void;
  end(create: boolean, done: () => void): void;
}

/**
 * A log that gpuplan writes itself (a warm worker's log, and the log of a step run as a worker
 * task), created at its first byte: a task that prints nothing leaves no file. Writes are queued
 * in order on one descriptor. Plain steps write their logs themselves (step-output.ts).
 */
export function lazyLog(path: string): LazyLog {
  let fd: number | null = null;
  let chain: Promise<void> = Promise.resolve();
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
      chain = chain.then(() => new Promise<void>((resolve) => write(target, text, () => resolve())));
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
