/**
 * What gpuplan says when its stdout cannot be written (a full disk behind `> plan.json`, a
 * terminal that went away): the line every failure has, with the system's error code — never
 * outside text — and, for the common codes, a hint saying what that means for stdout. The output
 * guard prints it at exit; bin/gpuplan.js imports this module for `--version`, which answers
 * before the CLI loads, only once its write failed; the plan writer takes the hint for
 * `-o /dev/stdout`. A leaf module: the start-up pays nothing for it.
 */

const FULL =
  "the disk or quota holding stdout is full: free some space (df -h), or send the output elsewhere";

const REFUSED =
  "the system refused writes to stdout's file (an append-only or immutable file, a security policy): send the output to another file";

const HINTS = new Map<string, string>([
  ["ENOSPC", FULL],
  ["EDQUOT", FULL],
  [
    "EFBIG",
    "stdout's file would pass the file size limit (ulimit -f) or the largest file its file system takes: send the output elsewhere",
  ],
  // A pty whose terminal closed (an ssh session or window gone) says EIO, as does a failing disk.
  [
    "EIO",
    "stdout is unusable: its terminal went away, or the disk behind it failed; run again with the output sent to a file (> out.json)",
  ],
  // Node reopens a closed fd 1 on /dev/null at start, so `>&-` loses the output without a word;
  // EBADF is a stdout open for reading only (`1<file`), or one closed by something since.
  [
    "EBADF",
    "stdout is closed or not open for writing (started with `1<file` or `>&-`?): give gpuplan a stdout, e.g. `> out.json` or `> /dev/null`",
  ],
  ["EACCES", REFUSED],
  ["EPERM", REFUSED],
  ["EROFS", "stdout's file is on a file system that is now read-only: send the output elsewhere"],
]);

/** The hint for a code stdout's write failed with, if it is a common one. */
export function stdoutFailureHint(code: string | undefined): string | undefined {
  return code === undefined ? undefined : HINTS.get(code);
}

/** A code as the system or Node names it (`ENOSPC`, `ERR_STREAM_DESTROYED`); anything else is not shown. */
const CODE = /^[A-Z][A-Z0-9_]{1,63}$/;

/** `gpuplan: error: cannot write to stdout: ENOSPC  [file-system-error]`, and its hint line. */
export function stdoutFailureText(code: string | undefined): string {
  const shown = code !== undefined && CODE.test(code) ? code : "unknown error";
  const hint = stdoutFailureHint(code);
  return `gpuplan: error: cannot write to stdout: ${shown}  [file-system-error]\n${hint ? `  hint: ${hint}\n` : ""}`;
}
