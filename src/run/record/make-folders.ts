/**
 * `mkdir -p` for paths the user names (`--events DIR/x.jsonl`, `--lock-dir`): one level at a
 * time, from the deepest that exists. Node 20's `mkdir(…, { recursive: true })` spins forever at
 * full CPU where a level cannot be made with ENOENT — anywhere under /proc or /sys
 * (`--events /proc/self/x/e.jsonl` hung `gpuplan run` before it started) — as locks init found
 * (init-lock-dir.ts). The first error other than EEXIST is thrown as it came, for the caller to say.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Make `dir` and the folders above it that are missing, each with `mode` (before the umask). */
export function makeFoldersSync(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let p = dir; !exists(p) && dirname(p) !== p; p = dirname(p)) missing.push(p);
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}

/** Whether anything is at `path` (a link counts: mkdir there says EEXIST, or ENOTDIR below it). */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (e) {
    // Not there; anything else (EACCES, ENOTDIR) is left for mkdir to say.
    return (e as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/**
 * Make `dir` and at most `levels - 1` missing folders above it: a run's own log folders (logs/,
 * logs/workers/) are made again when someone removed them mid-run, but never the run folder
 * around them — a folder of logs without its journal would be listed as a run. Throws ENOENT
 * (as mkdir does) when more levels are missing.
 */
export function makeLastFoldersSync(dir: string, levels: number): void {
  const missing: string[] = [];
  for (let p = dir; !exists(p) && dirname(p) !== p; p = dirname(p)) {
    if (missing.length === levels) {
      throw Object.assign(new Error(`ENOENT: no such file or directory, mkdir '${p}'`), {
        code: "ENOENT",
        path: p,
      });
    }
    missing.push(p);
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
}
