import { displayCut } from "../text/safe-text.js";

/**
 * Why a committed plan differs from what compile writes now — in words a CI log reader can act on.
 * Each part of a plan that has a cause of its own is compared on its own (format, gpuplan version,
 * pipeline bytes, inventory, how the pipeline and inventory are recorded, settings); only a
 * difference none of them explains is put down to a hand edit.
 */
export function describeStaleness(currentText: string, expectedText: string): string {
  let current: Record<string, unknown>;
  try {
    current = JSON.parse(currentText) as Record<string, unknown>;
  } catch {
    return "it is not valid JSON (cut short, or edited by hand)";
  }
  const expected = JSON.parse(expectedText) as Record<string, unknown>;
  const get = (o: Record<string, unknown>, ...path: string[]): unknown =>
    path.reduce<unknown>(
      (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
      o,
    );
  const differs = (...path: string[]) =>
    JSON.stringify(get(current, ...path)) !== JSON.stringify(get(expected, ...path));
  const was = (...path: string[]) => shownValue(get(current, ...path));
  const now = (...path: string[]) => shownValue(get(expected, ...path));
  const reasons: string[] = [];
  if (differs("schema")) reasons.push(`its format is ${was("schema")}, now ${now("schema")}`);
  if (differs("gpuplanVersion"))
    reasons.push(`it was written by gpuplan ${was("gpuplanVersion")}, this is ${now("gpuplanVersion")}`);
  if (differs("source", "sha256")) reasons.push("the pipeline file changed");
  if (differs("inventory", "fingerprint") && !differs("inventory", "label"))
    reasons.push(
      `the inventory ${now("inventory", "label")} changed: ${inventoryDifference(current, expected)}`,
    );
  else if (differs("inventory", "fingerprint"))
    reasons.push(`the inventory changed (${was("inventory", "label")} → ${now("inventory", "label")})`);
  else if (differs("inventory", "label"))
    reasons.push(`it was compiled from ${was("inventory", "label")}, now from ${now("inventory", "label")}`);
  if (differs("source", "file")) {
    reasons.push(
      `it records the pipeline as ${was("source", "file")}, this compile as ${now("source", "file")} ` +
        "(paths are relative to the plan's folder: the plan or the pipeline moved, or an older gpuplan recorded the path as typed)",
    );
  }
  // Learned values (compile --history) are their own cause: the runs are named, never "by hand".
  if (reasons.length === 0) reasons.push(...historyDifference(current, expected));
  // The settings follow the pipeline file and the machine; with both unchanged, compile options did it.
  if (reasons.length === 0 && differs("settings")) reasons.push("it was compiled with other settings");
  // Only the warnings differ: a plan of an older gpuplan located them at their files as typed.
  if (reasons.length === 0 && differs("diagnostics") && sameBut(current, expected, "diagnostics"))
    reasons.push(
      "its warnings are not located as compile locates them now (at their files relative to the plan)",
    );
  return reasons.length ? reasons.join("; ") : "its content differs: it was edited by hand";
}

/**
 * A plan value as the message shows it. The plan under --check is outside data: a field may be
 * missing or hold an object, which String() would show as `undefined` or `[object Object]`, or be
 * a megabyte long, which the message (on the terminal, in a CI log) shows cut.
 */
function shownValue(value: unknown): string {
  if (value === undefined) return "(none)";
  return displayCut(typeof value === "string" && value !== "" ? value : JSON.stringify(value));
}

/**
 * What differs between two inventories of one label, from what a plan records of them: the GPU
 * count, then each GPU's model, memory and UUID. Saying only "target:x → target:x" left the reader
 * to diff the plans; the fingerprint's other facts (CPU cores and memory, compute capability, MIG)
 * are named as a group, as the plan keeps no copy of them.
 */
function inventoryDifference(current: Record<string, unknown>, expected: Record<string, unknown>): string {
  const count = (plan: Record<string, unknown>) => {
    const gpus = (plan.inventory as { gpus?: unknown } | undefined)?.gpus;
    return typeof gpus === "number" ? `${gpus} ${gpus === 1 ? "GPU" : "GPUs"}` : shownValue(gpus);
  };
  if (count(current) !== count(expected)) return `${count(current)}, now ${count(expected)}`;
  const was = registryOf(current);
  const changes: string[] = [];
  for (const gpu of registryOf(expected)) {
    const before = was.find((g) => g.gpu === gpu.gpu);
    for (const [field, words] of GPU_FACTS) {
      if (before && JSON.stringify(before[field]) !== JSON.stringify(gpu[field]))
        changes.push(
          `${shownValue(gpu.gpu)} ${words} ${shownValue(before[field])}, now ${shownValue(gpu[field])}`,
        );
    }
  }
  if (changes.length > 3) return `${changes.slice(0, 3).join(", ")} and ${changes.length - 3} more`;
  if (changes.length > 0) return changes.join(", ");
  return "facts the plan keeps no copy of (CPU cores or memory, a GPU's compute capability or MIG layout)";
}

/** The GPU facts a plan's registry records, with how a message names each. */
const GPU_FACTS = [
  ["name", "was"],
  ["memoryBytes", "had memoryBytes"],
  ["uuid", "had UUID"],
  ["backend", "had backend"],
] as const;

/** A plan's registry entries, read defensively (the plan under --check is outside data). */
function registryOf(plan: Record<string, unknown>): Record<string, unknown>[] {
  const registry = plan.registry;
  if (!Array.isArray(registry)) return [];
  return registry.filter((g): g is Record<string, unknown> => typeof g === "object" && g !== null);
}

/** Whether two plans are equal but for their top-level `key`. */
function sameBut(a: Record<string, unknown>, b: Record<string, unknown>, key: string): boolean {
  const { [key]: _a, ...restA } = a;
  const { [key]: _b, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}

/** The runs a plan's learned values came from (compile --history), sorted; none without --history. */
export function learnedRuns(plan: unknown): string[] {
  const runs = new Set<string>();
  for (const learned of learnedValues(plan))
    for (const value of Object.values(learned))
      if (value && typeof value === "object" && Array.isArray((value as { runs?: unknown }).runs))
        for (const run of (value as { runs: unknown[] }).runs) if (typeof run === "string") runs.add(run);
  return [...runs].sort();
}

/** Every step's `learned` object in a plan, read defensively (the plan under --check is outside data). */
function learnedValues(plan: unknown): object[] {
  const pipelines = (plan as { pipelines?: unknown } | null)?.pipelines;
  if (!Array.isArray(pipelines)) return [];
  return pipelines.flatMap((p) => {
    const steps = (p as { steps?: unknown } | null)?.steps;
    if (!Array.isArray(steps)) return [];
    return steps.flatMap((step) => {
      const learned = (step as { learned?: unknown } | null)?.learned;
      return learned && typeof learned === "object" ? [learned] : [];
    });
  });
}

/** A plan may name thousands of runs, or one a megabyte long: a message names a few, each cut. */
const RUNS_SHOWN = 5;

function shownRuns(ids: string[]): string {
  const shown = ids.slice(0, RUNS_SHOWN).map((id) => displayCut(id));
  return ids.length > RUNS_SHOWN
    ? `${shown.join(", ")} and ${ids.length - RUNS_SHOWN} more`
    : shown.join(", ");
}

function historyDifference(current: unknown, expected: unknown): string[] {
  const was = learnedRuns(current);
  const now = learnedRuns(expected);
  const runs = (ids: string[]) => `${ids.length === 1 ? "run" : "runs"} ${shownRuns(ids)}`;
  if (was.join() !== now.join()) {
    if (now.length === 0)
      return [`it was compiled with --history (learned from ${runs(was)}); this compile was not`];
    if (was.length === 0)
      return [`this compile learned from ${runs(now)} (--history); the plan was compiled without it`];
    return [`it learned from ${runs(was)}, this compile from ${runs(now)} (--history)`];
  }
  if (JSON.stringify(learnedValues(current)) !== JSON.stringify(learnedValues(expected)))
    return [`its learned values differ from what ${runs(now)} give now`];
  return [];
}
