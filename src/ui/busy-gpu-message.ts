/** What `--no-wait` says when it meets a busy GPU: who holds it, and what to do instead. */
import type { GpuBusyError } from "../run/lock/types.js";

export function busyGpuMessage(busy: GpuBusyError): { message: string; hint: string } {
  const holders = busy.holders;
  const who = holders.length
    ? holders
        .map(
          (h) => `pid ${h.pid} (${h.pipeline}${h.step ? `/${h.step}` : ""}, run ${h.run}, since ${h.since})`,
        )
        .join(", ")
    : "another process";
  return {
    message: `GPU busy: ${busy.gpu} is held by ${who}`,
    hint: "run without --no-wait to wait for it, or see gpuplan locks",
  };
}
