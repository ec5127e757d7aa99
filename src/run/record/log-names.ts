/**
 * Log file names in a run directory: one flat directory, `<pipeline>@<step>[@<attempt>]` then an
 * ending (docs/decisions/0003-step-output-in-files.md). Readable where the name allows it and
 * unique always: a name that a file name cannot carry as it is (`/`, `:`, spaces, non-ASCII, more
 * than NAME_CHARS characters, `.`/`..`) is written with its unsafe characters as `_`, cut to
 * NAME_CHARS, and followed by `~` and a hash of the whole name. `~` and `@` never occur in a name
 * kept as it is, so no two names (and no name and a hashed one) share a file.
 */
import { join } from "node:path";
import { sha256Hex } from "../../text/sha256.js";

/** Characters a name keeps as it is. */
const SAFE = /^[A-Za-z0-9_.=+-]+$/;
/** Per name, so that pipeline + step + attempt + ending stay within NAME_MAX (255 bytes). */
const NAME_CHARS = 80;
/** Hex digits of the name's SHA-256: 40 bits, so look-alike names never meet by chance in one run. */
const HASH_CHARS = 10;

/** Whether a name is written as it is, not as its safe characters and a hash. */
const isKeptAsItIs = (name: string): boolean =>
  SAFE.test(name) && name.length <= NAME_CHARS && name !== "." && name !== "..";

/** A file-name-safe form of a pipeline, step, worker key or device name (see above). */
function fileSafeName(name: string): string {
  if (isKeptAsItIs(name)) return name;
  const readable = name.replace(/[^A-Za-z0-9_.=+-]/g, "_").slice(0, NAME_CHARS);
  const hash = sha256Hex(name).slice(0, HASH_CHARS);
  return `${readable}~${hash}`;
}

/**
 * A pipeline or step name as a case-insensitive file system (macOS, Windows, SMB shares, some
 * Docker mounts) compares its part of a log file name: two names with one key write one file
 * there. What is folded is the file name gpuplan writes, not the name. A name kept as it is holds
 * only SAFE characters, all ASCII, so ASCII lower case is exact folding for it; any other name is
 * written with a hash of itself, so it shares a file with no other name and is its own key (`~`
 * and the name: no kept name holds `~`; not hashed here, which cost 170 ms for 20,000 names).
 * Names that differ beyond ASCII (`É`/`é`, `Straße`/`STRASSE`, which even full Unicode folding
 * only sometimes matches) are thus written apart and never warned of: no choice of Unicode
 * folding (simple, full, a file system's own table) could warn wrongly or miss a clash.
 */
export const logNameKey = (name: string): string => (isKeptAsItIs(name) ? name.toLowerCase() : `~${name}`);

/** `<pipeline>@<step>`, then `@<attempt>` from the second attempt on. */
export function logStem(pipeline: string, step: string, attempt: number): string {
  return `${fileSafeName(pipeline)}@${fileSafeName(step)}${attempt > 1 ? `@${attempt}` : ""}`;
}

/**
 * A step attempt's logs: `.out.log` and `.err.log` for a plain step's stdout and stderr, `.log`
 * for a worker task (the worker's output, one stream). An ok step that printed nothing leaves no
 * files (step/step-process.ts).
 */
export function stepLogPaths(
  runDir: string,
  pipeline: string,
  step: { id: string; worker: unknown },
  attempt: number,
): { logPath: string; stderrPath: string | null } {
  const base = join(runDir, "logs", logStem(pipeline, step.id, attempt));
  return step.worker
    ? { logPath: `${base}.log`, stderrPath: null }
    : { logPath: `${base}.out.log`, stderrPath: `${base}.err.log` };
}

/**
 * Every log file an attempt may have written, plain step or worker task alike: for telling its
 * leftover processes by the files they write to (step/step-session.ts), where the journal does
 * not say which kind of step it was.
 */
export function attemptLogFiles(runDir: string, pipeline: string, step: string, attempt: number): string[] {
  const base = join(runDir, "logs", logStem(pipeline, step, attempt));
  return [`${base}.out.log`, `${base}.err.log`, `${base}.log`];
}

/**
 * A warm worker's own log: `logs/workers/<key>@<device>.log`. A device id (`cuda:0`,
 * `cuda:0/mig1`, `rocm:1`) is gpuplan's own and its parts are safe: `cuda_0`, no hash needed.
 */
export const workerLogName = (key: string, device: string): string =>
  `${fileSafeName(key)}@${device.replace(/[:/]/g, "_")}.log`;
