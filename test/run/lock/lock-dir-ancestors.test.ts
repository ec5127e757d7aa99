// The folders above the lock directory are held to its own rule (folder-trust.ts): one another
// user may write without the sticky bit, or one she owns, lets her rename the lock directory away
// and put hers in its place. Mode bits are tested in a temp tree (root passes any chmod, but the
// check reads the bits, not access()); ownership by another user needs root (chown nobody).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { privateLockDir, SYSTEM_LOCK_DIR } from "../../../src/run/lock/default-lock-dir.js";
import { untrustedAncestor } from "../../../src/run/lock/folder-trust.js";
import { createSlotLock } from "../../../src/run/lock/index.js";
import { checkLockDir, ensureLockDir, ownerName } from "../../../src/run/lock/lock-dir.js";
import { gpuplan } from "../../helpers/cli.js";
import { built } from "./processes.js";

const isRoot = process.getuid?.() === 0;
const nobody = (() => {
  const r = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.trim()) : null;
})();

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "gpuplan-lock-ancestors-"));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** `base/a/b/…`, those missing made 0755; the deepest returned. */
function folders(...names: string[]): string {
  const path = join(base, ...names);
  mkdirSync(path, { recursive: true, mode: 0o755 });
  return path;
}

const untrusted = (folder: string, dir: string) => ({
  name: "UsageError",
  code: "lock-dir-untrusted",
  message: expect.stringContaining(`${folder} above the GPU lock directory ${dir}`),
});

describe("folders above the lock directory", () => {
  it("a parent writable by others without the sticky bit is refused, naming it, its owner and mode, and the fix", async () => {
    const shared = folders("shared");
    chmodSync(shared, 0o777);
    const dir = join(shared, "locks");
    mkdirSync(dir, { mode: 0o700 });
    let error: unknown;
    try {
      ensureLockDir(dir);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject(untrusted(shared, dir));
    expect((error as Error).message).toBe(
      `the folder ${shared} above the GPU lock directory ${dir} (owned by ${ownerName(lstatSync(shared).uid)}, mode 0777) is writable by other users without the sticky bit: they could rename the lock directory away and put their own in its place`,
    );
    expect((error as { hint: string }).hint).toMatch(
      new RegExp(`^\`chmod go-w ${shared}\` \\(or \`chmod \\+t`),
    );
    expect(() => checkLockDir(dir)).toThrow(/above the GPU lock directory/);
    await expect(createSlotLock({ dir }).acquire(request())).rejects.toMatchObject(untrusted(shared, dir));
  });

  it("group-writable counts too, and so does any folder further up; a missing lock dir made there is still refused", () => {
    const top = folders("top");
    const dir = join(folders("top", "mid", "low"), "locks");
    chmodSync(top, 0o775);
    expect(() => ensureLockDir(dir)).toThrow(expect.objectContaining(untrusted(top, dir)));
    chmodSync(top, 0o2770);
    expect(() => checkLockDir(dir)).toThrow(/mode 2770\) is writable by other users/);
    chmodSync(top, 0o755);
    expect(ensureLockDir(dir)).toBe("private");
  });

  it("a sticky folder others may write (as /tmp) is fine, and so is a mktemp folder and the default private directory's /tmp", () => {
    const sticky = folders("sticky");
    chmodSync(sticky, 0o1777);
    expect(ensureLockDir(join(sticky, "locks"))).toBe("private");
    expect(ensureLockDir(join(base, "plain"))).toBe("private");
    expect(untrustedAncestor(privateLockDir())).toBeNull();
  });

  it.skipIf(!existsDir("/var/lib"))(
    "the folders above the system directory (/var/lib/gpuplan/locks) pass",
    () => {
      expect(untrustedAncestor(dirname(SYSTEM_LOCK_DIR))).toBeNull();
    },
  );

  it.skipIf(!isLink("/var/run"))(
    "a symlinked folder is judged by the real folders it leads to (/var/run -> /run)",
    () => {
      expect(untrustedAncestor("/var/run/locks")).toBeNull();
    },
  );

  it("a symlink on the way is followed: the real folder it leads to, and the folders above that, are checked", () => {
    const open = folders("open");
    const real = folders("open", "real");
    const mine = folders("mine");
    symlinkSync(real, join(mine, "link"));
    const dir = join(mine, "link", "locks");
    expect(ensureLockDir(dir)).toBe("private");
    chmodSync(open, 0o777);
    expect(() => ensureLockDir(dir)).toThrow(expect.objectContaining(untrusted(open, dir)));
    chmodSync(open, 0o755);
    chmodSync(real, 0o757);
    expect(() => checkLockDir(dir)).toThrow(expect.objectContaining(untrusted(real, dir)));
  });

  it.skipIf(!built)("gpuplan locks refuses it with exit 2", () => {
    const shared = folders("shared");
    chmodSync(shared, 0o777);
    const dir = folders("shared", "locks");
    const locks = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(locks.exitCode).toBe(2);
    expect(locks.stderr).toContain(
      `gpuplan: error: the folder ${shared} above the GPU lock directory ${dir}`,
    );
    expect(locks.stderr).toContain("[lock-dir-untrusted]");
    expect(locks.stderr).toContain(`hint: \`chmod go-w ${shared}\``);
  });
});

describe.skipIf(!isRoot || nobody === null)(
  "folders above the lock directory owned by another user (root only)",
  () => {
    it("a parent owned by another user is refused, naming her", () => {
      const hers = folders("hers");
      chownSync(hers, nobody!, nobody!);
      const dir = join(hers, "locks");
      mkdirSync(dir, { mode: 0o700 });
      expect(() => ensureLockDir(dir)).toThrow(
        expect.objectContaining({
          ...untrusted(hers, dir),
          message: expect.stringContaining(
            `is owned by nobody (uid ${nobody}), mode 0755, not by you or root: its owner could replace the lock directory`,
          ),
        }),
      );
    });

    it("a symlink another user owns in a sticky folder is refused even where it leads to trusted folders (she may re-point it)", () => {
      const sticky = folders("sticky");
      chmodSync(sticky, 0o1777);
      const real = folders("real");
      const link = join(sticky, "link");
      symlinkSync(real, link);
      lchownSync(link, nobody!, nobody!);
      const dir = join(link, "locks");
      expect(() => ensureLockDir(dir)).toThrow(
        expect.objectContaining({
          ...untrusted(link, dir),
          message: expect.stringContaining(`the symlink ${link} above`),
        }),
      );
    });
  },
);

function request() {
  return { uuid: "GPU-1", gpu: "cuda:0", maxPipelines: 1, holder: holder(), wait: false };
}

function holder() {
  return { pid: process.pid, run: "r", pipeline: "p", step: "s", since: "" };
}

function existsDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
