/**
 * Plan format 2 leaves out of each pipeline, step and conversion the fields whose value is what a
 * reader would assume: the schema's `default`, or what its `x-default` derives from the rest
 * (a step's device is its pipeline's GPU, its uuid that GPU's, …). Three quarters of a big plan
 * were such fields (docs/decisions/0015-compact-plans.md). `leaveOutDefaults` is the writer's
 * half, `fillDefaults` the reader's: the reader gives the code every field, in the schema's order,
 * so nothing past the reader knows the file was compact. A field is left out only when filling it
 * back gives the same value, so the two halves cannot disagree on a plan compile wrote.
 */
import { planSchema } from "../generated/schema-values.js";
import { isGpuType } from "../pipeline/memory-types.js";
import type {
  GpuplanPlan,
  PlannedPipeline,
  PlannedStep,
  PlanRegistryEntry,
  StepMemory,
} from "../schema-types/plan.js";

type Data = Record<string, unknown>;
type Def = keyof typeof planSchema.keys;

const { defaults, keys } = planSchema;

/** The values an `x-default` gives a pipeline's fields, from its other fields. */
function derivedPipeline(p: PlannedPipeline | Data): Data {
  const gpu = p.gpu as string | null;
  return {
    template: p.name,
    gpus: gpu === null ? [] : [gpu],
    reservationBytes: gpu === null ? 0 : p.peakVramBytes,
  };
}

/** What the registry says of each GPU, for the steps' derived fields. */
type GpuFacts = ReadonlyMap<string, Pick<PlanRegistryEntry, "uuid" | "memoryBudgetBytes">>;

/** The registry's GPUs by id, for compactPipeline. */
export const gpuFacts = (registry: readonly PlanRegistryEntry[]): GpuFacts =>
  new Map(registry.map((e) => [e.gpu, e]));

/**
 * The values an `x-default` gives a step's fields. Each is computed from fields filled before it
 * (schema defaults first, then in this order), so the reader can fill them one after the other.
 */
const STEP_RULES: readonly [
  keyof PlannedStep,
  (s: Data, p: PlannedPipeline, j: number, gpus: GpuFacts) => unknown,
][] = [
  ["gpu", (s) => stepUsesGpu(s.memory as StepMemory)],
  ["device", (s, p) => (s.gpu === true && p.gpu !== null ? p.gpu : "cpu")],
  ["uuid", (s, _p, _j, gpus) => (s.device === "cpu" ? null : (gpus.get(s.device as string)?.uuid ?? null))],
  [
    "memoryBudgetBytes",
    (s, p, _j, gpus) =>
      s.device === "cpu"
        ? null
        : s.exclusive === true
          ? leastBudget(p, s.device as string, gpus)
          : p.reservationBytes,
  ],
  ["source", (_s, p, j) => (p.source === undefined ? undefined : `${p.source}/steps/${j}`)],
];

/**
 * An exclusive step's budget: the least budget of its pipeline's GPUs (its own when the pipeline
 * lists none), as compile gives it — one limit that fits on each of the cards it sees.
 */
function leastBudget(p: PlannedPipeline, device: string, gpus: GpuFacts): number | null {
  const ids = p.gpus.length > 0 ? p.gpus : [device];
  const budgets = ids.map((id) => gpus.get(id)?.memoryBudgetBytes);
  return budgets.every((b) => b !== undefined) ? Math.min(...(budgets as number[])) : null;
}

const stepUsesGpu = (m: StepMemory) => [m.input, m.output, ...(m.uses ?? [])].some(isGpuType);

/** The fields `x-default` derives, per definition, as the code computes them (a test holds them to the schema). */
export const DERIVED_FIELDS = {
  PlannedPipeline: Object.keys(derivedPipeline({ name: "", gpu: null })),
  PlannedStep: STEP_RULES.map(([key]) => key),
};

// ---- the writer's half -------------------------------------------------------------------

/** The plan as format 2 writes it: the same object, with every defaulted field left out. */
export function leaveOutDefaults(plan: GpuplanPlan): Data {
  const gpus = gpuFacts(plan.registry);
  return { ...plan, pipelines: plan.pipelines.map((p) => compactPipeline(p, gpus)) };
}

/** One pipeline as format 2 writes it (a new object; the plan is not changed). */
export function compactPipeline(p: PlannedPipeline, gpus: GpuFacts): Data {
  const derived = derivedPipeline(p);
  const out = without(p, "PlannedPipeline", derived);
  out.steps = p.steps.map((s, j) => compactStep(s, p, j, gpus));
  return out;
}

function compactStep(s: PlannedStep, p: PlannedPipeline, j: number, gpus: GpuFacts): Data {
  const derived: Data = {};
  for (const [key, rule] of STEP_RULES) derived[key] = rule(s as unknown as Data, p, j, gpus);
  const out = without(s, "PlannedStep", derived);
  if ("memory" in out) out.memory = without(s.memory, "StepMemory");
  if ("conversions" in out) out.conversions = s.conversions.map((c) => without(c, "Conversion"));
  return out;
}

/** Each definition's schema defaults, looked up once per field of a big plan. */
const DEFAULTS = new Map(
  Object.keys(keys).map((def) => [
    def,
    new Map(Object.entries((defaults as Record<string, Data | undefined>)[def] ?? {})),
  ]),
);

/** `value` without the fields equal to their schema default or to what `derived` gives them. */
function without(value: object, def: Def, derived?: Data): Data {
  const own = DEFAULTS.get(def)!;
  const out: Data = {};
  for (const key in value) {
    const v = (value as Data)[key];
    if (own.has(key) && sameJson(v, own.get(key))) continue;
    const d = derived?.[key];
    if (d !== undefined && sameJson(v, d)) continue;
    out[key] = v;
  }
  return out;
}

/** Equal as JSON: the defaults are small (null, false, {}, [], a two-key object). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson((a as Data)[k], (b as Data)[k]))
  );
}

// ---- the reader's half -------------------------------------------------------------------

/**
 * Every field a plan left out, filled back, each object's keys in the schema's order. Takes a plan
 * the schema validated (format 1 has every field already, and keeps its values).
 */
export function fillDefaults(plan: GpuplanPlan): GpuplanPlan {
  const gpus = gpuFacts(plan.registry);
  plan.pipelines = plan.pipelines.map((p) =>
    fillPipeline(p as unknown as Data, gpus),
  ) as GpuplanPlan["pipelines"];
  return plan;
}

function fillPipeline(raw: Data, gpus: GpuFacts): PlannedPipeline {
  const p = filled(raw, "PlannedPipeline", derivedPipeline(raw)) as unknown as PlannedPipeline;
  p.steps = p.steps.map((s, j) => fillStep(s as unknown as Data, p, j, gpus)) as PlannedPipeline["steps"];
  return p;
}

function fillStep(raw: Data, p: PlannedPipeline, j: number, gpus: GpuFacts): PlannedStep {
  const s = filled(raw, "PlannedStep", {});
  s.memory = filled(s.memory as Data, "StepMemory", {});
  s.conversions = (s.conversions as Data[]).map((c) => filled(c, "Conversion", {}));
  for (const [key, rule] of STEP_RULES) {
    const value = key in raw ? undefined : rule(s, p, j, gpus);
    if (value !== undefined) s[key] = value;
  }
  return ordered(s, "PlannedStep") as unknown as PlannedStep;
}

/** `raw` with its absent fields set to their schema default (a fresh copy) or derived value. */
function filled(raw: Data, def: Def, derived: Data): Data {
  const own = (defaults as Record<string, Data | undefined>)[def] ?? {};
  const out: Data = { ...raw };
  for (const key of Object.keys(own)) if (!(key in out)) out[key] = copy(own[key]);
  for (const [key, v] of Object.entries(derived)) if (!(key in out) && v !== undefined) out[key] = v;
  return ordered(out, def);
}

/** The same fields in the schema's order (a format 1 plan keeps its own order where it differs). */
function ordered(value: Data, def: Def): Data {
  const out: Data = {};
  for (const key of keys[def]) if (key in value) out[key] = value[key];
  for (const key of Object.keys(value)) if (!(key in out)) out[key] = value[key];
  return out;
}

const copy = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(copy)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]))
      : v;
