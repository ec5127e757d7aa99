/**
 * A file the user named that cannot be read or written is the user's to fix, never "internal
 * error": this turns the system's error into a located UsageError that says what is wrong with the
 * path and what to do about it.
 */
import { dirname } from "node:path";
import { UsageError } from "./errors.js";

export type FileAction = "read" | "write";

/** The errno name of a Node system error (`ENOENT`…), if it is one. */
export function errnoOf(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e && typeof e.code === "string"
    ? e.code
    : undefined;
}

/** `cannot read pipeline file x.yaml: no such file`, with a hint for the case at hand. */
export function fileError(e: unknown, path: string, action: FileAction, what: string): UsageError {
  const { reason, hint } = describeFileError(errnoOf(e), path, action, e);
  return new UsageError(
    `cannot ${action} ${what} ${path}: ${reason}`,
    action === "read" ? "unreadable-file" : "unwritable-file",
    hint,
  );
}

function describeFileError(
  errno: string | undefined,
  path: string,
  action: FileAction,
  e: unknown,
): { reason: string; hint?: string } {
  const folder = dirname(path);
  switch (errno) {
    case "ENOENT":
      return action === "read"
        ? { reason: "no such file", hint: "check the path (a relative path starts from the current folder)" }
        : {
            reason: `the folder ${folder} does not exist`,
            hint: `create it first (mkdir -p ${folder}) or write somewhere else`,
          };
    case "EISDIR":
      return {
        reason: "it is a directory",
        hint:
          action === "read" ? "name a file, not a folder" : "name a file inside it, not the folder itself",
      };
    case "ENOTDIR":
      return {
        reason: "a file stands where a folder is needed",
        hint: "check the path: a file name is used as a folder in it",
      };
    case "EACCES":
    case "EPERM":
      return {
        reason: "permission denied",
        hint:
          action === "read"
            ? `check the permissions of ${path} and its folders (ls -l)`
            : `check that you may write in ${folder} (ls -ld ${folder}), or write somewhere else`,
      };
    case "EROFS":
      return { reason: "the file system is read-only", hint: "write somewhere else" };
    case "ENOSPC":
    case "EDQUOT":
      return { reason: "no space left on the device (or over quota)", hint: "free some space (df -h)" };
    case "EFBIG":
      return {
        reason: "the file would be larger than this process may write",
        hint: "raise the file size limit (ulimit -f) or free some space (df -h)",
      };
    case "ELOOP":
      return { reason: "too many symbolic links (a loop?)", hint: "check where the links point (ls -l)" };
    case "ENAMETOOLONG":
      return { reason: "the name is too long" };
    case "EMFILE":
    case "ENFILE":
      return { reason: "too many open files", hint: "raise the limit (ulimit -n) or close other programs" };
    case "EPIPE":
      return { reason: "its reader closed it before everything was written" };
    case "ENXIO":
      return { reason: "no process reads it (a socket or a FIFO without a reader)" };
    default:
      return { reason: errno ?? (e instanceof Error ? e.message : String(e)) };
  }
}
