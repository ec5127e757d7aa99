/**
 * The program a step's argv[0] names, looked up the way execvp(3) does in the step's own
 * environment: a name with a slash is a path (relative to the step's working directory); a bare
 * name is searched in the step's PATH (an empty entry or a relative one is relative to that
 * directory too). posix_spawn needs the path itself, and posix_spawnp would search gpuplan's PATH,
 * not the step's.
 *
 * Hits are cached for the run (a burst of short steps runs the same few programs); misses are
 * not, so a program an earlier step builds is found when a later one runs it; `fresh` looks again
 * (the caller's retry when a cached program is gone).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";

/** glibc's execvp default when PATH is unset. */
const DEFAULT_PATH = "/bin:/usr/bin";

const hits = new Map<string, string>();

/** The absolute path to execute, or null when nothing executable has that name (ENOENT). */
export function resolveCommand(
  name: string,
  cwd: string,
  path: string | undefined,
  fresh = false,
): string | null {
  if (name === "") return null;
  if (name.includes("/")) return resolve(cwd, name);
  const dirs = (path ?? DEFAULT_PATH).split(delimiter);
  const relative = dirs.some((d) => !isAbsolute(d));
  const key = `${relative ? cwd : ""}\0${path ?? ""}\0${name}`;
  if (fresh) hits.delete(key);
  const hit = hits.get(key);
  if (hit !== undefined) return hit;
  for (const dir of dirs) {
    const candidate = resolve(cwd, dir === "" ? "." : dir, name);
    if (isExecutableFile(candidate)) {
      hits.set(key, candidate);
      return candidate;
    }
  }
  return null;
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
