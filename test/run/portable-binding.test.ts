/**
 * Issue #13 item 1 end to end through the built CLI and the real FFI path (fake NVML): a plan
 * compiled against `--target dgx-h100` runs on fake machines of 8 and 10 H100s and fails clearly
 * on 4 or on A100s; `--bind exact` takes no replacement; an inventory saved on one machine
 * (`detect --save`) binds by UUID where the UUIDs are there; a mixed plan binds each GPU to its own
 * model; a MIG plan binds to a MIG instance of the same profile.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const H100 = "NVIDIA H100 80GB HBM3";
/** 8 whole GPUs, one pipeline on each (50 GiB of a 59.7 GiB budget leaves room for one). */
const PIPELINE = [
  "version: 1",
  "name: portable",
  "pipelines:",
  "  - name: p{n}",
  "    matrix: { n: [1, 2, 3, 4, 5, 6, 7, 8] }",
  "    steps:",
  "      - id: infer",
  "        run: [node, -e, \"console.log('sees', process.env.CUDA_VISIBLE_DEVICES)\"]",
  "        memory: torch",
  "        vram: 50GiB",
  "",
].join("\n");

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

interface Machine {
  dir: string;
  /** The CLI's environment on a fake machine: h100x8-mig without MIG, plus `extra` scenario lines. */
  env: (extra?: string) => NodeJS.ProcessEnv;
}
function machine(): Machine {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const base = `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.2.mig = 0\nnvml.5.mig = 0\n`;
  let n = 0;
  return {
    dir: t.dir,
    env: (extra = "") => {
      const file = join(t.dir, `m${n++}.scenario`);
      writeFileSync(file, `${base}\n${extra}\n`);
      return fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_FAKE_SCENARIO: file,
          GPUPLAN_LOCK_DIR: join(t.dir, "locks"),
          CI: "1",
        },
      );
    },
  };
}
const uuidsOf = (scenario: string): string[] =>
  [...scenario.matchAll(/^nvml\.(\d+)\.uuid = (\S+)$/gm)].map((m) => m[2]!);
const SCENARIO = readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8");
const LIVE = uuidsOf(SCENARIO);

interface Binding {
  gpu: string;
  uuid: string;
  pciBusId: string | null;
  planUuid: string;
  replaced: boolean;
}
const dryRun = (m: Machine, env: NodeJS.ProcessEnv, args: string[] = []) => {
  const r = gpuplan(["run", "plan.json", "--dry-run", "--json", ...args], { cwd: m.dir, env });
  expect(hasCrashed(r), r.stderr).toBe(false);
  return { r, bindings: r.exitCode === 0 ? (JSON.parse(r.stdout) as { bindings: Binding[] }).bindings : [] };
};

describe.skipIf(!fakeLibsBuilt)("a plan compiled against a target runs on any machine of that kind", () => {
  const compiled = () => {
    const m = machine();
    writeFileSync(join(m.dir, "gpu.yaml"), PIPELINE);
    const c = gpuplan(["compile", "gpu.yaml", "--target", "dgx-h100", "-o", "plan.json"], { cwd: m.dir });
    expect(c.exitCode, c.stderr).toBe(0);
    return m;
  };

  it("on 8 fake H100s: every plan GPU bound to a live one in PCI order; the steps see the live UUIDs; run.start carries the binding", () => {
    const m = compiled();
    const env = m.env();
    const { r, bindings } = dryRun(m, env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(bindings.map((b) => [b.gpu, b.uuid, b.replaced])).toEqual(
      LIVE.map((u, i) => [`cuda:${i}`, u, true]),
    );
    const text = gpuplan(["run", "plan.json", "--dry-run"], { cwd: m.dir, env });
    expect(text.stdout).toMatch(
      /GPUs \(plan → this machine\):\n {2}cuda:0 → GPU-6513270e 0000:18:00\.0 {2}\(stands in for GPU-/,
    );

    const run = gpuplan(["run", "plan.json", "--ui", "plain", "--events", "events.jsonl"], {
      cwd: m.dir,
      env,
    });
    expect(hasCrashed(run), run.stderr).toBe(false);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^GPUs: 8 of 8 bound by model/);
    expect(run.stderr).toContain(`cuda:3 → GPU-90c192cf 0000:5d:00.0  (${H100}, for GPU-`);
    for (const u of LIVE) expect(run.stderr).toContain(`sees ${u}`);
    const start = JSON.parse(readFileSync(join(m.dir, "events.jsonl"), "utf8").split("\n")[0]!) as {
      event: string;
      bindings: Binding[];
    };
    expect(start.event).toBe("run.start");
    expect(start.bindings.map((b) => b.uuid)).toEqual(LIVE);
    expect(start.bindings[0]).toMatchObject({ gpu: "cuda:0", pciBusId: "0000:18:00.0", replaced: true });
    // The run keeps the plan as bound; resuming it with the committed plan is the same plan.
    const [runId] = readdirSync(join(m.dir, ".gpuplan/runs"));
    const resumed = gpuplan(["run", "plan.json", "--resume", runId!, "--ui", "plain"], { cwd: m.dir, env });
    expect(resumed.stderr).not.toContain("resume-plan-changed");
    expect(resumed.exitCode, resumed.stderr).toBe(0);
  });

  it("a card whose UUID NVML did not give (no CUDA to tell it) is shown to its step by its PCI-order index", () => {
    // Its steps ran with CUDA_VISIBLE_DEVICES=unknown-0000:…, which CUDA rejects: they saw no GPU.
    const m = compiled();
    const env = m.env("nvml.2.uuid = 0");
    const run = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd: m.dir, env });
    expect(hasCrashed(run), run.stderr).toBe(false);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^GPUs: 8 of 8 bound by model/);
    expect(run.stderr).toContain("cuda:2 → unknown-0000:3a:00.0 0000:3a:00.0");
    expect(run.stderr).toMatch(/sees 2$/m);
    expect(run.stderr).not.toContain("sees unknown");
    for (const [i, u] of LIVE.entries()) if (i !== 2) expect(run.stderr).toContain(`sees ${u}`);
  });

  it("on 10 H100s it binds 8 of them, the first in PCI order", () => {
    const m = compiled();
    const extra = [8, 9]
      .map((i) =>
        [
          `nvml.${i}.name = ${H100}`,
          `nvml.${i}.uuid = GPU-00000000-0000-0000-0000-00000000000${i}`,
          `nvml.${i}.pci = 00000000:0${i}:00.0`,
          `nvml.${i}.memory = 85520809984`,
          `nvml.${i}.cc = 9.0`,
          `nvml.${i}.mig = 0`,
        ].join("\n"),
      )
      .join("\n");
    const { r, bindings } = dryRun(m, m.env(`nvml.count = 10\n${extra}`));
    expect(r.exitCode, r.stderr).toBe(0);
    // The two new GPUs sit first on the PCI bus (0000:08, 0000:09).
    expect(bindings.map((b) => b.uuid)).toEqual([
      "GPU-00000000-0000-0000-0000-000000000008",
      "GPU-00000000-0000-0000-0000-000000000009",
      ...LIVE.slice(0, 6),
    ]);
  });

  it("on 4 H100s it fails before anything starts, saying how many are missing and how to plan for this machine", () => {
    const m = compiled();
    const r = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd: m.dir, env: m.env("nvml.count = 4") });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `the plan needs 8 × ${H100} (79.6 GiB, compute capability 9.0) for cuda:4, cuda:5, cuda:6, cuda:7 and the GPUs bound already; this machine has 4 that could stand in (it has 4 × ${H100} (79.6 GiB))`,
    );
    // Never `compile … -o plan.json`: that would put this machine's plan under the name of the
    // plan made for another.
    expect(r.stderr).toContain(
      "run the pipeline file instead, which plans for this machine and leaves the plan as it is: gpuplan run gpu.yaml",
    );
    expect(r.stderr).not.toContain("-o plan.json");
    expect(r.stderr).not.toMatch(/\[run\] started/);
  });

  it("on 8 A100s it fails naming the model it needs and the one the machine has", () => {
    const m = compiled();
    const a100 = LIVE.map((_, i) => `nvml.${i}.name = NVIDIA A100-SXM4-80GB\nnvml.${i}.cc = 8.0`).join("\n");
    const { r } = dryRun(m, m.env(a100));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /the plan needs 8 × NVIDIA H100 80GB HBM3 .*; this machine has none \(it has 8 × NVIDIA A100-SXM4-80GB/,
    );
  });

  it("--bind exact refuses any replacement", () => {
    const m = compiled();
    const { r } = dryRun(m, m.env(), ["--bind", "exact"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /cuda:0 \(NVIDIA H100 80GB HBM3, GPU-\S+\) from the plan is not visible on this machine, and --bind exact takes no replacement/,
    );
  });

  // The hint said "this machine is not of the kind the plan was made for" of a machine with the
  // plan's 8 H100s, where only --bind exact kept the run from them.
  it("--bind exact on a machine of the plan's kind: the hint names the stand-in and that --bind auto uses it", () => {
    const m = compiled();
    const { r } = dryRun(m, m.env(), ["--bind", "exact"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /hint: a GPU of its model is here \(cuda:\d, GPU-\S+\): without --bind exact the run binds to it; or /,
    );
    expect(r.stderr).not.toContain("not of the kind the plan was made for");
  });
});

describe.skipIf(!fakeLibsBuilt)("an inventory saved on another machine", () => {
  it("binds by UUID where the UUIDs are here (whatever their order), by model for the others", () => {
    const m = machine();
    writeFileSync(join(m.dir, "gpu.yaml"), PIPELINE);
    const env = m.env();
    expect(gpuplan(["detect", "--save", "inv.json"], { cwd: m.dir, env }).exitCode).toBe(0);
    const c = gpuplan(["compile", "gpu.yaml", "--inventory", "inv.json", "-o", "plan.json"], { cwd: m.dir });
    expect(c.exitCode, c.stderr).toBe(0);
    // The same machine with its first two GPUs' PCI slots swapped: the UUIDs still decide.
    const swapped = "nvml.0.pci = 00000000:2A:00.0\nnvml.1.pci = 00000000:18:00.0";
    const same = dryRun(m, m.env(swapped));
    expect(same.r.exitCode, same.r.stderr).toBe(0);
    expect(same.bindings.every((b) => !b.replaced && b.uuid === b.planUuid)).toBe(true);
    // One card replaced by another H100: only that one binds by model.
    const gone = dryRun(m, m.env("nvml.6.uuid = GPU-00000000-0000-0000-0000-0000000000aa"));
    expect(gone.r.exitCode, gone.r.stderr).toBe(0);
    expect(gone.bindings.filter((b) => b.replaced).map((b) => [b.planUuid, b.uuid])).toEqual([
      [LIVE[6], "GPU-00000000-0000-0000-0000-0000000000aa"],
    ]);
  });
});

describe.skipIf(!fakeLibsBuilt)("mixed and MIG plans", () => {
  it("a plan for 4 × H100 + 4 × L4 binds each GPU to one of its own model, wherever the machine has them", () => {
    const m = machine();
    writeFileSync(
      join(m.dir, "gpu.yaml"),
      PIPELINE.replace("vram: 50GiB", "vram: 16GiB\n        exclusive: true"),
    );
    writeFileSync(
      join(m.dir, "mixed.yaml"),
      [
        "gpus:",
        `  - { name: ${H100}, memory: 85520809984, count: 4, backend: cuda, compute_capability: "9.0" }`,
        '  - { name: NVIDIA L4, memory: 24152899584, count: 4, backend: cuda, compute_capability: "8.9" }',
        "cpu: { threads: 64, memory: 256GiB }",
        "",
      ].join("\n"),
    );
    const c = gpuplan(["compile", "gpu.yaml", "--inventory", "mixed.yaml", "-o", "plan.json"], {
      cwd: m.dir,
    });
    expect(c.exitCode, c.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(m.dir, "plan.json"), "utf8")) as {
      registry: { gpu: string; name: string }[];
    };
    // On the machine, the L4s come first on the bus: GPUs 0-3 are L4s, 4-7 H100s.
    const l4 = [0, 1, 2, 3]
      .map((i) => `nvml.${i}.name = NVIDIA L4\nnvml.${i}.memory = 24152899584\nnvml.${i}.cc = 8.9`)
      .join("\n");
    const { r, bindings } = dryRun(m, m.env(l4));
    expect(r.exitCode, r.stderr).toBe(0);
    const liveName = (uuid: string) => (LIVE.indexOf(uuid) < 4 ? "NVIDIA L4" : H100);
    expect(bindings.length).toBe(8);
    for (const b of bindings) expect(liveName(b.uuid)).toBe(plan.registry.find((e) => e.gpu === b.gpu)!.name);
  });

  it("a MIG plan binds to a MIG instance of the same profile", () => {
    const m = machine();
    mkdirSync(join(m.dir, "x"));
    writeFileSync(
      join(m.dir, "gpu.yaml"),
      PIPELINE.replace("[1, 2, 3, 4, 5, 6, 7, 8]", "[1]").replace("vram: 50GiB", "vram: 12GiB"),
    );
    // Only GPU 2 (three 2g.20gb instances) is visible when the inventory is saved.
    const mig = m.env("nvml.2.mig = 1");
    expect(
      gpuplan(["detect", "--save", "inv.json"], {
        cwd: m.dir,
        env: { ...mig, CUDA_VISIBLE_DEVICES: "MIG-36f675cc-81e7-4ef5-e8e2-5d940ed90475" },
      }).exitCode,
    ).toBe(0);
    const c = gpuplan(["compile", "gpu.yaml", "--inventory", "inv.json", "-o", "plan.json"], { cwd: m.dir });
    expect(c.exitCode, c.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(m.dir, "plan.json"), "utf8")) as {
      pipelines: { gpu: string }[];
    };
    expect(plan.pipelines[0]!.gpu).toMatch(/\/mig/);
    // Elsewhere: GPU 2 has other instance UUIDs; the plan binds to one of the same 2g.20gb profile.
    const other = m.env(
      "nvml.2.mig = 1\nnvml.2.mig.0.uuid = MIG-00000000-0000-0000-0000-000000000001\nnvml.2.mig.1.uuid = MIG-00000000-0000-0000-0000-000000000002\nnvml.2.mig.2.uuid = MIG-00000000-0000-0000-0000-000000000003",
    );
    const { r, bindings } = dryRun(m, other);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(bindings).toEqual([
      expect.objectContaining({ uuid: "MIG-00000000-0000-0000-0000-000000000001", replaced: true }),
    ]);
  });
});
