/**
 * A file the user named that cannot be read or written is the user's to fix, never "internal
 * error": this turns the system's error into a located UsageError that says what is wrong with the
 * path and what to do about it.
 */
import { lstatSync, readlinkSync, statfsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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
        : whyNoSuchFolder(folder);
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
      return {
        reason: "the name is too long",
        hint: "each name in a path may have at most 255 bytes, and the whole path 4,096",
      };
    case "EMFILE":
    case "ENFILE":
      return { reason: "too many open files", hint: "raise the limit (ulimit -n) or close other programs" };
    case "EPIPE":
      return { reason: "its reader closed it before everything was written" };
    case "ENXIO":
      // /dev/tty says ENXIO in a process without a controlling terminal (cron, CI, setsid).
      return path === "/dev/tty"
        ? { reason: "gpuplan has no controlling terminal", hint: "name a file, or - for stdout" }
        : { reason: "no process reads it (a socket or a FIFO without a reader)" };
    default:
      return { reason: errno ?? (e instanceof Error ? e.message : String(e)) };
  }
}

/**
 * File systems whose folders take no new files or folders (create and mkdir say ENOENT there):
 * proc, sysfs, devpts, debugfs, tracefs, securityfs, by their statfs magic numbers.
 */
const VIRTUAL_FILE_SYSTEMS = new Set([0x9fa0, 0x62656572, 0x1cd1, 0x64626720, 0x74726163, 0x73636673]);

/**
 * A write into `folder` said ENOENT, which is more than "the folder does not exist": a link on the
 * way may lead nowhere, or the folder may be there and take no new files (/proc/self). Said as the
 * file system shows it now, walking the path as given, one name at a time.
 */
function whyNoSuchFolder(folder: string): { reason: string; hint?: string } {
  let at = folder.startsWith("/") ? "/" : "";
  for (const name of folder.split("/").filter((n) => n !== "" && n !== ".")) {
    const next = at === "" ? name : join(at, name);
    try {
      if (lstatSync(next).isSymbolicLink()) statSync(next);
    } catch (e) {
      if (errnoOf(e) !== "ENOENT") break;
      const link = linkOf(next);
      if (link !== null)
        return {
          reason: `${next} is a link to ${link}, which does not exist`,
          hint: `create ${resolve(dirname(next), link)}, or point the link elsewhere`,
        };
      if (isVirtual(at || "."))
        return {
          reason: `the folder ${next} does not exist, and ${at || "."} takes no new folders (a virtual file system such as /proc or /sys)`,
          hint: "write somewhere else",
        };
      return {
        reason: `the folder ${folder} does not exist`,
        hint: `create it first (mkdir -p ${folder}) or write somewhere else`,
      };
    }
    at = next;
  }
  return {
    reason: `the folder ${folder} takes no new files (a virtual file system such as /proc or /sys?)`,
    hint: "write somewhere else",
  };
}

function linkOf(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

function isVirtual(folder: string): boolean {
  try {
    return VIRTUAL_FILE_SYSTEMS.has(statfsSync(folder).type);
  } catch {
    return false;
  }
}
