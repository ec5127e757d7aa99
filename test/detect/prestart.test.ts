// The probe child bin/gpuplan.js starts before the CLI loads (src/detect/prestart.ts): only for a
// detect command line that certainly probes, claimed by detect() for the same request only, and
// never left behind when nobody claims it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import { parseDetectArgs, prestartProbes } from "../../src/detect/prestart.js";
import { claimPlan, claimPrestarted } from "../../src/detect/prestarted.js";
import type { StartedChild } from "../../src/detect/spawn-child.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, ROOT } from "./fake-libs.js";

const SLOT = Symbol.for("gpuplan.detect.prestartedChildren");
const waiting = (): StartedChild[] => [
  ...((globalThis as { [SLOT]?: Map<string, StartedChild> })[SLOT]?.values() ?? []),
];

const isAlive = (pid: number): boolean =>
  existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");

describe("which command lines pre-start the probe child", () => {
  it("detect with its own flags, well-formed", () => {
    for (const args of [
      ["detect"],
      ["detect", "--json"],
      ["detect", "--all", "--json", "--timeout", "30s"],
      ["detect", "--timeout=250ms", "--save", "inv.json"],
      ["detect", "--lock-dir", "/var/lib/gpuplan-locks"],
      ["detect", "--save=inv.json"],
      ["detect", "--lock-dir", "/var/lib/gpuplan-locks"],
    ])
      expect(parseDetectArgs(args), args.join(" ")).not.toBeNull();
  });

  it("parsed as commander hands them to the command (defaults, last value wins)", () => {
    expect(parseDetectArgs(["detect"])).toEqual({ timeout: 10_000 });
    expect(
      parseDetectArgs(["detect", "--json", "--all", "--timeout=2s", "--save", "a", "--save", "b"]),
    ).toEqual({
      json: true,
      all: true,
      timeout: 2000,
      save: "b",
    });
  });

  it("not for another command, help, unknown flags or a bad --timeout (a usage error must not probe)", () => {
    for (const args of [
      [],
      ["compile", "p.yaml"],
      ["detect", "--help"],
      ["detect", "-h"],
      ["detect", "--jsn"],
      ["detect", "extra"],
      ["detect", "--json=yes"],
      ["detect", "--timeout", "banana"],
      ["detect", "--timeout", "0"],
      ["detect", "--timeout", "25d"],
      ["detect", "--timeout"],
      ["detect", "--save"],
      ["detect", "--save", "--json"],
      ["detect", "--save="],
      ["detect", "--", "--json"],
    ])
      expect(parseDetectArgs(args), args.join(" ")).toBeNull();
  });
});

describe("the library search the pre-start made", () => {
  it("is reused by detect() for the very same environment object, once", () => {
    const env = fakeEnv("h100x8-mig.scenario", {});
    expect(prestartProbes(["detect"], env)).toEqual({ timeout: 10_000 });
    expect(claimPlan({ ...env }, false)).toBeNull();
    prestartProbes(["detect"], env);
    const plan = claimPlan(env, false);
    expect(plan?.libraries.nvml).toEqual({ found: false, reason: expect.stringContaining("no such file") });
    expect(claimPlan(env, false)).toBeNull();
  });

  it("is not reused by a detection that decides CUDA otherwise", () => {
    const env = fakeEnv("h100x8-mig.scenario", {});
    prestartProbes(["detect"], env);
    expect(claimPlan(env, true)).toBeNull();
  });
});

describe.skipIf(!fakeLibsBuilt || process.platform !== "linux")("a pre-started probe child", () => {
  afterEach(() => {
    for (const child of claimPrestarted().values()) child.kill();
  });

  it("is the one detect() uses for the same request", async () => {
    const env = fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") });
    prestartProbes(["detect", "--json"], env);
    const [child] = waiting();
    expect(child).toBeDefined();
    const inv = await detectInventory({ env });
    expect(inv.gpus).toHaveLength(13);
    expect(waiting()).toEqual([]);
    // Its answer is the inventory's (the duration is the child's own measurement), not that of
    // a second child.
    const run = await child!.run;
    expect(run.end).toEqual({ kind: "done" });
    expect(run.results.map((r) => r.status)).toEqual(["ok"]);
    expect(inv.probes.find((p) => p.name === "nvml")!.durationMs).toBe(run.results[0]!.durationMs);
  });

  it("is killed, and a fresh child used, when detect() asks for something else", async () => {
    prestartProbes(["detect"], fakeEnv("hang.scenario", { nvml: fakeLib("nvml") }));
    const [child] = waiting();
    const inv = await detectInventory({ env: fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }) });
    expect(inv.gpus).toHaveLength(13);
    expect((await child!.run).end).toEqual({ kind: "crash", detail: "SIGKILL" });
  });

  it("that nobody claims dies with gpuplan, even one hung in a vendor call", async () => {
    const env = fakeEnv("hang.scenario", { nvml: fakeLib("nvml") });
    // A process that pre-starts the child and exits without running detect (as after a failure).
    const script = `
      const { prestartProbes } = (await import("node:module")).createRequire(import.meta.url)(${JSON.stringify(join(ROOT, "dist/detect/prestart.cjs"))});
      prestartProbes(["detect"]);
      const [child] = globalThis[Symbol.for("gpuplan.detect.prestartedChildren")].values();
      console.log(child.pid);
      await new Promise((r) => setTimeout(r, 500));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env, encoding: "utf8" });
    expect(r.status).toBe(0);
    const pid = Number(r.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    let alive = true;
    for (let i = 0; i < 40 && alive; i++) {
      await new Promise((res) => setTimeout(res, 50));
      alive = isAlive(pid);
    }
    expect(alive).toBe(false);
  });
});
