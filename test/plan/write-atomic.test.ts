// The one writer of files for the user (compile -o, detect --save): a regular file is replaced
// atomically keeping its mode and owner; a symlink is followed; a FIFO or a character device is
// written to as a stream and never replaced (as root, a rename would swap a device node for a
// plain file); a directory, a block device, a missing folder are located usage errors.
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../src/plan/write-atomic.js";
import { UsageError } from "../../src/problems/errors.js";
import { tempDir } from "../helpers/cli.js";

const isRoot = process.getuid?.() === 0;
let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

/** What the writer threw, as a UsageError (fails the test otherwise). */
async function refusal(path: string): Promise<UsageError> {
  const e = await writeFileAtomic(path, "new\n", "plan").then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UsageError);
  return e as UsageError;
}

const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".tmp"));

describe("regular files", () => {
  it("creates a new file with the usual mode (0666 less the umask) and leaves no temporary file", async () => {
    const path = join(t.dir, "plan.json");
    const old = process.umask(0o022);
    try {
      expect(await writeFileAtomic(path, "plan\n")).toBe("created");
    } finally {
      process.umask(old);
    }
    expect(readFileSync(path, "utf8")).toBe("plan\n");
    expect(statSync(path).mode & 0o7777).toBe(0o644);
    expect(leftovers(t.dir)).toEqual([]);
  });

  it("replaces an existing file by rename (a new inode), keeping its mode", async () => {
    for (const mode of [0o600, 0o640, 0o755, 0o2775]) {
      const path = join(t.dir, `plan-${mode.toString(8)}.json`);
      writeFileSync(path, "old\n");
      chmodSync(path, mode);
      const before = statSync(path).ino;
      expect(await writeFileAtomic(path, "new\n")).toBe("replaced");
      expect(readFileSync(path, "utf8")).toBe("new\n");
      expect(statSync(path).mode & 0o7777, mode.toString(8)).toBe(mode);
      expect(statSync(path).ino).not.toBe(before);
    }
    expect(leftovers(t.dir)).toEqual([]);
  });

  it.skipIf(!isRoot)("as root, keeps the owner and group of the file it replaces", async () => {
    const path = join(t.dir, "theirs.json");
    writeFileSync(path, "old\n");
    chownSync(path, 1234, 5678);
    chmodSync(path, 0o4750);
    await writeFileAtomic(path, "new\n");
    const st = statSync(path);
    expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([1234, 5678, 0o4750]);
  });
});

describe("symbolic links", () => {
  it("follows a link (relative, and a chain) and replaces its target; the links stay links", async () => {
    mkdirSync(join(t.dir, "real"));
    const target = join(t.dir, "real", "plan.json");
    writeFileSync(target, "old\n");
    chmodSync(target, 0o600);
    symlinkSync("real/plan.json", join(t.dir, "one"));
    symlinkSync(join(t.dir, "one"), join(t.dir, "two"));
    expect(await writeFileAtomic(join(t.dir, "two"), "new\n")).toBe("replaced");
    expect(readFileSync(target, "utf8")).toBe("new\n");
    expect(statSync(target).mode & 0o7777).toBe(0o600);
    expect(lstatSync(join(t.dir, "two")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(t.dir, "one"))).toBe("real/plan.json");
    expect(leftovers(t.dir)).toEqual([]);
    expect(leftovers(join(t.dir, "real"))).toEqual([]);
  });

  it("a dangling link creates its target", async () => {
    symlinkSync("made.json", join(t.dir, "link"));
    expect(await writeFileAtomic(join(t.dir, "link"), "new\n")).toBe("created");
    expect(readFileSync(join(t.dir, "made.json"), "utf8")).toBe("new\n");
    expect(lstatSync(join(t.dir, "link")).isSymbolicLink()).toBe(true);
  });

  it("a link loop is a usage error", async () => {
    symlinkSync("b", join(t.dir, "a"));
    symlinkSync("a", join(t.dir, "b"));
    const e = await refusal(join(t.dir, "a"));
    expect(e.code).toBe("unwritable-file");
    expect(e.message).toContain("too many symbolic links");
  });
});

describe("a path gpuplan chose itself (a report's default <run>/report.html) is never followed", () => {
  it("a planted link is replaced by the file; its target is untouched", async () => {
    const victim = join(t.dir, "victim");
    writeFileSync(victim, "precious\n");
    chmodSync(victim, 0o600);
    const path = join(t.dir, "report.html");
    symlinkSync(victim, path);
    expect(await writeFileAtomic(path, "<html>\n", "report", undefined, "chosen")).toBe("replaced");
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(lstatSync(path).isFile()).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("<html>\n");
    // A new file's mode, not the link target's.
    expect(statSync(path).mode & 0o777).not.toBe(0o600);
    // A dangling link creates nothing where it points.
    symlinkSync(join(t.dir, "made"), join(t.dir, "dangling"));
    expect(await writeFileAtomic(join(t.dir, "dangling"), "x\n", "report", undefined, "chosen")).toBe(
      "replaced",
    );
    expect(readdirSync(t.dir).includes("made")).toBe(false);
    expect(leftovers(t.dir)).toEqual([]);
  });

  it("a planted regular file hands on neither its mode nor its owner (a world-writable setuid report.html)", async () => {
    const path = join(t.dir, "report.html");
    writeFileSync(path, "planted\n");
    chmodSync(path, 0o4777);
    expect(await writeFileAtomic(path, "<html>\n", "report", undefined, "chosen")).toBe("replaced");
    expect(statSync(path).mode & 0o7777).not.toBe(0o4777);
    expect(statSync(path).mode & 0o022).toBe(0);
    // A path the user named keeps its file's mode, as before.
    const named = join(t.dir, "named.html");
    writeFileSync(named, "mine\n");
    chmodSync(named, 0o640);
    await writeFileAtomic(named, "<html>\n", "report");
    expect(statSync(named).mode & 0o777).toBe(0o640);
  });

  it("a planted FIFO is replaced, never opened (no reader: no hang); a directory is still refused", async () => {
    const fifo = join(t.dir, "report.html");
    expect(spawnSync("mknod", [fifo, "p"]).status).toBe(0);
    expect(await writeFileAtomic(fifo, "<html>\n", "report", undefined, "chosen")).toBe("replaced");
    expect(lstatSync(fifo).isFile()).toBe(true);
    mkdirSync(join(t.dir, "dir"));
    const e = await writeFileAtomic(join(t.dir, "dir"), "x", "report", undefined, "chosen").catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(UsageError);
  });
});

describe("things that are not regular files are never replaced", () => {
  it("a FIFO is written to as a stream: its reader gets the text, the FIFO stays", async () => {
    const fifo = join(t.dir, "fifo");
    expect(spawnSync("mknod", [fifo, "p"]).status).toBe(0);
    const reader = spawn("cat", [fifo]);
    let got = "";
    reader.stdout.on("data", (d: Buffer) => {
      got += d.toString();
    });
    const done = new Promise((resolve) => reader.on("close", resolve));
    expect(await writeFileAtomic(fifo, "through the pipe\n")).toBe("stream");
    await done;
    expect(got).toBe("through the pipe\n");
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(leftovers(t.dir)).toEqual([]);
  });

  it("a FIFO whose reader comes a moment later gets the whole text; one that gets none is refused", async () => {
    const fifo = join(t.dir, "fifo");
    expect(spawnSync("mknod", [fifo, "p"]).status).toBe(0);
    // Over a FIFO's 64 KiB: the writer also waits for the reader to make room.
    const text = `${"x".repeat(300_000)}\n`;
    let got = "";
    const late = new Promise<void>((resolve) =>
      setTimeout(() => {
        const reader = spawn("cat", [fifo]);
        reader.stdout.on("data", (d: Buffer) => {
          got += d.toString();
        });
        reader.on("close", () => resolve());
      }, 300),
    );
    expect(await writeFileAtomic(fifo, text)).toBe("stream");
    await late;
    expect(got).toBe(text);
    const started = performance.now();
    const e = await refusal(fifo);
    expect(e.message).toBe(
      `cannot write plan ${fifo}: it is a FIFO and nothing opened it for reading within 2 s`,
    );
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.skipIf(!isRoot)(
    "a character device (a /dev/null made with mknod) is written to and stays a device",
    async () => {
      const node = join(t.dir, "null");
      expect(spawnSync("mknod", ["-m", "666", node, "c", "1", "3"]).status).toBe(0);
      const before = lstatSync(node);
      expect(await writeFileAtomic(node, "discarded\n")).toBe("stream");
      const after = lstatSync(node);
      expect(after.isCharacterDevice()).toBe(true);
      expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
      expect(leftovers(t.dir)).toEqual([]);
    },
  );

  it.skipIf(!isRoot)("a block device is refused, untouched", async () => {
    // A block device number nothing uses: even a wrong write could reach no disk.
    const node = join(t.dir, "disk");
    expect(spawnSync("mknod", [node, "b", "259", "65000"]).status).toBe(0);
    const e = await refusal(node);
    expect(e.message).toBe(
      `cannot write plan ${node}: it is a block device, which gpuplan never replaces or writes to`,
    );
    expect(lstatSync(node).isBlockDevice()).toBe(true);
  });

  it("a directory is refused with a hint", async () => {
    const e = await refusal(t.dir);
    expect(e.message).toBe(`cannot write plan ${t.dir}: it is a directory`);
    expect(e.hint).toBe("name a file inside it, not the folder itself");
    expect(statSync(t.dir).isDirectory()).toBe(true);
  });
});

describe("path mistakes are located usage errors", () => {
  it("a missing folder", async () => {
    const e = await refusal(join(t.dir, "no/such/dir/plan.json"));
    expect(e.code).toBe("unwritable-file");
    expect(e.message).toBe(
      `cannot write plan ${join(t.dir, "no/such/dir/plan.json")}: the folder ${join(t.dir, "no/such/dir")} does not exist`,
    );
    expect(e.hint).toContain("mkdir -p");
  });

  it("a file where a folder is needed", async () => {
    writeFileSync(join(t.dir, "file"), "");
    const e = await refusal(join(t.dir, "file", "plan.json"));
    expect(e.message).toContain("a file stands where a folder is needed");
    expect(e.hint).toBeDefined();
  });
});
