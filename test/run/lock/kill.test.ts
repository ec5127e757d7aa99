// kill -9 of gpuplan while a step runs: the step inherited the locked descriptor, so the slot
// stays held until the step exits (and is shown with the step's pid); then the kernel frees it
// and the dead holder's record is stale.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSlotLock, GpuBusyError } from "../../../src/run/lock/index.js";
import { built, exited, startFixture } from "./processes.js";

const UUID = "GPU-99999999-8888-7777-6666-555555555555";
let dir: string;
const cleanups: (() => void)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-lock-kill-"));
});
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  rmSync(dir, { recursive: true, force: true });
});

const request = {
  uuid: UUID,
  gpu: "cuda:0",
  maxPipelines: 1,
  holder: { pid: process.pid, run: "r", pipeline: "next", step: null, since: "" },
  wait: false,
};

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!built)("kill -9 of the holder", () => {
  it("the step keeps the slot until it exits, then it is free and the stale info is ignored", async () => {
    const { child: holder, line } = await startFixture("holder.mjs", [dir, UUID]);
    const { childPid } = JSON.parse(line) as { childPid: number };
    cleanups.push(() => {
      holder.kill("SIGKILL");
      try {
        process.kill(childPid, "SIGKILL");
      } catch {
        // Already gone.
      }
    });
    const lock = createSlotLock({ dir });
    holder.kill("SIGKILL");
    await exited(holder);

    // The holder is dead; its step still holds the slot through the inherited descriptor, and
    // is named with its own pid (the kernel's answer), with the gpuplan that started it.
    const [state] = await lock.inspect();
    expect(state).toMatchObject({
      held: true,
      holder: { pid: childPid, startedBy: holder.pid, verified: true, pipeline: "victim", step: "long-step" },
    });
    const busy = await lock.acquire(request).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(GpuBusyError);
    expect((busy as GpuBusyError).holders[0]?.pid).toBe(childPid);

    process.kill(childPid, "SIGKILL");
    await until(async () => (await lock.inspect()).length === 0);
    const lease = await lock.acquire(request);
    expect(lease.slots).toEqual([0]);
    lease.release();
  });
});
