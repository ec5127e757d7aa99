// A second local user against the lock (issue #12 item 1): she cannot make two steps share a
// GPU by owning the lock directory first, planting lock files, deleting a held lock file, or
// pointing a symlink at a directory of her choice; and in the shared directory `locks init`
// makes, she shares the GPUs with root safely. Needs root (useradd, runuser), as CI runs; skipped
// elsewhere, saying so. What she runs (the built lock, koffi, the fixture, node if need be) is
// copied to a world-readable folder under /tmp first: CI checks out under `mktemp -d`, a 0700
// folder she cannot enter, and the tests must run there too.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSlotLock } from "../../../src/run/lock/index.js";
import { gpuplan, ROOT } from "../../helpers/cli.js";
import { built, FIXTURES } from "./processes.js";

const USER = "gpuplan-test2";
const isRoot = process.getuid?.() === 0;
if (!isRoot)
  console.warn("multi-user lock tests skipped: they need root (useradd, runuser), as CI runs them");

/** Run a command as the second user. */
const asUser = (argv: string[]) => spawnSync("runuser", ["-u", USER, "--", ...argv], { encoding: "utf8" });

// Not under mkdtemp's 0700 directory: the other user must reach it, as she would /tmp.
const base = `/tmp/gpuplan-lock-users-${randomBytes(4).toString("hex")}`;
/** What she runs: node, and the fixture (beside the built lock and koffi), in reach of her. */
let node = process.execPath;
let acquireOnce = join(FIXTURES, "acquire-once.mjs");

/** The second user (useradd, once) and her copy of what she runs; throws, saying what failed. */
function setUpSecondUser(): void {
  if (spawnSync("id", ["-u", USER]).status !== 0) {
    const r = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`useradd ${USER} failed: ${r.error?.message ?? r.stderr}`);
  }
  const app = join(base, "app");
  // koffi finds its native module in its platform package (@koromix/koffi-<platform>).
  const koffi = readdirSync(join(ROOT, "node_modules/@koromix"))
    .filter((name) => name.startsWith("koffi-"))
    .map((name) => `node_modules/@koromix/${name}`);
  for (const part of ["dist", "node_modules/koffi", ...koffi, "package.json"])
    cpSync(join(ROOT, part), join(app, part), { recursive: true, dereference: true });
  acquireOnce = join(app, "fixtures/run/lock/acquire-once.mjs");
  mkdirSync(dirname(acquireOnce), { recursive: true });
  copyFileSync(join(FIXTURES, "acquire-once.mjs"), acquireOnce);
  // A node she cannot run (a version manager's, under a 0700 home) is copied too.
  if (asUser(["test", "-x", node]).status !== 0) {
    copyFileSync(process.execPath, join(app, "node"));
    node = join(app, "node");
  }
  spawnSync("chmod", ["-R", "a+rX", app]);
  const probe = asUser([node, "-e", "process.exit(0)"]);
  if (probe.status !== 0)
    throw new Error(`runuser -u ${USER} node failed: ${probe.error?.message ?? probe.stderr}`);
}

beforeAll(() => {
  if (!isRoot || !built) return;
  mkdirSync(base, { mode: 0o1777 });
  chmodSync(base, 0o1777);
  setUpSecondUser();
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});
afterEach(() => {
  for (const name of ["shared", "hers", "sticky", "link", "target", "closed"])
    rmSync(join(base, name), { recursive: true, force: true });
});

const request = (pipeline: string, maxPipelines = 1) => ({
  uuid: "GPU-users",
  gpu: "cuda:0",
  maxPipelines,
  holder: { pid: process.pid, run: "r", pipeline, step: null, since: "" },
  wait: false,
});

describe.skipIf(!built || !isRoot)("the lock against a second local user", () => {
  it("in the shared directory `locks init` made, she takes the next slot and sees root's holder; she cannot delete a held lock file", async () => {
    const dir = join(base, "shared");
    const init = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-users"]);
    expect(init.stderr).toBe("");
    expect(init.exitCode).toBe(0);
    expect(statSync(dir).mode & 0o7777).toBe(0o755);
    const lease = await createSlotLock({ dir }).acquire(request("root-pipeline", 2));
    const r = asUser([node, acquireOnce, dir, "GPU-users", "2", "other"]);
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

  it("a shared directory she cannot reach (a 0700 folder above it) is not swapped for a private one: her runs would not see root's slots", () => {
    const closed = join(base, "closed");
    const dir = join(closed, "locks");
    // locks init refuses to make it there, saying who cannot pass, and makes nothing.
    mkdirSync(closed, { mode: 0o700 });
    chmodSync(closed, 0o700);
    const init = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-users"]);
    expect(init.exitCode).toBe(2);
    expect(init.stderr).toContain(
      `the folder ${closed} above ${dir} (mode 0700) lets none of other users through`,
    );
    expect(init.stderr).toContain(`chmod o+x ${closed}`);
    expect(readdirSync(closed)).toEqual([]);
    // Made by hand all the same: her gpuplan takes it for the shared directory, and fails there.
    mkdirSync(dir, { mode: 0o755 });
    const module = join(base, "app/dist/run/lock/default-lock-dir.js");
    const r = asUser([
      node,
      "-e",
      `import(${JSON.stringify(module)}).then((m) => console.log(m.defaultLockDir(${JSON.stringify(dir)})))`,
    ]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe(dir);
  });

  it("locks init --group under a folder only the group may pass: set up", () => {
    const closed = join(base, "closed");
    const dir = join(closed, "locks");
    mkdirSync(closed, { mode: 0o750 });
    chmodSync(closed, 0o750);
    const gid = Number(spawnSync("id", ["-g", USER], { encoding: "utf8" }).stdout.trim());
    chownSync(closed, 0, gid);
    const init = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-users", "--group", String(gid)]);
    expect(init.stderr).toBe("");
    expect(init.exitCode).toBe(0);
    expect(asUser(["test", "-r", join(dir, "GPU-users.gpu.lock")]).status).toBe(0);
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
