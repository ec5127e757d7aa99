/**
 * The run folder a command line names (`report RUN`, `run --resume RUN`, `status RUN`,
 * `compile --history RUN`). A path — with a `/`, or starting with `.` — is taken as typed, links
 * on it followed: the user named it, as `cat` follows a link it is given. An id is an entry of the
 * runs folder, which gpuplan fills with folders only; an entry there that is a symbolic link is
 * none of its runs (`gpuplan runs` never lists it, and it is never the newest run), and following
 * it would read and write — a report's default report.html, a resumed run's journal — wherever
 * whoever made it chose. It is refused, with the path that follows it if that is what is meant.
 * The runs folder itself (`.gpuplan/runs`, or `.gpuplan`) may be a link: that is the project's own
 * layout (runs kept on a scratch disk), and `gpuplan run` writes its runs through it too.
 */
import { lstatSync } from "node:fs";
import { join, sep } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { RUNS_DIR } from "./journal.js";

/** Whether a command line names a run by its path rather than by its id in the runs folder. */
const isRunPath = (run: string): boolean => run.includes(sep) || run.startsWith(".");

/** The folder `run` names (see the header); throws when an id's entry is a symbolic link. */
export function runDirOf(run: string, runsDir = RUNS_DIR): string {
  if (isRunPath(run)) return run;
  const dir = join(runsDir, run);
  if (isLink(dir))
    throw new UsageError(
      `run ${run} in ${runsDir} is a symbolic link, not a run folder`,
      "unknown-run",
      `gpuplan makes only folders there; to follow the link, name it as a path: ${dir}`,
    );
  return dir;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false; // Not there to be read (a runs "folder" that is a file): said where it is looked for.
  }
}
