/** What `--no-wait` says when it meets a busy GPU: who holds it, and what to do instead. */
import type { GpuBusyError } from "../run/lock/types.js";
import type { PlanRegistryEntry } from "../schema-types/plan.js";
import { escapeText } from "../text/safe-text.js";
import { shortUuids } from "./short-uuid.js";

/**
 * `registry` names the plan's GPUs, for the busy one's short UUID. Holders come from the lock
 * directory's info files, which any user can write: every string of theirs is escaped.
 */
export function busyGpuMessage(
  busy: GpuBusyError,
  registry: readonly Pick<PlanRegistryEntry, "gpu" | "uuid">[] = [],
): { message: string; hint: string } {
  const holders = busy.holders;
  const who = holders.length
    ? holders
        .map((h) => {
          const what = escapeText(`${h.pipeline}${h.step ? `/${h.step}` : ""}`);
          return `pid ${h.pid} (${what}, run ${escapeText(h.run)}, since ${escapeText(h.since)})`;
        })
        .join(", ")
    : "another process";
  const uuid = registry.find((g) => g.gpu === busy.gpu)?.uuid;
  const gpu = uuid
    ? `${escapeText(busy.gpu)} (${shortUuids(registry.map((g) => g.uuid))(uuid)})`
    : escapeText(busy.gpu);
  return {
    message: `GPU busy: ${gpu} is held by ${who}`,
    hint: "run without --no-wait to wait for it, or see gpuplan locks",
  };
}
