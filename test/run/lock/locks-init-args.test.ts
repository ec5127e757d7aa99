// `locks init --gpu X` names a file in a root-owned directory: an attack made it create
// `.gpu.lock`, `%2e.gpu.lock` and `%2e%2e%2f…` from '', '.' and '../../etc/passwd'.
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

describe("locks init --gpu", () => {
  it.each(["", ".", "../../etc/passwd", "GPU-\u001b[2J"])(
    "refuses %j: not a GPU UUID (exit 2), nothing made",
    (uuid) => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const dir = join(t.dir, "locks");
      const r = gpuplan(["locks", "init", "--dir", dir, "--gpu", uuid]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("is not a GPU UUID  [invalid-option-value]");
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    },
  );
});

describe("locks init --group and --dir, refused before anything is made", () => {
  // 4294967295 is (gid_t)-1, chown's "leave the group": the files stayed root's alone while the
  // message said the group could use them; a larger number was an internal error after mkdir.
  it.each(["4294967295", "99999999999999999999"])("--group %s is not a group id", (group) => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const dir = join(t.dir, "locks");
    const r = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-abcd", "--group", group]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is not a group id (at most 4294967294)  [invalid-option-value]");
    expect(existsSync(dir)).toBe(false);
  });

  it("--dir '' is a usage error, not a stack", () => {
    const r = gpuplan(["locks", "init", "--dir", "", "--gpu", "GPU-abcd"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--dir is empty  [invalid-option-value]");
  });
});

const isRoot = process.geteuid?.() === 0;
if (!isRoot) console.warn("locks init --dir tests skipped: locks init runs as root only, as CI runs them");

describe.skipIf(!isRoot)("locks init --dir, as root", () => {
  const made = () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    // mkdtemp's 0700 would leave other users no way to the lock files: init refuses that.
    chmodSync(t.dir, 0o755);
    return t.dir;
  };

  it("refuses a regular file without changing its owner or mode", () => {
    const file = join(made(), "shadow");
    writeFileSync(file, "secret\n", { mode: 0o600 });
    chownSync(file, 65534, 65534);
    const r = gpuplan(["locks", "init", "--dir", file, "--gpu", "GPU-abcd"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is not a directory; nothing was changed  [lock-dir]");
    const st = statSync(file);
    expect([st.mode & 0o7777, st.uid, st.gid]).toEqual([0o600, 65534, 65534]);
  });

  it("refuses a symlink named with a trailing slash, leaving its target alone", () => {
    const base = made();
    const target = join(base, "alice");
    mkdirSync(target, { mode: 0o700 });
    chownSync(target, 65534, 65534);
    symlinkSync(target, join(base, "link"));
    const r = gpuplan(["locks", "init", "--dir", `${join(base, "link")}/`, "--gpu", "GPU-abcd"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is a symlink; the shared lock directory must be a real directory");
    const st = statSync(target);
    expect([st.mode & 0o7777, st.uid, readdirSync(target)]).toEqual([0o700, 65534, []]);
  });

  it("refuses a --dir under a folder other users may write, making nothing", () => {
    // Every user's gpuplan refuses such a lock directory (an ancestor's writer could swap it):
    // init set it up all the same, and said all was well.
    const open = join(made(), "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const r = gpuplan(["locks", "init", "--dir", join(open, "a/locks"), "--gpu", "GPU-abcd"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`the folder ${open} above the GPU lock directory ${join(open, "a/locks")}`);
    expect(r.stderr).toContain("[lock-dir-untrusted]");
    expect(readdirSync(open)).toEqual([]);
  });

  it("prints a relative --dir as the absolute GPUPLAN_LOCK_DIR users need", () => {
    const base = made();
    const r = gpuplan(["locks", "init", "--dir", "shared", "--gpu", "GPU-abcd"], { cwd: base });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`GPUPLAN_LOCK_DIR=${join(base, "shared")}.`);
  });

  it("says at once that a directory cannot be made under /proc (Node's recursive mkdir spun forever)", () => {
    const r = gpuplan(["locks", "init", "--dir", "/proc/self/gpuplan-locks", "--gpu", "GPU-abcd"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "cannot create the shared lock directory /proc/self/gpuplan-locks: ENOENT  [lock-dir]",
    );
  });
});
