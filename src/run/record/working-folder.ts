/**
 * RUNS_DIR is relative: in a process whose working folder was removed, every lookup under it says
 * "not found", and a command would report no runs, or no run X, of a folder that is not there.
 * Called before such an answer: process.cwd() then throws Node's ENOENT from uv_cwd, which the CLI
 * reports as working-folder-gone (src/cli/report-failure.ts). Node caches the folder once read,
 * so this costs nothing where it exists.
 */
export function checkWorkingFolder(): void {
  process.cwd();
}
