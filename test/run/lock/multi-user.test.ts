// Two users share the default-style lock directory: the first creates it sticky and
// world-writable, the second opens (never O_CREATs) the first one's files and rewrites the
// info file in place. Needs root (runuser to `nobody`); skipped elsewhere.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSlotLock } from "../../../src/run/lock/index.js";
import { built, FIXTURES } from "./processes.js";

// `nobody` must also be able to read the checkout (fixture, dist, node_modules): a clone under
// mkdtemp's 0700 directory (as CI may make) is out of its reach, and the test is skipped there.
const canSwitchUser =
  process.getuid?.() === 0 &&
  spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(FIXTURES, "acquire-once.mjs")]).status === 0;
// Not under mkdtemp's 0700 directory: the other user must reach it, as it would /tmp/gpuplan-locks.
const dir = `/tmp/gpuplan-lock-users-${randomBytes(4).toString("hex")}`;
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!built || !canSwitchUser)("the lock directory across users", () => {
  it("a second user takes the next slot, sees the first user's holder, and labels its own", async () => {
    const old = process.umask(0o077);
    const lease = await createSlotLock({ dir })
      .acquire({
        uuid: "GPU-users",
        gpu: "cuda:0",
        maxPipelines: 2,
        holder: { pid: process.pid, run: "r", pipeline: "root-pipeline", step: null, since: "" },
        wait: false,
      })
      .finally(() => process.umask(old));
    // Make slot 1's files too (an exclusive moment), as root under umask 077: nobody must then
    // open root's files rather than create its own.
    const old2 = process.umask(0o077);
    await lease.upgrade({ wait: false }).finally(() => process.umask(old2));
    lease.downgrade();
    const r = spawnSync(
      "runuser",
      [
        "-u",
        "nobody",
        "--",
        process.execPath,
        join(FIXTURES, "acquire-once.mjs"),
        dir,
        "GPU-users",
        "2",
        "other",
      ],
      { encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({
      uid: 65534,
      slots: [1],
      seen: [
        { slot: 0, held: true, pipeline: "root-pipeline" },
        { slot: 1, held: true, pipeline: "other" },
      ],
    });
    lease.release();
  });
});
