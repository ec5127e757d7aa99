// detect --slurm's reading of sinfo and scontrol, on captured and hostile output (no cluster needed).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError, VendorError } from "../../src/problems/errors.js";
import { modelForGresType } from "../../src/slurm/gpu-models.js";
import { parseGres } from "../../src/slurm/gres.js";
import { parseKeyValueLine } from "../../src/slurm/key-value-line.js";
import { parseNodes } from "../../src/slurm/nodes.js";
import { type CommandOutput, type RunCommand, readSlurmNodeTypes } from "../../src/slurm/read-cluster.js";
import { ROOT } from "../helpers/cli.js";

const fixture = (name: string) => readFileSync(join(ROOT, "fixtures/slurm", name), "utf8");

function runner(sinfo: string, scontrol: string, calls: string[] = []): RunCommand {
  return async (command, args) => {
    calls.push(`${command} ${args.join(" ")}`);
    return { status: 0, stdout: command === "sinfo" ? sinfo : scontrol, stderr: "" };
  };
}

const hasControl = (text: string) => [...text].some((c) => c.charCodeAt(0) < 0x20);
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe("detect --slurm on captured output", () => {
  it("reads the 22.05 test node as 4 × H100 80GB HBM3 with the memory NVML reports, 16 CPUs, 16000 MiB, 4 shards per GPU", async () => {
    const calls: string[] = [];
    const r = await readSlurmNodeTypes(
      runner(fixture("sinfo-22.05-one-node.txt"), fixture("scontrol-22.05-one-node.txt"), calls),
    );
    expect(calls).toEqual(["sinfo --noheader --format=%R|%P|%a", "scontrol show node --oneliner"]);
    expect(r.problems).toEqual([]);
    expect(r.partitions).toEqual([{ name: "debug", isDefault: true, available: "up" }]);
    expect(r.nodeTypes).toHaveLength(1);
    const t = r.nodeTypes[0]!;
    expect(t).toMatchObject({
      name: "h100x4-16cpu-16000mib",
      nodes: ["localhost"],
      usableNodes: 1,
      partitions: ["debug"],
      cpus: 16,
      memoryBytes: 16000 * MiB,
      shardsPerGpu: 4,
      gpus: [{ gresType: "h100", count: 4, model: "NVIDIA H100 80GB HBM3", memoryBytes: 81559 * MiB }],
    });
    expect(t.inventory).toEqual({
      gpus: [
        {
          name: "NVIDIA H100 80GB HBM3",
          memory: 85520809984,
          count: 4,
          backend: "cuda",
          compute_capability: "9.0",
        },
      ],
      cpu: { threads: 16, memory: "16000MiB", model: "Slurm node type h100x4-16cpu-16000mib" },
      slurm: {
        node_type: "h100x4-16cpu-16000mib",
        partitions: ["debug"],
        nodes: ["localhost"],
        gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
        shards_per_gpu: 4,
      },
    });
  });

  it("a drain reason that contains `Gres=…` is the reason, not the node's GRES; the drained node is not usable", async () => {
    const r = await readSlurmNodeTypes(
      runner(fixture("sinfo-22.05-one-node.txt"), fixture("scontrol-22.05-drained-reason.txt")),
    );
    expect(r.problems).toEqual([]);
    expect(r.nodeTypes[0]).toMatchObject({ usableNodes: 0, gpus: [{ gresType: "h100", count: 4 }] });
  });

  it("groups a 23.02 cluster into node types, skips partitions the user cannot see, and names unknown GPU models", async () => {
    const r = await readSlurmNodeTypes(
      runner(fixture("sinfo-23.02-cluster.txt"), fixture("scontrol-23.02-cluster.txt")),
    );
    const byName = Object.fromEntries(r.nodeTypes.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      "a100x2+v100x2-32cpu-256000mib",
      "a100x4-64cpu-515000mib",
      "cpu-64cpu-256000mib",
      "gpux2-24cpu-128000mib",
      "nvidia_h100_80gb_hbm3x8-128cpu-1023000mib",
    ]);
    const h100 = byName["nvidia_h100_80gb_hbm3x8-128cpu-1023000mib"]!;
    expect(h100).toMatchObject({
      nodes: ["gpu001", "gpu002", "gpu003"],
      usableNodes: 2,
      partitions: ["gpu", "preempt"],
      memoryBytes: (1031000 - 8000) * MiB,
      shardsPerGpu: null,
    });
    expect(h100.inventory?.gpus).toEqual([
      {
        name: "NVIDIA H100 80GB HBM3",
        memory: 81559 * MiB,
        count: 8,
        backend: "cuda",
        compute_capability: "9.0",
      },
    ]);
    expect(byName["a100x4-64cpu-515000mib"]).toMatchObject({
      usableNodes: 1,
      shardsPerGpu: 8,
      gpus: [{ model: "NVIDIA A100-SXM4-40GB", memoryBytes: 40 * GiB }],
    });
    expect(byName["cpu-64cpu-256000mib"]?.inventory).toMatchObject({ gpus: [], cpu: { threads: 64 } });
    // v100 is not in the table, and untyped GPUs name no model: no inventory, a problem each.
    expect(byName["a100x2+v100x2-32cpu-256000mib"]?.inventory).toBeNull();
    expect(byName["gpux2-24cpu-128000mib"]?.inventory).toBeNull();
    expect(r.problems.map((p) => [p.code, p.severity])).toEqual([
      ["slurm-unknown-gpu-model", "error"],
      ["slurm-unknown-gpu-model", "error"],
    ]);
    expect(r.problems[0]!.message).toContain("`v100`");
    expect(r.problems[0]!.hint).toContain("--gpu-model v100=h100");
    expect(r.problems[1]!.message).toContain("untyped GPUs");
    // adm001 is only in `admin`, which sinfo does not list for this user.
    expect(r.nodeTypes.flatMap((t) => t.nodes)).not.toContain("adm001");
  });

  it("--gpu-model names the model of an unknown or untyped GRES type", async () => {
    const h100 = modelForGresType("h100")!;
    const r = await readSlurmNodeTypes(
      runner(fixture("sinfo-23.02-cluster.txt"), fixture("scontrol-23.02-cluster.txt")),
      {
        gpuModels: [
          { gresType: "v100", model: modelForGresType("t4")! },
          { gresType: null, model: h100 },
        ],
      },
    );
    expect(r.problems).toEqual([]);
    const mixed = r.nodeTypes.find((t) => t.name.startsWith("a100x2"))!;
    expect(mixed.inventory?.gpus?.map((g) => [g.name, g.count])).toEqual([
      ["NVIDIA A100-SXM4-40GB", 2],
      ["Tesla T4", 2],
    ]);
    expect(r.nodeTypes.find((t) => t.name.startsWith("gpux2"))?.inventory?.slurm?.gres).toEqual([
      { model: "NVIDIA H100 80GB HBM3", type: null, count: 2 },
    ]);
  });

  it("--partition keeps that partition's nodes; an unknown partition is a usage error with a suggestion", async () => {
    const run = runner(fixture("sinfo-23.02-cluster.txt"), fixture("scontrol-23.02-cluster.txt"));
    const cpu = await readSlurmNodeTypes(run, { partition: "cpu" });
    expect(cpu.nodeTypes.map((t) => t.name)).toEqual(["cpu-64cpu-256000mib"]);
    expect(cpu.partitions.map((p) => p.name)).toEqual(["cpu"]);
    const err = await readSlurmNodeTypes(run, { partition: "gpus" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).code).toBe("unknown-partition");
    expect((err as UsageError).hint).toContain("did you mean `gpu`?");
    const admin = await readSlurmNodeTypes(run, { partition: "admin" }).catch((e: unknown) => e);
    expect((admin as UsageError).code).toBe("unknown-partition");
  });
});

describe("detect --slurm on hostile or broken output", () => {
  const sinfo = "gpu|gpu*|up\n";
  const base = fixture("scontrol-22.05-one-node.txt").trim().replace("Partitions=debug", "Partitions=gpu");

  it.each([
    [
      "a node name with an escape sequence",
      base.replace("NodeName=localhost", "NodeName=x\u001b[2Jevil"),
      "\\x1b[2Jevil",
    ],
    ["CPUs that are not a number", base.replace("CPUEfctv=16", "CPUEfctv=16e9"), "CPUEfctv"],
    ["memory that is not a number", base.replace("RealMemory=16000", "RealMemory=-5"), "RealMemory"],
    [
      "a GRES entry that is not name:type:count",
      base.replace("Gres=gpu:h100:4", "Gres=gpu:h100:4;rm"),
      "Gres entry",
    ],
    ["a GRES type with a newline", base.replace("Gres=gpu:h100:4", "Gres=gpu:h1\u000000:4"), "Gres entry"],
    [
      "a partition name with shell characters",
      base.replace("Partitions=gpu", "Partitions=gpu,$(reboot)"),
      "partition name",
    ],
    ["a state that is not Slurm's", base.replace("State=IDLE", "State=idle;x"), "State"],
  ])("%s: the node is left out with a located, escaped problem", async (_what, line, mentions) => {
    const r = await readSlurmNodeTypes(runner(sinfo, `${line}\n`));
    expect(r.nodeTypes).toEqual([]);
    const codes = r.problems.map((p) => p.code);
    expect(codes).toContain("slurm-untrusted-value");
    expect(codes).toContain("slurm-no-nodes");
    const message = r.problems.find((p) => p.code === "slurm-untrusted-value")!.message;
    expect(message).toContain(mentions);
    // Nothing from the line reaches a terminal raw.
    for (const p of r.problems) expect(hasControl(p.message)).toBe(false);
  });

  it("a key Slurm prints once appearing twice (text in OS=) makes the node ambiguous, not a guess", async () => {
    const line = base.replace("#1 SMP", "#1 RealMemory=99999999 SMP");
    const r = await readSlurmNodeTypes(runner(sinfo, `${line}\n`));
    expect(r.nodeTypes).toEqual([]);
    expect(r.problems[0]).toMatchObject({ code: "slurm-ambiguous-output", severity: "error" });
    expect(r.problems[0]!.message).toContain("RealMemory");
  });

  it("a broken sinfo line is left out with a problem; the good partitions still count", async () => {
    const r = await readSlurmNodeTypes(
      runner(`gpu|gpu*|up\nweird\u001b]0;x|y\ncpu|cpu|up|extra\n`, `${base}\n`),
    );
    expect(r.partitions.map((p) => p.name)).toEqual(["gpu"]);
    expect(r.problems.map((p) => p.code)).toEqual(["slurm-untrusted-value", "slurm-untrusted-value"]);
    expect(r.problems[0]!.message).toContain("\\x1b");
    expect(r.nodeTypes).toHaveLength(1);
  });

  it("empty output is no nodes, said as a warning", async () => {
    const r = await readSlurmNodeTypes(runner("", ""));
    expect(r.nodeTypes).toEqual([]);
    expect(r.problems.map((p) => [p.code, p.severity])).toEqual([["slurm-no-nodes", "warning"]]);
  });

  it.each<[string, CommandOutput, string, RegExp]>([
    [
      "not installed",
      { status: null, stdout: "", stderr: "", failure: "not-found" },
      "slurm-not-found",
      /not on PATH/,
    ],
    [
      "hanging",
      { status: null, stdout: "", stderr: "", failure: "timeout" },
      "VendorError",
      /did not answer/,
    ],
    [
      "without a configuration",
      { status: 1, stdout: "", stderr: "sinfo: fatal: Could not establish a configuration source\n" },
      "VendorError",
      /SLURM_CONF/,
    ],
    [
      "with a hostile error message",
      { status: 1, stdout: "", stderr: "boom \u001b[31mred\u0007\n" },
      "VendorError",
      /by hand/,
    ],
  ])("a Slurm command %s is a clear error, never a stack trace", async (_what, output, kind, says) => {
    const err = await readSlurmNodeTypes(async () => output).catch((e: unknown) => e);
    if (kind === "slurm-not-found") {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).code).toBe(kind);
      expect((err as UsageError).message).toMatch(says);
    } else {
      expect(err).toBeInstanceOf(VendorError);
      const e = err as VendorError;
      expect(`${e.message} ${e.hint}`).toMatch(says);
      expect(e.call).toBe("sinfo --noheader --format=%R|%P|%a");
      expect(hasControl(e.vendorMessage ?? "")).toBe(false);
    }
  });
});

describe("Slurm text pieces", () => {
  it("parses GRES with types, counts, socket affinity and shards; refuses what is not GRES", () => {
    expect(parseGres("gpu:h100:4(S:0-1),shard:h100:16")).toEqual({
      ok: true,
      entries: [
        { name: "gpu", type: "h100", count: 4 },
        { name: "shard", type: "h100", count: 16 },
      ],
    });
    expect(parseGres("gpu:4")).toEqual({ ok: true, entries: [{ name: "gpu", type: null, count: 4 }] });
    expect(parseGres("gpu:a100:2(S:0,2),gpu:v100:1")).toMatchObject({
      ok: true,
      entries: [{ count: 2 }, { type: "v100" }],
    });
    expect(parseGres("(null)")).toEqual({ ok: true, entries: [] });
    expect(parseGres("gpu:h100:4:5")).toEqual({ ok: false, bad: "gpu:h100:4:5" });
    expect(parseGres("gpu:h100:lots")).toEqual({ ok: false, bad: "gpu:h100:lots" });
  });

  it("reads values with spaces, keeps the first of a repeated key and says it was repeated", () => {
    const r = parseKeyValueLine(
      "NodeName=a OS=Linux 6.1 #1 SMP  RealMemory=10 X=1 X=2 Reason=down X=3 [a@b]",
    );
    expect(r.values.get("OS")).toBe("Linux 6.1 #1 SMP");
    expect(r.values.get("RealMemory")).toBe("10");
    expect(r.values.get("X")).toBe("1");
    expect(r.values.get("Reason")).toBe("down X=3 [a@b]");
    expect([...r.repeated]).toEqual(["X"]);
  });

  it("maps GRES type spellings to models: hand-named, AutoDetect's, ambiguous short names to the smaller card", () => {
    expect(modelForGresType("h100")?.name).toBe("NVIDIA H100 80GB HBM3");
    expect(modelForGresType("nvidia_h100_80gb_hbm3")?.name).toBe("NVIDIA H100 80GB HBM3");
    expect(modelForGresType("nvidia_a100-sxm4-80gb")?.name).toBe("NVIDIA A100-SXM4-80GB");
    expect(modelForGresType("A100")?.name).toBe("NVIDIA A100-SXM4-40GB");
    expect(modelForGresType("tesla_t4")?.name).toBe("Tesla T4");
    expect(modelForGresType("v100")).toBeUndefined();
    expect(parseNodes("").nodes).toEqual([]);
  });
});
