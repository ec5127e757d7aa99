// A process a broken or hostile vendor library starts (here: the fake NVML forks a child that
// ignores SIGTERM, SIGINT and SIGHUP and sleeps forever) must not outlive `gpuplan detect`:
// the probe child runs in a process group of its own, and the whole group ends with it.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import { gpuplan, ROOT } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const forked: number[] = [];
afterEach(() => {
  // Whatever a failing test left behind.
  for (const pid of forked.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

/** A scenario whose NVML forks a sleeper in `fn` (then does `then` there), and where its pid lands. */
function forking(fn: string, then = ""): { env: NodeJS.ProcessEnv; pidfile: string } {
  const pidfile = join(mkdtempSync(join(tmpdir(), "gpuplan-fork-")), "sleeper.pid");
  const scenario = scenarioWith(
    "h100x8-mig.scenario",
    `nvml.fork_on = ${fn}\nnvml.fork_pidfile = ${pidfile}\n${then}`,
  );
  return {
    env: fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    pidfile,
  };
}

function sleeperPid(pidfile: string): number {
  const pid = Number(readFileSync(pidfile, "utf8"));
  forked.push(pid);
  return pid;
}

/** Gone, or a zombie nobody has reaped yet (it runs nothing). */
function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function waitGone(pid: number, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (isGone(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return isGone(pid);
}

async function waitFor(file: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!existsSync(file) || readFileSync(file, "utf8") === "") {
    if (Date.now() > until) throw new Error(`${file} never appeared`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!fakeLibsBuilt)("a process a vendor library starts ends with the probe", () => {
  it("forked in nvmlInit_v2, the probe answering normally: gone when `gpuplan detect` exits", async () => {
    const { env, pidfile } = forking("nvmlInit_v2");
    const r = gpuplan(["detect", "--json"], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).gpus).toHaveLength(13);
    const pid = sleeperPid(pidfile);
    expect(await waitGone(pid)).toBe(true);
  });

  it("forked, then nvmlInit_v2 hangs: the deadline kills the whole group", async () => {
    const { env, pidfile } = forking("nvmlInit_v2", "nvml.hang_on = nvmlInit_v2");
    const r = gpuplan(["detect", "--json", "--timeout", "1s"], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).probes.find((p: { name: string }) => p.name === "nvml").status).toBe(
      "timeout",
    );
    expect(await waitGone(sleeperPid(pidfile))).toBe(true);
  });

  it("forked, then nvmlInit_v2 segfaults: the group dies with the crashed child", async () => {
    const { env, pidfile } = forking("nvmlInit_v2", "nvml.crash_on = nvmlInit_v2");
    const r = gpuplan(["detect", "--json"], { env });
    expect(r.exitCode).toBe(0);
    expect(await waitGone(sleeperPid(pidfile))).toBe(true);
  });

  it("through the API, in a process that goes on: gone once the probe child has exited", async () => {
    const { env, pidfile } = forking("nvmlDeviceGetCount_v2");
    const inv = await detectInventory({ env });
    expect(inv.gpus).toHaveLength(13);
    expect(await waitGone(sleeperPid(pidfile))).toBe(true);
  });

  it("a library whose shutdown hangs after answering: the child and its group end after a grace period", async () => {
    const { env, pidfile } = forking("nvmlShutdown", "nvml.hang_on = nvmlShutdown");
    const inv = await detectInventory({ env });
    expect(inv.probes.find((p) => p.name === "nvml")!.status).toBe("ok");
    await waitFor(pidfile);
    expect(await waitGone(sleeperPid(pidfile), 6000)).toBe(true);
  });

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`${signal} to gpuplan while NVML hangs: gpuplan dies of it, and the group with it`, async () => {
      const { env, pidfile } = forking("nvmlInit_v2", "nvml.hang_on = nvmlInit_v2");
      const cli = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "detect", "--timeout", "60s"], {
        env: env as NodeJS.ProcessEnv,
        stdio: "ignore",
      });
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
        cli.on("exit", (code, sig) => resolve(sig ?? code)),
      );
      await waitFor(pidfile);
      const pid = sleeperPid(pidfile);
      cli.kill(signal);
      expect(await exited).toBe(signal);
      expect(await waitGone(pid)).toBe(true);
    });
  }
});
