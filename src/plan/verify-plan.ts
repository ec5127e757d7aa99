/**
 * Before running, every GPU the selected pipelines use is bound to a live GPU (bind-gpus.ts): the
 * same UUID when it is here, else (unless `--bind exact`) a free GPU of the same kind. The plan
 * the run then carries names the bound GPUs' UUIDs, so the slot lock, the step environment and the
 * events all speak of the real cards. A GPU nothing can stand in for, or a budget the bound card
 * cannot hold, is an error before anything starts: never run on the wrong card. A card detection
 * could not see because the driver did not answer in time (a probe timed out) is said as that —
 * the machine may well be unchanged — not as a missing card.
 */
import type { GpuInfo, Inventory, ProbeReport } from "../inventory/types.js";
import { notAddressable, visibleName } from "../inventory/visible-name.js";
import { error, type Problem } from "../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline, PlanRegistryEntry } from "../schema-types/plan.js";
import { formatSize } from "../units/size.js";
import {
  type BindMode,
  bindGpus,
  type GpuBinding,
  type LiveGpu,
  MEMORY_TOLERANCE,
  type WantedGpu,
} from "./bind-gpus.js";

export interface VerifyContext {
  /** Where the plan came from, for messages. */
  planFile: string;
  /** The command that makes a fresh plan, for hints. */
  recompile: string;
  /** The command that plans for this very machine and runs, for a plan whose GPUs it does not have. */
  recompileHere?: string;
  /** Default `auto`. */
  mode?: BindMode;
  /** UUIDs of live GPUs whose slots are all held by other runs: replacements avoid them. */
  busy?: ReadonlySet<string>;
}

export interface BoundPlan {
  /** The plan with the bound GPUs' UUIDs, PCI ids, totals and CPUs in place of the planned ones. */
  plan: GpuplanPlan;
  bindings: GpuBinding[];
  problems: Problem[];
}

/** GPU ids (cuda:N, cuda:N/migK, rocm:N) the pipelines use. */
export function gpusUsed(pipelines: readonly PlannedPipeline[]): string[] {
  const ids = new Set<string>();
  for (const p of pipelines) {
    for (const g of p.gpus) ids.add(g);
    for (const s of p.steps) if (s.uuid !== null && s.device !== "cpu") ids.add(s.device);
  }
  return [...ids].sort();
}

/** Bind the GPUs of the selected pipelines to this machine's; problems for what cannot be bound. */
export function bindPlan(
  plan: GpuplanPlan,
  pipelines: readonly PlannedPipeline[],
  inventory: Inventory,
  context: VerifyContext,
): BoundPlan {
  const problems: Problem[] = [];
  const wanted: WantedGpu[] = [];
  for (const id of gpusUsed(pipelines)) {
    const entry = plan.registry.find((r) => r.gpu === id);
    if (entry) {
      wanted.push(wantedOf(entry));
      continue;
    }
    problems.push(
      error({
        code: "plan-unknown-gpu",
        message: `the plan uses ${id} but its registry does not list it`,
        hint: `the plan is damaged; ${context.recompile}`,
        file: context.planFile,
      }),
    );
  }
  const mode = context.mode ?? "auto";
  const busy = context.busy ?? new Set<string>();
  // A GPU no *_VISIBLE_DEVICES value can name alone is never bound: its steps would see no GPU.
  const visibleAs = new Map(inventory.gpus.map((g) => [g.uuid, visibleName(g, inventory.gpus)]));
  const hidden = inventory.gpus.filter((g) => visibleAs.get(g.uuid) === null);
  const live = inventory.gpus.filter((g) => visibleAs.get(g.uuid) !== null).map((g) => liveOf(g, busy));
  const { bindings, unbound } = bindGpus(wanted, live, mode);
  const timedOut = inventory.probes?.find((p) => p.status === "timeout");
  problems.push(
    ...(timedOut && unbound.length > 0
      ? [probeTimeoutProblem(timedOut, unbound, context)]
      : unboundProblems(unbound, live, bindings, mode, context, hidden.length)),
  );
  if (unbound.length > 0)
    problems.push(...notAddressable(hidden).map((p) => error({ ...p, file: context.planFile })));
  for (const b of bindings) {
    const entry = plan.registry.find((r) => r.gpu === b.planGpu)!;
    const fits = Math.floor(b.live.memoryBytes * plan.settings.memoryFraction);
    if (fits < entry.memoryBudgetBytes * (1 - MEMORY_TOLERANCE)) {
      problems.push(
        error({
          code: "gpu-budget-no-longer-fits",
          message:
            `${b.planGpu} (${b.live.uuid}) now has ${formatSize(b.live.memoryBytes)}; ` +
            `${plan.settings.memoryFraction} of it is ${formatSize(fits)}, less than the plan's budget of ${formatSize(entry.memoryBudgetBytes)}`,
          hint: `the machine changed since the plan was made; recompile against it: ${context.recompile}`,
          file: context.planFile,
        }),
      );
    }
  }
  const infoOf = new Map(inventory.gpus.map((g) => [g.uuid, g]));
  return { plan: withBindings(plan, bindings, infoOf, visibleAs), bindings, problems };
}

function wantedOf(entry: PlanRegistryEntry): WantedGpu {
  return {
    id: entry.gpu,
    uuid: entry.uuid,
    name: entry.name,
    backend: entry.backend,
    memoryBytes: entry.memoryBytes,
    computeCapability: entry.computeCapability ?? null,
  };
}

function liveOf(g: GpuInfo, busy: ReadonlySet<string>): LiveGpu {
  return {
    id: g.id,
    uuid: g.uuid,
    name: g.name,
    backend: g.backend,
    pciBusId: g.pciBusId,
    memoryBytes: g.memoryBytes,
    computeCapability: g.computeCapability,
    busy: busy.has(g.uuid),
  };
}

/**
 * What is missing, by kind: "needs 8 × NVIDIA H100 80GB HBM3 (79.6 GiB, compute capability 9.0);
 * this machine has 4 of them", with the GPUs it does have, and how to recompile for them.
 */
function unboundProblems(
  unbound: readonly WantedGpu[],
  live: readonly LiveGpu[],
  bindings: readonly GpuBinding[],
  mode: BindMode,
  context: VerifyContext,
  hidden: number,
): Problem[] {
  if (unbound.length === 0) return [];
  const instead = context.recompileHere
    ? `run the pipeline file instead, which plans for this machine and leaves the plan as it is: ${context.recompileHere}`
    : `plan for it: ${context.recompile}`;
  const replan = `${instead} (or check CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES in this shell)`;
  const hint = `this machine is not of the kind the plan was made for; ${replan}`;
  if (mode === "exact") {
    // A GPU of the planned model may be here under another UUID: the machine is of the plan's
    // kind, and only --bind exact keeps it from being used.
    const taken = new Set(bindings.map((b) => b.live.uuid));
    const standIns = bindGpus(
      unbound,
      live.filter((g) => !taken.has(g.uuid)),
      "auto",
    ).bindings;
    return unbound.map((w) => {
      const sameIndex = live.find((g) => g.id === w.id);
      const standIn = standIns.find((b) => b.planGpu === w.id)?.live;
      return error({
        code: "gpu-missing",
        message:
          `${w.id} (${w.name}, ${w.uuid}) from the plan is not visible on this machine, and --bind exact takes no replacement` +
          (sameIndex ? `; ${w.id} is now ${sameIndex.name} (${sameIndex.uuid})` : ""),
        hint: standIn
          ? `a GPU of its model is here (${standIn.id}, ${standIn.uuid}): without --bind exact the run binds to it; or ${replan}`
          : hint,
        file: context.planFile,
      });
    });
  }
  const kinds = new Map<string, WantedGpu[]>();
  for (const w of unbound) {
    const key = `${w.backend}\0${w.name}\0${w.computeCapability ?? ""}\0${w.memoryBytes}`;
    kinds.set(key, [...(kinds.get(key) ?? []), w]);
  }
  const unnamed = `${hidden} GPU(s) that no step can be shown alone, see gpu-not-addressable`;
  const here =
    hidden === 0
      ? describeLive(live)
      : live.length === 0
        ? `it has ${unnamed}`
        : `${describeLive(live)}; and ${unnamed}`;
  return [...kinds.values()].map((ws) => {
    const w = ws[0]!;
    const needed = ws.length + bindings.filter((b) => sameKind(b, w)).length;
    const matching = live.filter((g) => g.name.trim().toLowerCase() === w.name.trim().toLowerCase());
    const cc = w.computeCapability ? `, compute capability ${w.computeCapability}` : "";
    return error({
      code: "gpu-missing",
      message:
        `the plan needs ${needed} × ${w.name} (${formatSize(w.memoryBytes)}${cc}) for ${ws.map((x) => x.id).join(", ")}${needed > ws.length ? " and the GPUs bound already" : ""}; ` +
        `this machine has ${matching.length === 0 ? "none" : `${matching.length} that could stand in`} (${here})`,
      hint,
      file: context.planFile,
    });
  });
}

const sameKind = (b: GpuBinding, w: WantedGpu): boolean =>
  b.live.backend === w.backend && b.live.name.trim().toLowerCase() === w.name.trim().toLowerCase();

/** "8 × NVIDIA A100-SXM4-80GB (80 GiB)", or "no GPUs visible". */
function describeLive(live: readonly LiveGpu[]): string {
  if (live.length === 0) return "no GPUs visible";
  const counts = new Map<string, number>();
  for (const g of live) {
    const key = `${g.name} (${formatSize(g.memoryBytes)})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return `it has ${[...counts].map(([k, n]) => `${n} × ${k}`).join(", ")}`;
}

/** The plan with each bound registry entry and step naming its live GPU. */
function withBindings(
  plan: GpuplanPlan,
  bindings: readonly GpuBinding[],
  infoOf: ReadonlyMap<string, GpuInfo>,
  visibleAsOf: ReadonlyMap<string, string | null>,
): GpuplanPlan {
  const byGpu = new Map(bindings.map((b) => [b.planGpu, b]));
  // The live card's index, never the planned one: indices are this machine's, and the plan's
  // may come from another (or from before the card moved).
  const visibleAs = (e: PlanRegistryEntry): string | undefined => {
    const b = byGpu.get(e.gpu);
    if (!b) return e.visibleAs;
    const name = visibleAsOf.get(b.live.uuid);
    return name === null || name === undefined || name === b.live.uuid ? undefined : name;
  };
  if (bindings.every((b) => !b.replaced) && plan.registry.every((e) => visibleAs(e) === e.visibleAs))
    return plan;
  const registry = plan.registry.map((e) => {
    const b = byGpu.get(e.gpu);
    const { cpuAffinity: planned, visibleAs: _planned, ...rest } = e;
    const name = visibleAs(e);
    const named = name === undefined ? {} : { visibleAs: name };
    if (!b?.replaced) return { ...rest, ...(planned && { cpuAffinity: planned }), ...named };
    const affinity = infoOf.get(b.live.uuid)?.cpuAffinity;
    return {
      ...rest,
      uuid: b.live.uuid,
      pciBusId: b.live.pciBusId,
      memoryBytes: b.live.memoryBytes,
      ...(affinity?.length ? { cpuAffinity: affinity } : {}),
      ...named,
    };
  });
  const pipelines = plan.pipelines.map((p) => ({
    ...p,
    steps: p.steps.map((s) => {
      const b = byGpu.get(s.device);
      return b?.replaced && s.uuid !== null ? { ...s, uuid: b.live.uuid } : s;
    }) as PlannedPipeline["steps"],
  }));
  return { ...plan, registry, pipelines };
}

/** Plan GPUs nothing was bound to because the driver did not answer in time: said as that. */
function probeTimeoutProblem(
  timedOut: ProbeReport,
  unbound: readonly WantedGpu[],
  context: VerifyContext,
): Problem {
  // The limit, as detection's report states it (the probe's own duration is the time it ran).
  const limit = /within ([\d.]+ s)/.exec(timedOut.message)?.[1];
  const seconds = limit ? ` within ${limit}` : " in time";
  return error({
    code: "gpu-probe-timeout",
    message:
      `the GPU driver did not answer${seconds}, so ${unbound.map((w) => `${w.id} (${w.name}, ${w.uuid})`).join(", ")} from the plan could not be checked ` +
      `(${timedOut.name}: ${timedOut.message})`,
    hint:
      timedOut.hint ??
      "the driver may be busy or wedged (does nvidia-smi answer?); try again, or see gpuplan detect",
    file: context.planFile,
  });
}
