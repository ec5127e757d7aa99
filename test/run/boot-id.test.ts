// The boot id a journal records beside pids is read with suspicion: a file that is missing, not a
// UUID, too long, a FIFO or an endless device gives no boot id (and the pids decide as before),
// never an error, a hang or a boot id made of whatever the file held.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { currentBootId, isFromAnotherBoot, readBootId } from "../../src/run/step/boot-id.js";
import { tempDir } from "../helpers/cli.js";
import { otherBootId } from "./helpers/boot-ids.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});
const fileWith = (text: string | Buffer) => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const path = join(t.dir, "boot_id");
  writeFileSync(path, text);
  return path;
};

const ID = "0873b80e-4a90-47f8-a992-0fca8c451d76";

describe("readBootId", () => {
  it("reads the kernel's form, a UUID and a newline", () => {
    expect(readBootId(fileWith(`${ID}\n`))).toBe(ID);
  });

  it.each([
    ["empty", ""],
    ["not a UUID", "not-a-boot-id\n"],
    ["upper case (not how the kernel writes it)", `${ID.toUpperCase()}\n`],
    ["a UUID with more after it", `${ID}\n${ID}\n`],
    ["a UUID with a control character", `${ID}\u001b[2J\n`],
    ["far longer than a boot id", `${ID}${"x".repeat(100_000)}`],
    ["binary", Buffer.from([0xff, 0xfe, 0, 1, 2])],
  ])("gives none for a file that is %s", (_, text) => {
    expect(readBootId(fileWith(text))).toBeNull();
  });

  it("gives none for a missing file or a folder", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    expect(readBootId(join(t.dir, "missing"))).toBeNull();
    expect(readBootId(t.dir)).toBeNull();
  });

  it.skipIf(process.platform !== "linux")(
    "gives none, without waiting, for a FIFO nobody writes and an endless device",
    () => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const fifo = join(t.dir, "fifo");
      execFileSync("mkfifo", [fifo]);
      expect(readBootId(fifo)).toBeNull();
      expect(readBootId("/dev/zero")).toBeNull();
    },
  );
});

describe.skipIf(process.platform !== "linux")("isFromAnotherBoot", () => {
  it("is true only for a boot id that is not this boot's", () => {
    const now = currentBootId();
    expect(now, "this test needs /proc/sys/kernel/random/boot_id").not.toBeNull();
    expect(isFromAnotherBoot(now)).toBe(false);
    expect(isFromAnotherBoot(otherBootId(now!))).toBe(true);
    // An older journal's record, or one whose boot id is not one, cannot tell.
    expect(isFromAnotherBoot(undefined)).toBe(false);
    expect(isFromAnotherBoot(null)).toBe(false);
    expect(isFromAnotherBoot("not-a-boot-id")).toBe(false);
  });
});
