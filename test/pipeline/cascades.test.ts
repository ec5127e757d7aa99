/**
 * #11.12: one mistake, one problem. A value the schema rejects is reported once, by the schema
 * check, and never again as a second, false problem about the same key (the rest of the file is
 * still checked as if the key were absent — but not "missing").
 */
import { describe, expect, it } from "vitest";
import { compilePlan } from "../../src/compile/compile.js";
import type { Problem } from "../../src/problems/problem.js";
import { inventory } from "../helpers/inventory.js";
import { check, one, yaml } from "../helpers/pipeline.js";

type Json = Record<string, unknown>;

/** A file that uses every key, valid and without problems. */
const BASE: Json = {
  version: 1,
  name: "all-keys",
  description: "d",
  limits: { max_pipelines: 100, max_steps: 1000 },
  registry: {
    memory_strategy: "custom",
    memory_fraction: 0.8,
    max_pipelines_per_gpu: 2,
    max_warm_per_gpu: 1,
    platform_priority: ["cuda", "cpu"],
    max_parallel_pipelines: 4,
    context_reserve: "1GiB",
  },
  defaults: {
    env: { A: "1" },
    cwd: ".",
    shell: false,
    memory: "numpy",
    vram: "1GiB",
    timeout: "1h",
    estimate: "1m",
    on_oom: { retries: 1 },
    keep_warm: false,
  },
  pipelines: [
    {
      name: "p-{x}",
      description: "d",
      matrix: { x: [1, 2] },
      requires: { backend: "cuda", min_memory: "8GiB", compute_capability: ">=8.0", name: "*" },
      gpus: 1,
      allow_host_roundtrip: false,
      env: { B: "2" },
      steps: [
        {
          id: "load",
          description: "d",
          run: ["echo", "{x}"],
          shell: false,
          env: { C: "3" },
          cwd: ".",
          memory: { input: "numpy", output: "torch" },
          uses: ["torch"],
          vram: "2GiB",
          data: "1GiB",
          exclusive: false,
          timeout: "10m",
          estimate: "1m",
          on_oom: { retries: 1, fallback: "cpu" },
          keep_warm: false,
          device_map: { preset: "a100-80gb" },
        },
        {
          id: "train",
          needs: ["load"],
          worker: { run: ["python3", "w.py"], key: "k", ready_timeout: "1m" },
          memory: "torch",
          vram: "2GiB",
        },
      ],
    },
  ],
};

function leaves(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v) || (v !== null && typeof v === "object")) {
    const out: (string | number)[][] = at.length > 0 ? [at] : [];
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v as Json);
    for (const [k, x] of entries) out.push(...leaves(x, [...at, k]));
    return out;
  }
  return [at];
}

const INVENTORY = inventory([
  { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 2, compute_capability: "8.0" },
]);

function problemsOf(data: Json): Problem[] {
  const loaded = check(JSON.stringify(data, null, 2));
  return compilePlan(loaded, { inventory: INVENTORY, label: "test", problems: [] }).problems;
}

const key = (p: Problem) => `${p.code} ${p.pointer}`;

function parentOf(root: Json, path: readonly (string | number)[]): Json {
  let node = root;
  for (const seg of path.slice(0, -1)) node = node[seg as string] as Json;
  return node;
}

describe("one mistake, one problem", () => {
  it("the all-keys file has no problems", () => {
    expect(problemsOf(BASE).map(key)).toEqual([]);
  });

  // Every key of the file (and every element of its lists), replaced by a value of a type no
  // branch of its schema allows: one mistake.
  const paths = leaves(BASE).filter((p) => !(p.length === 1 && (p[0] === "version" || p[0] === "pipelines")));
  const wrongType = (old: unknown): unknown =>
    typeof old === "string" || typeof old === "number"
      ? []
      : typeof old === "object" && old !== null
        ? 7
        : "x";
  it.each(paths.map((p) => [p.join("."), p] as const))("an invalid %s is one problem", (_, path) => {
    const data = structuredClone(BASE);
    const node = parentOf(data, path);
    const last = path[path.length - 1]!;
    node[last as string] = wrongType(node[last as string]);
    const problems = problemsOf(data);
    expect(problems.map(key), "one problem, no warning or error following from it").toHaveLength(1);
    expect(problems[0]!.code).toMatch(/^schema-/);
    expect(problems[0]!.pointer).toBe(`/${path.join("/")}`);
  });

  // Every mapping with one key too many: one mistake.
  const maps = paths.filter((p) => {
    const v = parentOf(BASE, p)[p[p.length - 1] as string];
    return (
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      !["env", "matrix"].includes(String(p.at(-1)))
    );
  });
  it.each(maps.map((p) => [p.join("."), p] as const))("an unknown key in %s is one problem", (_, path) => {
    const data = structuredClone(BASE);
    (parentOf(data, path)[path[path.length - 1] as string] as Json).bogus = 1;
    const problems = problemsOf(data);
    expect(problems.map(key)).toEqual([`schema-unknown-property /${path.join("/")}/bogus`]);
  });

  it("memory_fraction: 1.5 is out of range, not also missing", () => {
    const loaded = check(yaml`
      version: 1
      registry: { memory_strategy: custom, memory_fraction: 1.5 }
      pipelines: [{ name: p, steps: [{ id: a, run: [echo] }] }]
    `);
    expect(loaded.problems.map((p) => p.code)).toEqual(["schema-invalid-value"]);
    expect(loaded.problems[0]!.pointer).toBe("/registry/memory_fraction");
  });

  it("an invalid vram is not also a missing one", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps: [{ id: a, run: [python3, a.py], memory: torch, vram: 12 gigs }]
    `);
    expect(loaded.problems.map((p) => [p.code, p.pointer])).toEqual([
      ["schema-invalid-value", "/pipelines/0/steps/0/vram"],
    ]);
  });

  it("a duplicated step id is duplicate-step-id only, not a cycle", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: load, run: [echo, 1] }
            - { id: load, run: [echo, 2] }
            - { id: train, run: [echo, 3], needs: [load] }
    `);
    expect(loaded.problems.map((p) => p.code)).toEqual(["duplicate-step-id"]);
    const p = one(loaded.problems, "duplicate-step-id");
    expect([p.line, p.column]).toEqual([6, 15]);
  });
});
