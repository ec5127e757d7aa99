// DetectOptions.cudaOnlyIfNeeded (compile, a run's check): CUDA's probe (cuInit: ~200 ms on an
// H100, docs/real-gpu-check.md) runs only where NVML cannot tell all, or where CUDA_VISIBLE_DEVICES
// names a device by index in CUDA's own order. The fake libcuda logs every cuInit, so each case
// says whether CUDA was initialised at all, and compares the GPUs with a full detection's.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detect, detectInventory } from "../../src/detect/index.js";
import type { Inventory } from "../../src/inventory/types.js";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "./fake-libs.js";

/** mixed-order.scenario (PCI order 3060, 4090, A100; CUDA's order 4090, A100, 3060) plus `extra`, and its cuInit log. */
function scenario(extra = ""): { file: string; inits: () => number } {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-cuda-needed-"));
  const log = join(dir, "cuda-inits.log");
  const file = join(dir, "mixed.scenario");
  writeFileSync(
    file,
    `${readFileSync(join(SCENARIOS, "mixed-order.scenario"), "utf8")}\ncuda.init_log = ${log}\n${extra}\n`,
  );
  return {
    file,
    inits: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").length : 0),
  };
}

const env = (s: { file: string }, vars: Record<string, string> = {}, libs = { nvml: true, cuda: true }) =>
  fakeEnv(
    "mixed-order.scenario",
    {
      ...(libs.nvml && { nvml: fakeLib("nvml") }),
      ...(libs.cuda && { cuda: fakeLib("cuda") }),
    },
    { GPUPLAN_FAKE_SCENARIO: s.file, ...vars },
  );

const cudaProbe = (inv: Inventory) => inv.probes.find((p) => p.name === "cuda")!;
const names = (inv: Inventory) => inv.gpus.map((g) => g.name);

describe.skipIf(!fakeLibsBuilt)("CUDA probed only where it is needed (cudaOnlyIfNeeded)", () => {
  it("NVML lists the GPUs and nothing asks for CUDA's order: cuInit is never called, the GPUs are the same", async () => {
    const s = scenario();
    const lean = await detectInventory({ cudaOnlyIfNeeded: true, env: env(s) });
    expect(s.inits()).toBe(0);
    expect(cudaProbe(lean)).toMatchObject({
      status: "skipped",
      message: expect.stringContaining("NVML told all about every GPU"),
      library: fakeLib("cuda"),
    });
    const full = await detectInventory({ env: env(s) });
    expect(s.inits()).toBe(1);
    expect(cudaProbe(full).status).toBe("ok");
    // Everything a compile or a check reads is NVML's; only CUDA's own index is missing.
    const strip = (inv: Inventory) => inv.gpus.map(({ cudaIndex: _, sources: __, ...g }) => g);
    expect(strip(lean)).toEqual(strip(full));
    expect(lean.gpus.map((g) => [g.id, g.uuid, g.cudaIndex])).toEqual(
      full.gpus.map((g) => [g.id, g.uuid, null]),
    );
  });

  it("a CUDA_VISIBLE_DEVICES index in CUDA's order: CUDA is probed, and the same GPU is seen", async () => {
    const s = scenario();
    const lean = await detect({ cudaOnlyIfNeeded: true, env: env(s, { CUDA_VISIBLE_DEVICES: "0" }) });
    expect(s.inits()).toBe(1);
    expect(cudaProbe(lean.inventory).status).toBe("ok");
    // Index 0 is CUDA's fastest-first device, not the first on the PCI bus.
    expect(names(lean.inventory)).toEqual(["NVIDIA GeForce RTX 4090"]);
    expect(lean.visibilityNotes).toEqual(["CUDA_VISIBLE_DEVICES=0 hides 2 of the cuda devices"]);
    // "1, GPU-…": one index among UUIDs is enough.
    await detectInventory({
      cudaOnlyIfNeeded: true,
      env: env(s, { CUDA_VISIBLE_DEVICES: "GPU-ae97ba94, 1" }),
    });
    expect(s.inits()).toBe(2);
  });

  it.each([
    [
      "indices in PCI order",
      { CUDA_VISIBLE_DEVICES: "0", CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
      ["NVIDIA GeForce RTX 3060"],
    ],
    [
      "a full UUID",
      { CUDA_VISIBLE_DEVICES: "GPU-18f135d2-5f55-7203-3018-50c5a38fd547" },
      ["NVIDIA A100-SXM4-40GB"],
    ],
    ["a UUID prefix", { CUDA_VISIBLE_DEVICES: "gpu-923a7369" }, ["NVIDIA GeForce RTX 4090"]],
    ["an empty value (no GPU)", { CUDA_VISIBLE_DEVICES: "" }, []],
  ])(
    "CUDA_VISIBLE_DEVICES with %s needs no CUDA order: skipped, and the selection matches a full detection",
    async (_, vars, expected) => {
      const s = scenario();
      const lean = await detectInventory({ cudaOnlyIfNeeded: true, env: env(s, vars) });
      expect(s.inits()).toBe(0);
      expect(cudaProbe(lean).status).toBe("skipped");
      expect(names(lean)).toEqual(expected);
      expect(names(await detectInventory({ env: env(s, vars) }))).toEqual(expected);
    },
  );

  it("--all applies no visibility, so an index asks for nothing either", async () => {
    const s = scenario();
    const inv = await detectInventory({
      all: true,
      cudaOnlyIfNeeded: true,
      env: env(s, { CUDA_VISIBLE_DEVICES: "1" }),
    });
    expect(s.inits()).toBe(0);
    expect(inv.gpus).toHaveLength(3);
  });

  it.each([
    ["NVML is missing (a container with libcuda alone)", "", { nvml: false, cuda: true }],
    ["nvmlInit fails (driver/library mismatch)", "nvml.init_error = 18", { nvml: true, cuda: true }],
    ["NVML lists no GPU", "nvml.count = 0", { nvml: true, cuda: true }],
  ])("%s: CUDA lists the GPUs", async (_, extra, libs) => {
    const s = scenario(extra);
    const inv = await detectInventory({ cudaOnlyIfNeeded: true, env: env(s, {}, libs) });
    expect(s.inits()).toBe(1);
    expect(cudaProbe(inv).status).toBe("ok");
    expect(inv.gpus.map((g) => [g.id, g.cudaIndex])).toEqual([
      ["cuda:0", 2],
      ["cuda:1", 0],
      ["cuda:2", 1],
    ]);
  });

  it.each([
    [
      "an old driver without the optional calls (no memory, PCI, UUID or compute capability)",
      "",
      "nvmlMinimal",
    ],
    ["a GPU whose handle NVML cannot get", "nvml.1.handle_error = 15", "nvml"],
    [
      "a board that answers NOT_SUPPORTED for memory",
      "nvml.0.unsupported = nvmlDeviceGetMemoryInfo_v2,nvmlDeviceGetMemoryInfo",
      "nvml",
    ],
  ] as const)(
    "NVML lists GPUs but cannot tell all (%s): CUDA fills in, as a full detection does",
    async (_, extra, lib) => {
      const s = scenario(extra);
      const libs = { nvml: fakeLib(lib), cuda: fakeLib("cuda") };
      const envOf = () => fakeEnv("mixed-order.scenario", libs, { GPUPLAN_FAKE_SCENARIO: s.file });
      const lean = await detectInventory({ cudaOnlyIfNeeded: true, env: envOf() });
      expect(s.inits()).toBe(1);
      expect(cudaProbe(lean).status).toBe("ok");
      const full = await detectInventory({ env: envOf() });
      expect(lean.gpus).toEqual(full.gpus);
      // Three cards, each once: CUDA's view pairs with NVML's GPU that has no UUID or PCI bus id.
      expect(lean.gpus.map((g) => g.name).sort()).toEqual([
        "NVIDIA A100-SXM4-40GB",
        "NVIDIA GeForce RTX 3060",
        "NVIDIA GeForce RTX 4090",
      ]);
      // Every GPU has its memory, from CUDA where NVML did not tell it.
      expect(lean.gpus.find((g) => g.name === "NVIDIA GeForce RTX 3060")?.memoryBytes).toBe(12884901888);
    },
  );

  it("NVML crashes: the fresh child it is restarted in probes CUDA", async () => {
    const s = scenario("nvml.crash_on = nvmlInit_v2");
    const inv = await detectInventory({ cudaOnlyIfNeeded: true, env: env(s) });
    expect(inv.probes.find((p) => p.name === "nvml")).toMatchObject({
      status: "error",
      message: "the probe process crashed (SIGSEGV) in nvmlInit_v2",
    });
    expect(s.inits()).toBe(1);
    expect(inv.gpus).toHaveLength(3);
  });

  it("a full detection (gpuplan detect) still probes CUDA whatever NVML says", async () => {
    const s = scenario();
    const inv = await detectInventory({ env: env(s) });
    expect(s.inits()).toBe(1);
    expect(inv.gpus.map((g) => g.cudaIndex)).toEqual([2, 0, 1]);
  });
});

describe.skipIf(!fakeLibsBuilt || process.platform !== "linux")("through bin/gpuplan.js", () => {
  it("compile and run never call cuInit where NVML answers, detect does; an index in CUDA_VISIBLE_DEVICES still reaches the right GPU", () => {
    const t = tempDir();
    try {
      const s = scenario();
      const base = { ...env(s), GPUPLAN_LOCK_DIR: join(t.dir, "locks"), CI: "1" };
      // The step writes what it was given to see: the UUID of the GPU its pipeline was bound to.
      writeFileSync(
        join(t.dir, "p.yaml"),
        'version: 1\nname: p\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [sh, -c, "echo $CUDA_VISIBLE_DEVICES > seen"], memory: torch, vram: 1GiB }\n',
      );
      const ok = (args: string[], vars: Record<string, string> = {}) => {
        const r = gpuplan(args, { cwd: t.dir, env: { ...base, ...vars } });
        expect(r.exitCode, r.stderr).toBe(0);
        return r;
      };
      ok(["compile", "p.yaml", "-o", "plan.json"]);
      // The child bin/gpuplan.js pre-starts must be the one the check asks for: a preload counts
      // the probe children spawned (a pre-started child of another key would be killed unused).
      const spawns = join(t.dir, "spawns.log");
      const preload = join(t.dir, "count-spawns.cjs");
      writeFileSync(
        preload,
        `const cp = require("node:child_process"); const { appendFileSync } = require("node:fs"); const spawn = cp.spawn;
cp.spawn = function (file, args, ...rest) {
  if (Array.isArray(args) && String(args[0]).endsWith("probe-child.cjs")) appendFileSync(${JSON.stringify(spawns)}, "spawn\\n");
  return spawn.call(this, file, args, ...rest);
};\n`,
      );
      const r = gpuplan(["run", "plan.json", "--ui", "plain"], {
        cwd: t.dir,
        env: base,
        nodeArgs: ["--require", preload],
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(spawns, "utf8")).toBe("spawn\n");
      // A pipeline file is compiled in memory against the live machine, then checked.
      ok(["run", "p.yaml", "--ui", "plain"]);
      expect(s.inits()).toBe(0);
      const seen = () => readFileSync(join(t.dir, "seen"), "utf8").trim();
      expect(seen()).toMatch(/^GPU-/);

      const detected = JSON.parse(ok(["detect", "--json"]).stdout) as Inventory;
      expect(s.inits()).toBe(1);
      expect(detected.probes.find((p) => p.name === "cuda")?.status).toBe("ok");

      // CUDA's device 0 is the RTX 4090 (the second on the PCI bus): only CUDA can say so.
      ok(["run", "p.yaml", "--ui", "plain"], { CUDA_VISIBLE_DEVICES: "0" });
      expect(s.inits()).toBe(2);
      expect(seen()).toBe("GPU-923a7369-94e3-bf91-1a61-dbe22e44158b");
      ok(["run", "p.yaml", "--ui", "plain"], { CUDA_VISIBLE_DEVICES: "0", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
      expect(s.inits()).toBe(2);
      expect(seen()).toBe("GPU-ae97ba94-d0ed-a82f-8f6d-05584ef8aa38");
    } finally {
      t.cleanup();
    }
  });
});
