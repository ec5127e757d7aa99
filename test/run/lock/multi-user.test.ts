// A second local user against the lock (issue #12 item 1): she cannot make two steps share a
// GPU by owning the lock directory first, planting lock files, deleting a held lock file, or
// pointing a symlink at a directory of her choice; and in the shared directory `locks init`
// makes, she shares the GPUs with root safely. Needs root (useradd, runuser); skipped elsewhere,
// saying so. CI runs as root.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSlotLock } from "../../../src/run/lock/index.js";
import { gpuplan } from "../../helpers/cli.js";
import { built, FIXTURES } from "./processes.js";

const USER = "gpuplan-test2";
const isRoot = process.getuid?.() === 0;

/** The second user, made once (useradd) where this runs as root and she can read the checkout. */
function ensureUser(): boolean {
  if (!isRoot) return false;
  if (spawnSync("id", ["-u", USER]).status !== 0)
    spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER]);
  return (
    spawnSync("runuser", ["-u", USER, "--", "test", "-r", join(FIXTURES, "acquire-once.mjs")]).status === 0
  );
}
const canSwitchUser = ensureUser();
if (!canSwitchUser)
  console.warn(
    "multi-user lock tests skipped: they need root (useradd, runuser) and a checkout a second user can read",
  );

/** Run a command as the second user. */
const asUser = (argv: string[]) => spawnSync("runuser", ["-u", USER, "--", ...argv], { encoding: "utf8" });

// Not under mkdtemp's 0700 directory: the other user must reach it, as she would /tmp.
const base = `/tmp/gpuplan-lock-users-${randomBytes(4).toString("hex")}`;
beforeAll(() => {
  if (canSwitchUser) {
    mkdirSync(base, { mode: 0o1777 });
    chmodSync(base, 0o1777);
  }
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});
afterEach(() => {
  for (const name of ["shared", "hers", "sticky", "link", "target"])
    rmSync(join(base, name), { recursive: true, force: true });
});

const request = (pipeline: string, maxPipelines = 1) => ({
  uuid: "GPU-users",
  gpu: "cuda:0",
  maxPipelines,
  holder: { pid: process.pid, run: "r", pipeline, step: null, since: "" },
  wait: false,
});

describe.skipIf(!built || !canSwitchUser)("the lock against a second local user", () => {
  it("in the shared directory `locks init` made, she takes the next slot and sees root's holder; she cannot delete a held lock file", async () => {
    const dir = join(base, "shared");
    const init = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-users"]);
    expect(init.stderr).toBe("");
    expect(init.exitCode).toBe(0);
    expect(statSync(dir).mode & 0o7777).toBe(0o755);
    const lease = await createSlotLock({ dir }).acquire(request("root-pipeline", 2));
    const r = asUser([process.execPath, join(FIXTURES, "acquire-once.mjs"), dir, "GPU-users", "2", "other"]);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({
      slots: [1],
      seen: [
        { slot: 0, held: true, pipeline: "root-pipeline" },
        { slot: 1, held: true, pipeline: "other" },
      ],
    });
    // Deleting (or replacing) the lock file while root holds it: refused by the directory.
    const file = join(dir, "GPU-users.gpu.lock");
    const ino = lstatSync(file).ino;
    expect(asUser(["rm", "-f", file]).status).not.toBe(0);
    expect(asUser(["mv", "-f", file, `${file}.x`]).status).not.toBe(0);
    expect(lstatSync(file).ino).toBe(ino);
    expect(gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } }).stdout).toContain(
      '"mode": "shared"',
    );
    lease.release();
  });

  it("a directory she created first (the default-path attack) is refused, naming her, the mode and the fix", async () => {
    const dir = join(base, "hers");
    expect(asUser(["mkdir", "-m", "1777", dir]).status).toBe(0);
    const r = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`owned by ${USER} (uid`);
    expect(r.stderr).toContain("mode 1777");
    expect(r.stderr).toMatch(/gpuplan locks init|GPUPLAN_LOCK_DIR/);
    await expect(createSlotLock({ dir }).acquire(request("p"))).rejects.toMatchObject({
      code: "lock-dir-untrusted",
    });
  });

  it("a lock file she planted in a sticky shared directory is never used, nor a symlink in its place", async () => {
    const dir = join(base, "sticky");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    const file = join(dir, "GPU-users.gpu.lock");
    expect(asUser(["touch", file]).status).toBe(0);
    await expect(createSlotLock({ dir }).acquire(request("p"))).rejects.toMatchObject({
      code: "lock-file-untrusted",
    });
    rmSync(file);
    expect(asUser(["ln", "-s", "/etc/passwd", file]).status).toBe(0);
    await expect(createSlotLock({ dir }).acquire(request("p"))).rejects.toMatchObject({ code: "lock-file" });
    expect(statSync("/etc/passwd").size).toBeGreaterThan(0);
  });

  it("a symlinked lock directory is refused (it could point anywhere)", async () => {
    mkdirSync(join(base, "target"), { mode: 0o700 });
    expect(asUser(["ln", "-s", join(base, "target"), join(base, "link")]).status).toBe(0);
    const r = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: join(base, "link") } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is a symlink");
    await expect(createSlotLock({ dir: join(base, "link") }).acquire(request("p"))).rejects.toMatchObject({
      code: "lock-dir-untrusted",
    });
  });
});
