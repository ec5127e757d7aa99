// The schemas are the only source of the defaults, enumerations and patterns the code uses
// (issue: nothing the schemas define is restated by hand). These tests read the schema files
// themselves, not the generated module, so a value hard-coded in the code that disagrees with its
// schema fails here.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exportName, schemaValues } from "../../scripts/schema-values.mjs";
import { SCHEMAS } from "../../scripts/schemas.mjs";
import { compilePlan } from "../../src/compile/compile.js";
import * as generated from "../../src/generated/schema-values.js";
import { expandShortInventory } from "../../src/inventory/short-form.js";
import { MEMORY_TYPES } from "../../src/pipeline/memory-types.js";
import { STRATEGY_FRACTIONS } from "../../src/pipeline/model.js";
import type { ShortInventory } from "../../src/schema-types/inventory.js";
import { parseDuration } from "../../src/units/duration.js";
import { parseSize } from "../../src/units/size.js";
import { choose, inventory } from "../helpers/inventory.js";
import { check } from "../helpers/pipeline.js";

const ROOT = join(import.meta.dirname, "../..");
type Json = Record<string, unknown>;
const schemaFiles = readdirSync(join(ROOT, "schemas")).filter((f) => f.endsWith(".schema.json"));
const schema = (file: string): Json => JSON.parse(readFileSync(join(ROOT, "schemas", file), "utf8")) as Json;

/** Every node of a schema with its JSON pointer. */
function* walk(node: unknown, pointer = ""): Generator<[string, Json]> {
  if (node === null || typeof node !== "object") return;
  if (!Array.isArray(node)) yield [pointer, node as Json];
  for (const [key, child] of Object.entries(node)) yield* walk(child, `${pointer}/${key}`);
}

/** Pointers of every property that states a `default`. */
const defaultsIn = (file: string): string[] =>
  [...walk(schema(file))]
    .filter(([p, n]) => /\/properties\/[^/]+$/.test(p) && "default" in n)
    .map(([p]) => p);

describe("generated schema values", () => {
  it.each(SCHEMAS)("src/generated/schema-values.js holds what $file says", ({ name, file }) => {
    const values = (generated as Record<string, unknown>)[exportName(name)];
    expect(values).toEqual(schemaValues(JSON.parse(readFileSync(join(ROOT, file), "utf8"))));
  });
});

/**
 * Omitting a key must compile exactly like writing its schema default. Each case is a pipeline file
 * in which the key is observable (a wrong default changes the plan or the problems), and where
 * to write the key.
 */
const DGX = choose(inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 2 }]));
const MIXED = choose(
  inventory([
    { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 1 },
    { name: "AMD Instinct MI300X", memory: "192GiB", count: 1, backend: "rocm" },
  ]),
);
const step = (over: Json = {}): Json => ({
  id: "a",
  run: ["echo", "hi"],
  memory: "torch",
  vram: "4GiB",
  ...over,
});
const file = (pipeline: Json = {}, top: Json = {}): Json => ({
  version: 1,
  ...top,
  pipelines: [{ name: "p", steps: [step()], ...pipeline }],
});
const PIPELINE_CASES: Record<string, { base: Json; at: (f: Json) => Json; choice?: typeof DGX }> = {
  "/properties/name": { base: file(), at: (f) => f },
  "/$defs/Registry/properties/memory_strategy": {
    base: file({}, { registry: {} }),
    at: (f) => f.registry as Json,
  },
  "/$defs/Registry/properties/max_warm_per_gpu": {
    base: file({}, { registry: {} }),
    at: (f) => f.registry as Json,
  },
  "/$defs/Registry/properties/platform_priority": {
    base: file({}, { registry: {} }),
    at: (f) => f.registry as Json,
    choice: MIXED,
  },
  "/$defs/Registry/properties/context_reserve": {
    base: file(
      // Components fill the step's 60 GiB minus the context reserve: 58 GiB fit beside a 1 GiB
      // reserve, not beside a 4 GiB one.
      {
        steps: [
          step({ exclusive: true, vram: "60GiB", device_map: { components: { a: "30GiB", b: "28GiB" } } }),
        ],
      },
      { registry: {} },
    ),
    at: (f) => f.registry as Json,
  },
  "/$defs/Pipeline/properties/gpus": { base: file(), at: (f) => (f.pipelines as Json[])[0]! },
  "/$defs/SlurmSettings/properties/time_factor": {
    base: file({}, { registry: { executor: { slurm: {} } } }),
    at: (f) => ((f.registry as Json).executor as Json).slurm as Json,
  },
  "/$defs/SlurmSettings/properties/shards": {
    base: file({}, { registry: { executor: { slurm: {} } } }),
    at: (f) => ((f.registry as Json).executor as Json).slurm as Json,
  },
  "/$defs/Pipeline/properties/allow_host_roundtrip": {
    base: file({ steps: [step({ memory: "cupy" }), step({ id: "b", memory: "pyclesperanto" })] }),
    at: (f) => (f.pipelines as Json[])[0]!,
  },
  "/$defs/Step/properties/shell": { base: file(), at: (f) => stepOf(f) },
  "/$defs/Step/properties/exclusive": { base: file(), at: (f) => stepOf(f) },
  "/$defs/Step/properties/estimate": { base: file(), at: (f) => stepOf(f) },
  "/$defs/OnOom/properties/retries": {
    base: file({ steps: [step({ on_oom: {} })] }),
    at: (f) => stepOf(f).on_oom as Json,
  },
  "/$defs/Worker/properties/ready_timeout": {
    base: file({ steps: [step({ run: undefined, worker: { run: ["python3", "w.py"] } })] }),
    at: (f) => stepOf(f).worker as Json,
  },
  "/$defs/DeviceMap/properties/strategy": {
    base: file({
      gpus: 2,
      steps: [
        step({ vram: "8GiB", device_map: { components: { a: "3GiB", b: "3GiB", c: "2GiB", d: "2GiB" } } }),
      ],
    }),
    at: (f) => stepOf(f).device_map as Json,
  },
  "/$defs/DeviceMap/properties/allow_disk": {
    base: file({ steps: [step({ device_map: { components: { huge: "900GiB" } } })] }),
    at: (f) => stepOf(f).device_map as Json,
  },
  "/$defs/Limits/properties/max_pipelines": {
    base: file({ name: "p{x}", matrix: { x: [1, 2] } }, { limits: {} }),
    at: (f) => f.limits as Json,
  },
  "/$defs/Limits/properties/max_steps": {
    base: file({ name: "p{x}", matrix: { x: [1, 2] } }, { limits: {} }),
    at: (f) => f.limits as Json,
  },
};
function stepOf(f: Json): Json {
  return ((f.pipelines as Json[])[0]!.steps as Json[])[0]!;
}

/** What compile makes of a pipeline file, without what depends on its bytes and line numbers. */
function outcome(f: Json, choice = DGX) {
  const result = compilePlan(check(JSON.stringify(f, null, 2)), choice);
  return {
    plan: result.plan && {
      ...result.plan,
      source: { ...result.plan.source, sha256: "" },
      diagnostics: result.plan.diagnostics.map(({ line: _l, column: _c, ...d }) => d),
    },
    problems: result.problems.map((p) => [p.code, p.severity, p.pointer, p.message]),
  };
}

const schemaDefault = (file: string, pointer: string): unknown => {
  let node: unknown = schema(file);
  for (const key of pointer.slice(1).split("/")) node = (node as Json)[key];
  return (node as Json).default;
};

describe("defaults come from the schema", () => {
  it("every pipeline default the schema states has a case below, and no case is stale", () => {
    expect(defaultsIn("pipeline.schema.json").sort()).toEqual(Object.keys(PIPELINE_CASES).sort());
  });

  it.each(Object.entries(PIPELINE_CASES))(
    "omitting %s compiles like writing its schema default",
    (pointer, c) => {
      const key = pointer.split("/").pop()!;
      const value = schemaDefault("pipeline.schema.json", pointer);
      const explicit = structuredClone(c.base);
      c.at(explicit)[key] = value;
      const omitted = outcome(c.base, c.choice);
      expect(outcome(explicit, c.choice)).toEqual(omitted);
      // The case must be able to tell: some other valid value gives a different outcome.
      const other = OTHER_VALUES[pointer];
      const changed = structuredClone(c.base);
      c.at(changed)[key] = other;
      expect(
        outcome(changed, c.choice),
        `${pointer}: ${JSON.stringify(other)} should change the outcome`,
      ).not.toEqual(omitted);
    },
  );

  it("every inventory short-form default is the one the expansion applies", () => {
    expect(defaultsIn("inventory.schema.json").sort()).toEqual([
      "/$defs/ShortCpu/properties/memory",
      "/$defs/ShortCpu/properties/model",
      "/$defs/ShortGpu/properties/backend",
      "/$defs/ShortGpu/properties/count",
    ]);
    const at = (pointer: string) => schemaDefault("inventory.schema.json", pointer);
    const bare: ShortInventory = { gpus: [{ name: "X", memory: "8GiB" }], cpu: { threads: 4 } };
    const explicit: ShortInventory = {
      gpus: [
        {
          name: "X",
          memory: "8GiB",
          count: at("/$defs/ShortGpu/properties/count") as number,
          backend: at("/$defs/ShortGpu/properties/backend") as "cuda",
        },
      ],
      cpu: {
        threads: 4,
        memory: at("/$defs/ShortCpu/properties/memory") as number,
        model: at("/$defs/ShortCpu/properties/model") as string,
      },
    };
    expect(expandShortInventory(bare, "file", "s")).toEqual(expandShortInventory(explicit, "file", "s"));
  });
});

/** For each default, a different valid value that its case can tell apart. */
const OTHER_VALUES: Record<string, unknown> = {
  "/properties/name": "other",
  "/$defs/Limits/properties/max_pipelines": 1,
  "/$defs/Limits/properties/max_steps": 1,
  "/$defs/Registry/properties/memory_strategy": "conservative",
  "/$defs/Registry/properties/max_warm_per_gpu": 0,
  "/$defs/Registry/properties/platform_priority": ["rocm", "cuda", "cpu"],
  "/$defs/Registry/properties/context_reserve": "4GiB",
  "/$defs/SlurmSettings/properties/time_factor": 5,
  "/$defs/SlurmSettings/properties/shards": false,
  "/$defs/Pipeline/properties/gpus": 2,
  "/$defs/Pipeline/properties/allow_host_roundtrip": true,
  "/$defs/Step/properties/shell": true,
  "/$defs/Step/properties/exclusive": true,
  "/$defs/Step/properties/estimate": "2h",
  "/$defs/OnOom/properties/retries": 2,
  "/$defs/Worker/properties/ready_timeout": "10m",
  "/$defs/DeviceMap/properties/strategy": "balanced",
  "/$defs/DeviceMap/properties/allow_disk": true,
};

describe("enumerations and patterns are defined once", () => {
  it("no enumeration is written out twice across the schemas (a second use is a $ref)", () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const f of schemaFiles) {
      for (const [pointer, node] of walk(schema(f))) {
        if (!Array.isArray(node.enum)) continue;
        const key = JSON.stringify(node.enum);
        if (seen.has(key)) twice.push(`${f}#${pointer} repeats ${seen.get(key)}`);
        else seen.set(key, `${f}#${pointer}`);
      }
    }
    expect(twice).toEqual([]);
  });

  it("no string pattern is written out twice across the schemas", () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const f of schemaFiles) {
      for (const [pointer, node] of walk(schema(f))) {
        if (typeof node.pattern !== "string" || pointer.endsWith("/propertyNames")) continue;
        if (seen.has(node.pattern)) twice.push(`${f}#${pointer} repeats ${seen.get(node.pattern)}`);
        else seen.set(node.pattern, `${f}#${pointer}`);
      }
    }
    expect(twice).toEqual([]);
  });

  it("the plan's and the compile report's problems are one shared definition", () => {
    const plan = schema("plan.schema.json") as { properties: { diagnostics: { items: Json } } };
    const report = schema("compile-report.schema.json") as { properties: { problems: { items: Json } } };
    expect(plan.properties.diagnostics.items).toEqual({ $ref: "problem.schema.json" });
    expect(report.properties.problems.items).toEqual({ $ref: "problem.schema.json" });
  });

  const pipelineDefs = (schema("pipeline.schema.json") as { $defs: Record<string, Json> }).$defs;
  const schemaSize = new RegExp(
    ((pipelineDefs.Size!.anyOf as Json[])[1] as { pattern: string }).pattern,
    "u",
  );
  const schemaDuration = new RegExp(
    ((pipelineDefs.Duration!.anyOf as Json[])[1] as { pattern: string }).pattern,
    "u",
  );
  const sizeLike = fc.stringMatching(
    /^ ?[0-9]{1,3}(\.[0-9]{1,2})? ?(B|kB|KB|KiB|MB|MiB|GB|GiB|TB|TiB|gb|Gib|PB|x)? ?$/,
  );
  const durationLike = fc.stringMatching(/^ ?[0-9]{1,4}(\.[0-9]{1,2})? ?(ms|s|m|h|d|M|S|min|w|x)? ?$/);

  it("parseSize accepts a text exactly when the schema's Size pattern does (or it is plain bytes)", () => {
    fc.assert(
      fc.property(sizeLike, (text) => {
        const t = text.trim();
        expect(parseSize(text) !== undefined).toBe(schemaSize.test(t) || /^[0-9]+$/.test(t));
      }),
    );
  });

  it("parseDuration accepts a text exactly when the schema's Duration pattern does (or it is plain ms), up to the schema's 365 days", () => {
    const unitMs: Record<string, number> = { ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5 };
    const most = ((pipelineDefs.Duration!.anyOf as Json[])[0] as { maximum: number }).maximum;
    expect(most).toBe(365 * 864e5);
    fc.assert(
      fc.property(durationLike, (text) => {
        const t = text.trim();
        const shaped = schemaDuration.test(t) || /^[0-9]+$/.test(t);
        const [, n = "0", unit = "ms"] = /^([0-9.]+)\s*([a-z]*)$/.exec(t) ?? [];
        const within = Math.round(Number(n) * (unitMs[unit] ?? 1)) <= most;
        expect(parseDuration(text) !== undefined).toBe(shaped && within);
      }),
    );
  });

  it("the words in the schema agree with the code's tables", () => {
    const strategy = pipelineDefs.MemoryStrategy!.description as string;
    for (const [name, fraction] of Object.entries(STRATEGY_FRACTIONS))
      expect(strategy).toContain(`${name} ${fraction.toFixed(2)}`);
    const memory = pipelineDefs.Memory!.description as string;
    for (const type of MEMORY_TYPES) expect(memory).toContain(type);
  });
});
