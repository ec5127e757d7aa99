// Where the example's steps keep their files: the OS temp dir, one folder per run and plate.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The value after `--name` on the command line. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

/** The plate's working folder for this run (GPUPLAN_RUN is set by gpuplan run). */
export function plateDir(plate) {
  const dir = join(tmpdir(), "gpuplan-hello-cpu", process.env.GPUPLAN_RUN ?? "manual", plate);
  mkdirSync(dir, { recursive: true });
  return dir;
}
