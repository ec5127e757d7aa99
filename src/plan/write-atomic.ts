/**
 * The one way gpuplan writes a file for the user (`compile -o`, `detect --save`). A regular file
 * (new, or existing: it keeps its mode, and its owner when we are root) is replaced atomically,
 * so readers see the old or the new content, never half of it. Anything else that already sits
 * at the path is never replaced: a FIFO or a character device is written to as a stream
 * (`-o /dev/stdout`, `-o /dev/null`: as root, a rename would put a plain file in place of the
 * device node; a FIFO is given FIFO_READER_WAIT_MS to find a reader, never waited on for good), a descriptor link (`/dev/stdout`, `/dev/fd/N`) writes to that descriptor, and a
 * directory, block device or socket is refused. A symbolic link is followed and its target
 * replaced. Every failure is a UsageError naming the path (file-errors.ts).
 *
 * That is for a path the user named. A path gpuplan chose itself (a report's default
 * `<run>/report.html`, the files of an export folder, a Slurm run's records) is never followed:
 * whatever sits there but a directory — a link, a FIFO, a device — is replaced by a regular file.
 * Someone who can write in a run folder could otherwise plant `report.html -> ~/.bashrc` and have
 * the next `gpuplan report` overwrite the link's target; rename(2) replaces the link itself.
 */
import { constants, type Stats, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "../problems/errors.js";
import { errnoOf, fileError } from "../problems/file-errors.js";
import { stdoutFailureHint } from "../problems/stdout-failure.js";
import { randomHex } from "../text/random-hex.js";

/** How a path was written: replaced atomically, or written to as a stream or descriptor. */
export type WriteMode = "replaced" | "created" | "stream";

/** What is written: one string, or its pieces in order (a big plan is streamed, never held whole). */
export type Content = string | Iterable<string>;

/** node:fs/promises, loaded at the first write: a command that writes nothing (most compiles print
 * their plan) does not compile its ~2 ms of built-in modules at start (issue #17). */
const fsp = () => process.getBuiltinModule("node:fs/promises");

const piecesOf = (content: Content): Iterable<string> => (typeof content === "string" ? [content] : content);

/** Who named the path: the user (`-o FILE`: links followed), or gpuplan itself (never followed). */
export type PathChoice = "named" | "chosen";

/** Linux follows at most 40 links in a path; a longer chain is a loop. */
const MAX_LINKS = 40;

/**
 * Told the temporary file's path before it is created, and null once it is renamed or removed:
 * whoever handles Ctrl-C (the CLI) removes it if the process is stopped in between.
 */
export type TempFileWatcher = (tmp: string | null) => void;

/**
 * Write `text` to `path` for the user (see the header). `what` names the file in errors ("plan").
 * `choice`: whether the user named the path or gpuplan chose it. Resolves with how it was written.
 */
export async function writeFileAtomic(
  path: string,
  text: Content,
  what = "file",
  onTemp?: TempFileWatcher,
  choice: PathChoice = "named",
): Promise<WriteMode> {
  let linkedTo: string | null = null;
  if (choice === "named") refuseFolderName(path, what);
  try {
    const target = choice === "chosen" ? await ownTarget(path) : await resolveTarget(path);
    if (target.kind === "path" && target.path !== resolve(path)) linkedTo = target.path;
    if (target.kind === "fd") {
      // Node's own wakeup pipe or eventfd (-o /dev/fd/7): writing there crashed gpuplan (SIGSEGV).
      if (target.fd > 2 && (isEventLoopDescriptor(target.fd) || !isOpenDescriptor(target.fd)))
        throw new UsageError(
          `cannot write ${what} ${path}: gpuplan was started without descriptor ${target.fd} open`,
          "unwritable-file",
          "open it for gpuplan (e.g. 3>&1), or name a file",
        );
      try {
        await writeToDescriptor(target.fd, text);
      } catch (e) {
        throw descriptorError(e, target.fd, path, what);
      }
      return "stream";
    }
    const st = target.stats;
    if (st === null) {
      await replaceAtomically(target.path, text, null, onTemp);
      return "created";
    }
    if (st.isFile()) {
      if (choice === "named") refuseReadOnly(target.path, path, st, what);
      // A file at a path gpuplan chose may have been planted: its mode and owner are not taken over.
      await replaceAtomically(target.path, text, choice === "chosen" ? null : st, onTemp);
      return "replaced";
    }
    // Planted where gpuplan writes its own file: replaced, its mode and owner not taken over.
    if (choice === "chosen" && !st.isDirectory()) {
      await replaceAtomically(target.path, text, null, onTemp);
      return "replaced";
    }
    if (st.isFIFO()) {
      await writeFifo(target.path, text, path, what);
      return "stream";
    }
    if (st.isCharacterDevice()) {
      await writeStream(target.path, text);
      return "stream";
    }
    throw refusal(path, st, what);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    // A link whose target's folder is missing: the folder to name is the target's, not the link's
    // ("the folder . does not exist", said of `-o current.json -> plans/x/plan.json`).
    if (linkedTo !== null && errnoOf(e) === "ENOENT")
      throw new UsageError(
        `cannot write ${what} ${path}: it is a link to ${linkedTo}, whose folder does not exist`,
        "unwritable-file",
        `create ${dirname(linkedTo)} first, or point the link elsewhere`,
      );
    throw fileError(e, path, "write", what);
  }
}

/**
 * `-o plans/` names a folder, whatever is there: resolve() drops the slash, and the plan was
 * written as a file named `plans` (or over `plan.json` itself for `-o plan.json/`), where cp, tee
 * and the kernel say "Not a directory" or "Is a directory".
 */
export function refuseFolderName(path: string, what: string): void {
  if (!path.endsWith("/")) return;
  throw new UsageError(
    `cannot write ${what} ${path}: a path that ends in / names a folder, not a file`,
    "unwritable-file",
    "name a file inside it, or leave out the last /",
  );
}

/**
 * A file the user may not write (chmod a-w plan.json: a reviewed plan frozen) is not replaced,
 * though its folder would let a rename do it: `>`, tee and cp refuse it, and so does gpuplan.
 * access(2) answers as writing in place would, so root (who may write it) still replaces it.
 */
function refuseReadOnly(real: string, shown: string, st: Stats, what: string): void {
  try {
    process.getBuiltinModule("node:fs").accessSync(real, constants.W_OK);
  } catch (e) {
    if (errnoOf(e) !== "EACCES" && errnoOf(e) !== "EPERM") return;
    throw new UsageError(
      `cannot write ${what} ${shown}: it is read-only for you (mode ${(st.mode & 0o777).toString(8).padStart(3, "0")}), so gpuplan does not replace it`,
      "unwritable-file",
      `make it writable first (chmod u+w ${shown}), or write somewhere else`,
    );
  }
}

type Target = { kind: "fd"; fd: number } | { kind: "path"; path: string; stats: Stats | null };

/** Follow symbolic links to what the path names in the end (or where a new file would go). */
async function resolveTarget(path: string): Promise<Target> {
  let current = resolve(path);
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const fd = descriptorOf(current);
    if (fd !== null) return { kind: "fd", fd };
    let st: Stats;
    try {
      st = await fsp().lstat(current);
    } catch (e) {
      if (errnoOf(e) === "ENOENT") return { kind: "path", path: current, stats: null };
      throw e;
    }
    if (!st.isSymbolicLink()) return { kind: "path", path: current, stats: st };
    current = resolve(dirname(current), await fsp().readlink(current));
  }
  throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
}

/** A path gpuplan chose: what is there itself (lstat), a link included, never what it points to. */
async function ownTarget(path: string): Promise<Target> {
  const current = resolve(path);
  const st = await fsp()
    .lstat(current)
    .catch((e: unknown) => {
      if (errnoOf(e) === "ENOENT") return null;
      throw e;
    });
  return { kind: "path", path: current, stats: st };
}

/**
 * `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`: the descriptor gpuplan already has open. Opening
 * the link anew would truncate a file the shell opened for appending (`>> log`), and a pipe's
 * link does not even name a path.
 */
export function descriptorOf(path: string): number | null {
  const named = { "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2 }[path];
  if (named !== undefined) return named;
  const m = /^(?:\/dev\/fd|\/proc\/self\/fd|\/proc\/thread-self\/fd)\/([0-9]+)$/.exec(path);
  return m ? Number(m[1]) : null;
}

/** Whether `fd` is open in this process at all (a /dev/fd/N gpuplan was not started with is not). */
function isOpenDescriptor(fd: number): boolean {
  try {
    process.getBuiltinModule("node:fs").fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether descriptor `fd` is one Node opened for its event loop (Linux's /proc): an eventfd or
 * epoll, or a pipe whose reading end this process holds too (its wakeup and signal pipes). A
 * pipe gpuplan was handed to write to has its reader elsewhere.
 */
export function isEventLoopDescriptor(fd: number): boolean {
  const { readdirSync, readFileSync, readlinkSync } = process.getBuiltinModule("node:fs");
  const linkOf = (n: number | string) => readlinkSync(`/proc/self/fd/${n}`);
  const isReadEnd = (n: string) =>
    (Number.parseInt(
      /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${n}`, "utf8"))?.[1] ?? "1",
      8,
    ) &
      3) ===
    0;
  try {
    const link = linkOf(fd);
    if (link.startsWith("anon_inode:")) return true;
    if (!link.startsWith("pipe:")) return false;
    return readdirSync("/proc/self/fd").some((n) => {
      try {
        return linkOf(n) === link && isReadEnd(n);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

async function replaceAtomically(
  path: string,
  text: Content,
  existing: Stats | null,
  onTemp: TempFileWatcher | undefined,
): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, tempName(basename(path)));
  // A new file gets the usual 0666 less the umask; an existing one keeps its mode, set before
  // any content is written so a private file is never readable by others, not even for a moment.
  // Said before the file exists: a signal between its creation and the caller's knowing left it behind.
  onTemp?.(tmp);
  const handle = await fsp()
    .open(tmp, "wx", existing ? 0o600 : 0o666)
    .catch((e: unknown) => {
      onTemp?.(null);
      throw e;
    });
  let renamed = false;
  try {
    if (existing) {
      await handle.chmod(existing.mode & 0o7777);
      if (process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0)) {
        await handle.chown(existing.uid, existing.gid);
        // chown clears set-user/group-ID bits: set the mode again.
        await handle.chmod(existing.mode & 0o7777);
      }
    }
    await writePieces(handle.fd, text);
    await handle.sync();
    await handle.close();
    await fsp().rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      await handle.close().catch(() => undefined);
      await fsp().rm(tmp, { force: true });
    }
    onTemp?.(null);
  }
  await syncDirectory(dir);
}

/** The longest name a folder holds on Linux file systems, in bytes (NAME_MAX). */
const NAME_MAX_BYTES = 255;

/**
 * `.NAME.PID.HEX.tmp`, with NAME cut so that the whole stays a name the file system takes: a plan
 * named with 240 characters (which `touch` makes) was refused as "the name is too long", as its
 * temporary file's name was 20 bytes longer.
 */
function tempName(name: string): string {
  const suffix = `.${process.pid}.${randomHex(4)}.tmp`;
  const room = NAME_MAX_BYTES - 1 - suffix.length;
  let kept = name;
  // By code points, so that no character is cut in half.
  while (Buffer.byteLength(kept) > room) kept = Array.from(kept).slice(0, -1).join("");
  return `.${kept}${suffix}`;
}

/** The rename is durable only once its folder is on disk; a folder that cannot be opened is left as is. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp()
    .open(dir, "r")
    .catch(() => null);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/** A character device: opened for writing, never created, truncated or replaced. */
async function writeStream(path: string, text: Content): Promise<void> {
  // No O_CREAT: should the node vanish after it was looked at, fail rather than make a plain file.
  const handle = await fsp().open(path, constants.O_WRONLY | constants.O_NOCTTY);
  try {
    await writePieces(handle.fd, text);
  } finally {
    await handle.close();
  }
}

/**
 * How long a FIFO is given to find its reader: `gpuplan compile p.yaml -o f & consume < f` starts
 * them in either order. A blocking open(2) waited for one for good — `-o f` with nobody reading
 * hung, and Ctrl-C was the only way out.
 */
const FIFO_READER_WAIT_MS = 2000;
/** How often a FIFO without a reader is opened again, and a full one offered the rest. */
const FIFO_POLL_MS = 10;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A FIFO, opened and written without ever blocking: with no reader after FIFO_READER_WAIT_MS a
 * located error, and a full FIFO is waited for with the event loop free (Ctrl-C still ends
 * gpuplan at once, as it would `tee`). `shown`: the path as the user gave it.
 */
async function writeFifo(path: string, text: Content, shown: string, what: string): Promise<void> {
  const { openSync, closeSync } = process.getBuiltinModule("node:fs");
  const flags = constants.O_WRONLY | constants.O_NOCTTY | constants.O_NONBLOCK;
  const start = performance.now();
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(path, flags);
    } catch (e) {
      // ENXIO: no reader yet. Anything else (EACCES) is said as for any file.
      if (errnoOf(e) !== "ENXIO") throw e;
      if (performance.now() - start >= FIFO_READER_WAIT_MS)
        throw new UsageError(
          `cannot write ${what} ${shown}: it is a FIFO and nothing opened it for reading within ${FIFO_READER_WAIT_MS / 1000} s`,
          "unwritable-file",
          "start its reader first (or within that time), or name a regular file",
        );
      await pause(FIFO_POLL_MS);
    }
  }
  try {
    await writeWaitingForReader(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write to a pipe or FIFO that does not block: when it is full the reader is slower than gpuplan,
 * and it is waited for as any writer to a pipe does, with the event loop free.
 */
async function writeWaitingForReader(fd: number, text: Content): Promise<void> {
  for (const piece of piecesOf(text)) {
    const bytes = Buffer.from(piece, "utf8");
    for (let done = 0; done < bytes.length; ) {
      try {
        done += writeSync(fd, bytes, done, Math.min(bytes.length - done, MAX_WRITE_BYTES));
      } catch (e) {
        if (errnoOf(e) !== "EAGAIN") throw e;
        await pause(FIFO_POLL_MS);
      }
    }
  }
}

/**
 * How long writing (and making the pieces, which a big plan does as it goes) runs before the event
 * loop gets a turn: a signal handler runs only then, and Ctrl-C during a 75 MB plan's write of
 * 3 to 4 s waited for its end.
 */
const TURN_MS = 20;
/** A piece longer than this (a report's whole page) is written in parts, with turns between. */
const MAX_WRITE_BYTES = 1024 * 1024;

/**
 * A regular file or a device, written piece by piece with plain write(2)s: the pieces of a big
 * plan are let go as soon as they are written (awaiting FileHandle.write for each held them all
 * until the end, twice the plan's text in memory — docs/decisions/0015-compact-plans.md). The
 * event loop gets a turn every TURN_MS, so that Ctrl-C is heard while the write goes on.
 */
async function writePieces(fd: number, text: Content): Promise<void> {
  let turn = performance.now();
  const yieldIfDue = async () => {
    if (performance.now() - turn < TURN_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    turn = performance.now();
  };
  for (const piece of piecesOf(text)) {
    if (piece.length <= MAX_WRITE_BYTES) {
      // A regular file takes a whole piece in one write(2); should it not, the rest goes as bytes.
      const written = writeSync(fd, piece);
      if (written < Buffer.byteLength(piece)) writeBytes(fd, Buffer.from(piece, "utf8").subarray(written));
    } else {
      const bytes = Buffer.from(piece, "utf8");
      for (let at = 0; at < bytes.length; at += MAX_WRITE_BYTES) {
        writeBytes(fd, bytes.subarray(at, at + MAX_WRITE_BYTES));
        await yieldIfDue();
      }
    }
    await yieldIfDue();
  }
}

function writeBytes(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
}

async function writeToDescriptor(fd: number, text: Content): Promise<void> {
  try {
    await writeWaitingForReader(fd, text);
  } catch (e) {
    // The reader went away (`-o /dev/stdout | head -1`): the rest has nowhere to go, quietly. A
    // socket's reader that left with bytes unread says ECONNRESET (a Node parent's stdio).
    const errno = errnoOf(e);
    if (errno !== "EPIPE" && errno !== "ECONNRESET") throw e;
  }
}

/** fileError's, with the hint every stdout failure gets where the descriptor is stdout (`-o /dev/stdout`). */
function descriptorError(e: unknown, fd: number, path: string, what: string): UsageError {
  const error = fileError(e, path, "write", what);
  const hint = fd === 1 ? stdoutFailureHint(errnoOf(e)) : undefined;
  return hint === undefined ? error : new UsageError(error.message, error.code, hint);
}

function refusal(path: string, st: Stats, what: string): UsageError {
  if (st.isDirectory()) {
    return new UsageError(
      `cannot write ${what} ${path}: it is a directory`,
      "unwritable-file",
      "name a file inside it, not the folder itself",
    );
  }
  const kind = st.isBlockDevice() ? "a block device" : st.isSocket() ? "a socket" : "not a regular file";
  return new UsageError(
    `cannot write ${what} ${path}: it is ${kind}, which gpuplan never replaces or writes to`,
    "unwritable-file",
    "name a regular file, a FIFO or a character device such as /dev/stdout",
  );
}
