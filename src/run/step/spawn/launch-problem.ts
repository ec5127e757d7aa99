/**
 * Why a step could not start, in the words a person acts on: its working folder is missing, or its
 * program is not where the step's PATH says. Checked before spawning (posix_spawn and Node would
 * both say `spawn node ENOENT` for either) and by `run --dry-run`, which starts nothing.
 */
import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";
import { resolveCommand } from "./resolve-command.js";

/** What stops `command` from starting in `cwd` with this PATH, or null when nothing does. */
export function launchProblem(command: string, cwd: string, path: string | undefined): string | null {
  const folder = statOf(cwd);
  if (folder === null) return `working folder ${cwd} does not exist`;
  if (!folder.isDirectory()) return `working folder ${cwd} is not a folder`;
  if (command.includes("/")) {
    const file = resolve(cwd, command);
    const stat = statOf(file);
    if (stat === null) return `program ${command} does not exist (${file})`;
    if (!stat.isFile()) return `program ${command} is not a file (${file})`;
    return isExecutable(file) ? null : `program ${command} is not executable (${file})`;
  }
  if (resolveCommand(command, cwd, path) !== null) return null;
  const shown = path === undefined ? "unset, so /bin:/usr/bin" : path === "" ? "empty" : path;
  return `program \`${command}\` not found on PATH (${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown})`;
}

function statOf(file: string) {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
