// `gpuplan detect` end to end: the built CLI (node bin/gpuplan.js) against the fake libraries.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import validate from "../../src/generated/inventory-validator.js";
import { gpuplan, loadedModules } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, ROOT, SCENARIOS } from "./fake-libs.js";

describe("gpuplan detect flags", () => {
  it("--timeout banana is a usage error (exit 2) with a hint, before any probing", () => {
    const r = gpuplan(["detect", "--timeout", "banana"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "option '--timeout <duration>' argument 'banana' is invalid. It is not a duration.",
    );
    expect(r.stderr).toContain("[invalid-duration]");
    expect(r.stderr).toContain("hint:");
  });

  it("an unwritable --save target is a usage error", () => {
    // A missing folder is made (output-paths.test.ts); a file where a folder is needed cannot be.
    const r = gpuplan(["detect", "--save", "/dev/null/inv.json"], {
      env: fakeEnv("h100x8-mig.scenario", {}),
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "cannot write inventory /dev/null/inv.json: a file stands where a folder is needed  [unwritable-file]",
    );
    expect(r.stderr).toContain("hint: check the path");
  });

  it("zero GPUs is still success: exit 0, the CPU and one line per probe on stdout", () => {
    const r = gpuplan(["detect"], { env: fakeEnv("h100x8-mig.scenario", {}) });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^No GPU found\.\n\nCPU {2}/);
    for (const name of ["cpu", "nvml", "cuda", "rocm-smi", "amd-smi", "hip", "sysfs"]) {
      expect(r.stdout).toMatch(new RegExp(`^  ${name} +(ok|not-found|no-devices) `, "m"));
    }
    expect(r.stderr).toBe("");
  });

  it("a library variable naming a FIFO, a folder or a device is not loaded: no wait for --timeout, no wedged GPU blamed", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-detect-fifo-"));
    const fifo = join(dir, "libnvidia-ml.so.1");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const r = gpuplan(["detect", "--json", "--timeout", "5s"], {
      env: fakeEnv("h100x8-mig.scenario", { nvml: fifo, cuda: dir, hip: "/dev/null" }),
    });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const probe = (name: string) =>
      JSON.parse(r.stdout).probes.find((p: { name: string }) => p.name === name);
    expect(probe("nvml")).toMatchObject({
      status: "not-found",
      message: `GPUPLAN_NVML_LIBRARY=${fifo}: a FIFO, not a library file`,
    });
    expect(probe("cuda")).toMatchObject({
      status: "not-found",
      message: `GPUPLAN_CUDA_LIBRARY=${dir}: a directory, not a library file`,
    });
    expect(probe("hip")).toMatchObject({
      status: "not-found",
      message: "GPUPLAN_HIP_LIBRARY=/dev/null: a device, not a library file",
    });
  });
});

describe.skipIf(!fakeLibsBuilt)("gpuplan detect with the 8-GPU fake NVML", () => {
  const env = () => fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") });

  it("--json prints the inventory, valid against schemas/inventory.schema.json", () => {
    const r = gpuplan(["detect", "--json"], { env: env() });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const inv = JSON.parse(r.stdout);
    expect(validate(inv)).toBe(true);
    expect(inv.schema).toBe("gpuplan/inventory@1");
    expect(inv.gpus).toHaveLength(13);
    expect(inv.cpu.usableCores).toBeGreaterThanOrEqual(1);
  });

  it("--save writes the same JSON atomically (no temporary file left) and the table still prints", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-detect-"));
    const file = join(dir, "inv.json");
    const saved = gpuplan(["detect", "--save", file], { env: env() });
    expect(saved.exitCode).toBe(0);
    expect(saved.stdout).toContain("8 GPUs and 5 MIG instances");
    expect(readdirSync(dir)).toEqual(["inv.json"]);
    const inv = JSON.parse(readFileSync(file, "utf8"));
    expect(validate(inv)).toBe(true);
    const json = JSON.parse(gpuplan(["detect", "--json"], { env: env() }).stdout);
    expect(inv.gpus).toEqual(json.gpus);
  });

  it("the human table: driver and CUDA first, then id, name, memory used and total, utilisation, temperature, power, CC, short UUID, PCI bus id, NUMA; no colour off a TTY", () => {
    const r = gpuplan(["detect"], { env: env() });
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("NVIDIA  driver 550.54.15  CUDA 12.4");
    expect(lines[3]).toMatch(/^ID +NAME +MEMORY USED +TOTAL +UTIL +TEMP +POWER +CC +UUID +PCI +NUMA$/);
    expect(lines[4]).toMatch(
      /^cuda:0 +NVIDIA H100 80GB HBM3 +505 MiB +79\.6 GiB +0% +30C +69W +9\.0 +GPU-6513270e +0000:18:00\.0 +-$/,
    );
    expect(r.stdout).toMatch(/^cuda:2 .* MIG on$/m);
    expect(r.stdout).toMatch(
      /^cuda:2\/mig0 +NVIDIA H100 80GB HBM3 MIG 2g\.20gb +13 MiB +19\.7 GiB +- +- +-/m,
    );
    // No scenario process: the GPUs' lists are empty, which is not the same as unknown.
    expect(r.stdout).toMatch(/^Processes\n {2}none$/m);
    expect(r.stdout).toMatch(
      /^ {2}nvml +ok +8 GPUs, driver 550\.54\.15 \[NVML 12\.550\.54\.15, CUDA 12\.4\]/m,
    );
    expect(r.stdout).not.toContain("\x1b[");
  });

  it("says which variable narrowed the view; --all ignores it", () => {
    const narrowed = gpuplan(["detect"], { env: { ...env(), CUDA_VISIBLE_DEVICES: "1,GPU-92276658" } });
    expect(narrowed.stdout).toContain("2 GPUs visible (11 hidden; narrowed by CUDA_VISIBLE_DEVICES)");
    expect(narrowed.stdout).toContain(
      "visibility: CUDA_VISIBLE_DEVICES=1,GPU-92276658 hides 11 of the cuda devices",
    );
    expect(narrowed.stdout).toMatch(/^cuda:7 /m);
    const all = gpuplan(["detect", "--all"], { env: { ...env(), CUDA_VISIBLE_DEVICES: "1" } });
    expect(all.stdout).toContain("8 GPUs and 5 MIG instances");
    expect(all.stdout).toContain("visibility: --all ignores the visibility variables");
  });
});

describe.skipIf(!fakeLibsBuilt)("strings from a hostile vendor library", () => {
  // Anything a terminal acts on or that turns the line round: C0 and C1 controls, DEL, bidi
  // controls, zero-width characters (escapeText's set); tab and newline are JSON's own layout.
  const RAW =
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;
  const NAME = "Evil\u001b]0;pwned\u0007 \u202eGPU\u200b\u009b31m";

  it("reach no terminal raw: not in the table, --json or the --save file, and the JSON keeps the value", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-detect-"));
    const scenario = join(dir, "hostile.scenario");
    // The scenario file is bytes: an invalid UTF-8 sequence (0xC3 0x28) too.
    writeFileSync(
      scenario,
      Buffer.concat([
        readFileSync(join(SCENARIOS, "busy.scenario")),
        Buffer.from(`\nnvml.0.name = ${NAME}\nnvml.driver = 535\u001b[2J\u202e.1\nnvml.0.serial = S`),
        Buffer.from([0xc3, 0x28, 0x0a]),
      ]),
    );
    const env = fakeEnv("busy.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
    const file = join(dir, "inv.json");
    const table = gpuplan(["detect", "--save", file], { env });
    const json = gpuplan(["detect", "--json"], { env });
    expect([table.exitCode, json.exitCode]).toEqual([0, 0]);
    expect(table.stdout).toContain("Evil\\x1b]0;pwned\\x07 \\u202eGPU\\u200b\\x9b31m");
    for (const text of [table.stdout, json.stdout, readFileSync(file, "utf8")]) expect(text).not.toMatch(RAW);
    const inv = JSON.parse(json.stdout);
    expect(inv.gpus[0].name).toBe(NAME);
    expect(inv.gpus[0].serial).toBe("S\\xc3(");
    expect(JSON.parse(readFileSync(file, "utf8")).gpus).toEqual(inv.gpus);
  });
});

describe.skipIf(!fakeLibsBuilt)("vendor noise and failures stay out of gpuplan's output", () => {
  it("a library that prints to stdout and stderr and then fails: clean output, exit 0", () => {
    const r = gpuplan(["detect"], { env: fakeEnv("version-mismatch.scenario", { nvml: fakeLib("nvml") }) });
    expect(r.exitCode).toBe(0);
    expect(r.stdout + r.stderr).not.toContain("NVRM: API mismatch");
    expect(r.stdout).toMatch(/^ {2}nvml +error +nvmlInit_v2: Driver\/library version mismatch \(18\)/m);
    expect(r.stdout).toMatch(/^ +hint: the NVIDIA kernel module and libnvidia-ml differ in version/m);
  });

  it("a segfaulting library: exit 0, the crash reported (a warning on stderr with --json), nothing printed by the library", () => {
    const r = gpuplan(["detect", "--json"], {
      env: fakeEnv("crash.scenario", { nvml: fakeLib("nvml"), cuda: fakeLib("cuda") }),
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe(
      "gpuplan: warning: nvml error: the probe process crashed (SIGSEGV) in nvmlInit_v2  [probe-error]\n" +
        "  hint: libnvidia-ml crashed: check the driver installation with `nvidia-smi`, or point GPUPLAN_NVML_LIBRARY at a working library\n",
    );
    expect(r.stdout + r.stderr).not.toContain("about to crash");
    const inv = JSON.parse(r.stdout);
    expect(inv.probes.find((p: { name: string }) => p.name === "nvml").message).toContain("SIGSEGV");
    expect(inv.gpus.map((g: { name: string }) => g.name)).toEqual(["NVIDIA L4"]);
  });

  it("a hang in nvmlShutdown, after the answers: the GPUs are reported, nothing waits, no child is left", async () => {
    const scenario = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), "shutdown-hang.scenario");
    writeFileSync(
      scenario,
      `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.hang_on = nvmlShutdown\n`,
    );
    const started = Date.now();
    const r = gpuplan(["detect", "--json", "--timeout", "20s"], {
      env: fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.exitCode).toBe(0);
    const inv = JSON.parse(r.stdout);
    expect(inv.gpus).toHaveLength(13);
    expect(inv.probes.find((p: { name: string }) => p.name === "nvml").status).toBe("ok");
    // The child hung in nvmlShutdown died with gpuplan (PR_SET_PDEATHSIG).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const left = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, "utf8").includes(scenario);
        } catch {
          return false;
        }
      });
    expect(left).toEqual([]);
  });

  it("a hang: --timeout bounds the whole command", () => {
    const started = Date.now();
    const r = gpuplan(["detect", "--json", "--timeout", "800ms"], {
      env: fakeEnv("hang.scenario", { nvml: fakeLib("nvml") }),
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.exitCode).toBe(0);
    const nvml = JSON.parse(r.stdout).probes.find((p: { name: string }) => p.name === "nvml");
    expect(nvml).toMatchObject({
      status: "timeout",
      message: "nvmlInit_v2 did not return within 0.8 s; the probe process was killed",
    });
  });
});

describe.skipIf(!fakeLibsBuilt || process.platform !== "linux")(
  "the probe child never outlives gpuplan",
  () => {
    it("killing gpuplan with SIGKILL while NVML hangs takes the probe child with it", async () => {
      const { spawn } = await import("node:child_process");
      const parent = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "detect", "--timeout", "60s"], {
        env: { ...process.env, ...fakeEnv("hang.scenario", { nvml: fakeLib("nvml") }) },
        stdio: "ignore",
      });
      const childOf = (ppid: number): number | null => {
        for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
            const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
            if (
              Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === ppid &&
              cmd.includes("probe-child.cjs")
            ) {
              return Number(pid);
            }
          } catch {}
        }
        return null;
      };
      let child: number | null = null;
      for (let i = 0; i < 100 && child === null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        child = childOf(parent.pid!);
      }
      expect(child).not.toBeNull();
      // Let the child reach nvmlInit_v2 (and its prctl) before the parent dies.
      await new Promise((r) => setTimeout(r, 500));
      parent.kill("SIGKILL");
      let alive = true;
      for (let i = 0; i < 40 && alive; i++) {
        await new Promise((r) => setTimeout(r, 50));
        alive = existsSync(`/proc/${child}`) && !readFileSync(`/proc/${child}/stat`, "utf8").includes(") Z ");
      }
      expect(alive).toBe(false);
    });
  },
);

describe.skipIf(!fakeLibsBuilt)("gpuplan's own process stays light", () => {
  it("detect loads koffi only in the probe child, never in gpuplan itself", () => {
    const saved = { ...process.env };
    Object.assign(process.env, fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }));
    try {
      const { result, modules } = loadedModules(["detect", "--json"], "koffi|ink|react");
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout).gpus).toHaveLength(13);
      expect(modules).toEqual([]);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
