/**
 * The executor's side of the slot lock: the order pipelines take their GPUs in, announcing a
 * wait only when there is one, naming who holds a GPU in events and hints, and reporting a wait
 * that ran past `--lock-timeout`.
 */
import type { GpuplanPlan, PlannedPipeline, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { HolderInfo, SlotLock } from "../lock/types.js";
import type { StepContext } from "./contexts.js";

/** The registry entries of a pipeline's GPUs, in UUID order (the global lock order). */
export function registryEntries(plan: GpuplanPlan, pipeline: PlannedPipeline): PlanRegistryEntry[] {
  const ids = new Set(pipeline.gpus);
  for (const s of pipeline.steps) if (s.uuid !== null && s.device !== "cpu") ids.add(s.device);
  return plan.registry
    .filter((r) => ids.has(r.gpu))
    .sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}

/**
 * `gpu.lock.wait` only when there is a wait: a free slot is granted within a turn of the event
 * loop, and announcing a wait for it would print "waiting" for every pipeline.
 */
export async function announceWait<T>(pending: Promise<T>, announce: () => void | Promise<void>): Promise<T> {
  let settled = false;
  const watched = pending.finally(() => {
    settled = true;
  });
  await Promise.race([watched.catch(() => undefined), new Promise((r) => setImmediate(r))]);
  if (!settled) void announce();
  return watched;
}

/** How long one look at the lock's holders serves every wait announced meanwhile. */
const HOLDERS_TTL_MS = 250;
const lastLook = new WeakMap<SlotLock, { at: number; slots: ReturnType<SlotLock["inspect"]> }>();

/**
 * The lock's slots, looked at once for every wait announced within HOLDERS_TTL_MS: a run's
 * pipelines all start at once, and hundreds of them waiting for a GPU would otherwise each read
 * every slot file.
 */
function inspectShared(lock: SlotLock): ReturnType<SlotLock["inspect"]> {
  const now = performance.now();
  const last = lastLook.get(lock);
  if (last && now - last.at < HOLDERS_TTL_MS) return last.slots;
  const slots = lock.inspect();
  lastLook.set(lock, { at: now, slots });
  return slots;
}

/** The holders of a GPU's slots as the view shows them; none when the lock cannot say. */
export async function holdersOf(lock: SlotLock, uuid: string) {
  try {
    return (await inspectShared(lock))
      .filter((s) => s.uuid === uuid && s.held && s.holder)
      .map((s) => ({
        pid: s.holder!.pid,
        pipeline: s.holder!.pipeline,
        step: s.holder!.step,
        since: s.holder!.since,
      }));
  } catch {
    return [];
  }
}

/** " (held by pid 123 plate-1/segment since …)" for a hint, or nothing. */
export function describeHolders(holders: readonly HolderInfo[]): string {
  if (holders.length === 0) return "";
  return ` (held by ${holders.map((h) => `pid ${h.pid} ${h.pipeline}${h.step ? `/${h.step}` : ""} since ${h.since}`).join(", ")})`;
}

/** A step that never started because its slot wait ran past `--lock-timeout`: it failed. */
export function reportLockTimeout(
  ctx: StepContext,
  pipeline: string,
  step: string,
  device: string,
  waitedMs: number,
  hint: string,
): void {
  ctx.emit({
    event: "gpu.step.end",
    pipeline,
    step,
    device,
    status: "lock-timeout",
    exitCode: null,
    signal: null,
    durationMs: Math.round(waitedMs),
    attempt: 1,
    hint,
    stderrTail: [],
  });
}
