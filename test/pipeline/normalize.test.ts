import { describe, expect, it } from "vitest";
import { check, one, pipelines, step, withCode, yaml } from "../helpers/pipeline.js";

const GiB = 1024 ** 3;

describe("normalize: memory types", () => {
  it("reports an unknown memory type with a did-you-mean (case-sensitive names)", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: seg
              run: [x]
              memory: Torch
    `);
    const p = one(loaded.problems, "unknown-memory-type");
    expect(p.severity).toBe("error");
    expect(p.message).toBe("unknown memory type `Torch`");
    expect(p.hint).toContain("did you mean `torch`?");
    expect(p.hint).toContain("case-sensitive");
    expect(p.pointer).toBe("/pipelines/0/steps/0/memory");
    expect([p.line, p.column]).toEqual([7, 17]);
  });

  it("points at input, output and uses entries separately", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [x], memory: { input: nunpy, output: cupyy }, uses: [torch, tenserflow] }
    `);
    const found = withCode(loaded.problems, "unknown-memory-type");
    expect(found.map((p) => p.pointer)).toEqual([
      "/pipelines/0/steps/0/memory/input",
      "/pipelines/0/steps/0/memory/output",
      "/pipelines/0/steps/0/uses/1",
    ]);
    expect(found.map((p) => p.hint?.split("?")[0])).toEqual([
      "did you mean `numpy`",
      "did you mean `cupy`",
      "did you mean `tensorflow`",
    ]);
  });

  it("gives no suggestion for a name far from every type", () => {
    const p = one(
      check(yaml`
        version: 1
        pipelines: [{ name: p, steps: [{ id: s, run: [x], memory: spreadsheet }] }]
      `).problems,
      "unknown-memory-type",
    );
    expect(p.hint).not.toContain("did you mean");
    expect(p.hint).toContain("numpy, cupy, torch, tensorflow, jax, pyclesperanto");
  });

  it("reports a bad defaults.memory at /defaults/memory", () => {
    const loaded = check(yaml`
      version: 1
      defaults: { memory: cuppy }
      pipelines: [{ name: p, steps: [{ id: s, run: [x] }, { id: t, run: [y] }] }]
    `);
    // Once, not once per step that inherits it.
    expect(withCode(loaded.problems, "unknown-memory-type").map((p) => p.pointer)).toEqual([
      "/defaults/memory",
      "/defaults/memory",
    ]);
  });
});

describe("normalize: GPU steps", () => {
  const loaded = check(yaml`
    version: 1
    pipelines:
      - name: p
        steps:
          - { id: none, run: [x] }
          - { id: host, run: [x], memory: numpy }
          - { id: uses, run: [x], memory: numpy, uses: [numpy, torch], vram: 1GiB }
          - { id: input, run: [x], memory: { input: cupy, output: numpy }, vram: 1GiB }
          - { id: output, run: [x], memory: { input: numpy, output: jax }, vram: 1GiB }
  `);

  it("is a GPU step when any of input, output or uses is a GPU type", () => {
    expect(pipelines(loaded)[0]!.steps.map((s) => [s.id, s.isGpu])).toEqual([
      ["none", false],
      ["host", false],
      ["uses", true],
      ["input", true],
      ["output", true],
    ]);
  });

  it("defaults a step without memory to numpy in and out", () => {
    expect(step(loaded, "none").memory).toEqual({ input: "numpy", output: "numpy", uses: [] });
    expect(step(loaded, "uses").memory).toEqual({
      input: "numpy",
      output: "numpy",
      uses: ["numpy", "torch"],
    });
  });
});

describe("normalize: defaults", () => {
  const loaded = check(yaml`
    version: 1
    defaults:
      env: { A: "1", B: 2, C: true }
      cwd: work
      timeout: 30m
      estimate: 2m
      on_oom: { retries: 3 }
      keep_warm: true
      memory: numpy
    pipelines:
      - name: p
        env: { B: pipeline, D: "4" }
        steps:
          - { id: plain, run: [x] }
          - id: own
            run: [x]
            env: { B: step, E: 5 }
            cwd: elsewhere
            timeout: 45s
            estimate: 1h
            on_oom: { retries: 0, fallback: cpu }
            keep_warm: { ttl: 5m }
            memory: torch
            vram: 12GiB
            data: 16GB
  `);

  it("merges env (defaults < pipeline < step) and stringifies values", () => {
    expect(loaded.problems).toEqual([]);
    expect(step(loaded, "plain").env).toEqual({ A: "1", B: "pipeline", C: "true", D: "4" });
    expect(step(loaded, "own").env).toEqual({ A: "1", B: "step", C: "true", D: "4", E: "5" });
  });

  it("applies the other defaults unless the step sets its own", () => {
    const plain = step(loaded, "plain");
    expect(plain.cwd).toBe("work");
    expect(plain.timeoutMs).toBe(30 * 60_000);
    expect(plain.estimateMs).toBe(2 * 60_000);
    expect(plain.onOom).toEqual({ retries: 3, fallback: null });
    expect(plain.keepWarm).toEqual({ ttlMs: 15 * 60_000 });
    const own = step(loaded, "own");
    expect(own.cwd).toBe("elsewhere");
    expect(own.timeoutMs).toBe(45_000);
    expect(own.estimateMs).toBe(3_600_000);
    expect(own.onOom).toEqual({ retries: 0, fallback: "cpu" });
    expect(own.keepWarm).toEqual({ ttlMs: 5 * 60_000 });
    expect(own.memory.input).toBe("torch");
  });

  it("turns sizes into bytes (GiB vs GB)", () => {
    expect(step(loaded, "own").vramBytes).toBe(12 * GiB);
    expect(step(loaded, "own").dataBytes).toBe(16e9);
  });

  it("uses 1m as the estimate and no timeout when nothing is said", () => {
    const bare = check(yaml`
      version: 1
      pipelines: [{ name: p, steps: [{ id: s, run: [x] }] }]
    `);
    const s = step(bare, "s");
    expect(s.estimateMs).toBe(60_000);
    expect(s.timeoutMs).toBeNull();
    expect(s.keepWarm).toBe(false);
    expect(s.exclusive).toBe(false);
    expect(s.cwd).toBeNull();
    expect(pipelines(bare)[0]!.gpus).toBe(1);
    expect(bare.resolved!.name).toBe("pipeline");
  });

  it("reads timeout 0 as no limit, so a step can lift a default timeout", () => {
    const lifted = check(yaml`
      version: 1
      defaults: { timeout: 30m }
      pipelines:
        - name: p
          steps:
            - { id: long, run: [x], timeout: 0, estimate: 2h }
            - { id: also, run: [x], timeout: 0s }
            - { id: kept, run: [x] }
    `);
    expect(lifted.problems).toEqual([]);
    expect(step(lifted, "long").timeoutMs).toBeNull();
    expect(step(lifted, "also").timeoutMs).toBeNull();
    expect(step(lifted, "kept").timeoutMs).toBe(30 * 60_000);
  });
});

describe("normalize: registry", () => {
  const registry = (body: string) => {
    const loaded = check(
      `version: 1\nregistry: ${body}\npipelines: [{ name: p, steps: [{ id: s, run: [x] }] }]\n`,
    );
    return { loaded, config: loaded.resolved?.registry };
  };

  it.each([
    ["conservative", 0.6],
    ["balanced", 0.75],
    ["aggressive", 0.9],
  ])("memory_strategy %s uses %d of each GPU", (strategy, fraction) => {
    const { loaded, config } = registry(`{ memory_strategy: ${strategy} }`);
    expect(loaded.problems).toEqual([]);
    expect(config!.memoryStrategy).toBe(strategy);
    expect(config!.memoryFraction).toBe(fraction);
  });

  it("defaults to balanced, cuda before rocm before cpu, 1 GiB context reserve", () => {
    const loaded = check("version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [x] }] }]\n");
    expect(loaded.resolved!.registry).toEqual({
      memoryStrategy: "balanced",
      memoryFraction: 0.75,
      maxPipelinesPerGpu: null,
      platformPriority: ["cuda", "rocm", "cpu"],
      maxParallelPipelines: null,
      contextReserveBytes: GiB,
      maxWarmPerGpu: 1,
    });
  });

  it("max_parallel_pipelines bounds the pipelines on the host; its old name workers is read with a deprecated-key warning", () => {
    const current = registry("{ max_parallel_pipelines: 3 }");
    expect(current.loaded.problems).toEqual([]);
    expect(current.config!.maxParallelPipelines).toBe(3);
    const old = registry("{ workers: 5 }");
    expect(old.config!.maxParallelPipelines).toBe(5);
    const p = one(old.loaded.problems, "deprecated-key");
    expect(p.severity).toBe("warning");
    expect(p.pointer).toBe("/registry/workers");
    expect(p.message).toContain("max_parallel_pipelines");
    expect([p.line, p.column]).toEqual([2, 22]);
    const both = registry("{ workers: 5, max_parallel_pipelines: 2 }");
    expect(both.config!.maxParallelPipelines).toBe(2);
    expect(one(both.loaded.problems, "deprecated-key").message).toContain("`workers` is ignored");
  });

  it("takes the fraction from memory_fraction with custom", () => {
    const { loaded, config } = registry("{ memory_strategy: custom, memory_fraction: 0.8 }");
    expect(loaded.problems).toEqual([]);
    expect(config!.memoryFraction).toBe(0.8);
  });

  it("reports custom without memory_fraction at the strategy", () => {
    const { loaded } = registry("{ memory_strategy: custom }");
    const p = one(loaded.problems, "missing-memory-fraction");
    expect(p.severity).toBe("error");
    expect(p.pointer).toBe("/registry/memory_strategy");
    expect([p.line, p.column]).toEqual([2, 30]);
  });

  it("reports memory_fraction without custom at the fraction", () => {
    const { loaded } = registry("{ memory_strategy: aggressive, memory_fraction: 0.5 }");
    const p = one(loaded.problems, "memory-fraction-without-custom");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`aggressive` (0.9)");
    expect(p.pointer).toBe("/registry/memory_fraction");
    const implicit = one(
      registry("{ memory_fraction: 0.5 }").loaded.problems,
      "memory-fraction-without-custom",
    );
    expect(implicit.message).toContain("`balanced`");
  });

  it("rejects a fraction outside [0.1, 1.0] in the schema", () => {
    for (const f of ["0.05", "1.5"]) {
      const { loaded } = registry(`{ memory_strategy: custom, memory_fraction: ${f} }`);
      expect(loaded.problems.map((p) => [p.code, p.pointer])).toContainEqual([
        "schema-invalid-value",
        "/registry/memory_fraction",
      ]);
    }
  });
});
