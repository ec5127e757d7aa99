import { error, warning } from "../../problems/problem.js";
import { formatSize } from "../../units/size.js";
import { incomingConversions, transferMs } from "../conversions.js";
import { isGpuType } from "../memory-types.js";
import type { ResolvedStep } from "../model.js";
import type { Rule } from "./rule.js";

/**
 * Strict conversion policy: a GPU→GPU hand-off that cannot go through DLPack is a silent copy to
 * host memory and back; it is an error unless the pipeline allows host round trips. A CPU step
 * between two GPU steps bounces the data through the host: worth a warning.
 */
export const memoryConversions: Rule = ({ pipeline, file, report }) => {
  // With a duplicated id (its own problem) nobody knows which step a need means.
  if (new Set(pipeline.steps.map((s) => s.id)).size < pipeline.steps.length) return;
  const unknown = new Set(pipeline.steps.filter((s) => s.unknownMemoryType).map((s) => s.id));
  // Who needs each step, built once: a search per step is quadratic in a pipeline of many steps.
  const consumers = new Map<string, ResolvedStep[]>();
  for (const s of pipeline.steps)
    for (const need of new Set(s.needs)) consumers.set(need, [...(consumers.get(need) ?? []), s]);
  pipeline.steps.forEach((step, j) => {
    // A step with an unknown type was reported already; guessing its hand-offs would only mislead.
    if (unknown.has(step.id)) return;
    for (const c of incomingConversions(pipeline, j).filter((c) => !unknown.has(c.fromStep))) {
      if (c.kind !== "host-roundtrip") continue;
      const moved = c.bytes !== null ? ` (${formatSize(c.bytes)} each way, ~${transferMs(c)} ms)` : "";
      const what = `\`${c.from}\` output of step \`${c.fromStep}\` → \`${c.to}\` input of step \`${step.id}\``;
      if (pipeline.allowHostRoundtrip) {
        report(
          warning({
            code: "host-roundtrip-conversion",
            message: `${what} goes through host memory${moved}`,
            hint:
              c.bytes === null
                ? "declare `data` on the producing step to see the bytes moved"
                : "use frameworks that share GPU memory through DLPack (cupy, torch, tensorflow, jax) to avoid the copy",
            file,
            pointer: `${step.pointer}/memory`,
          }),
        );
      } else {
        report(
          error({
            code: "host-roundtrip-conversion",
            message: `${what} cannot go through DLPack and would be copied through host memory${moved}`,
            hint: "set `allow_host_roundtrip: true` on the pipeline to accept the copy, or convert inside one step",
            file,
            pointer: `${step.pointer}/memory`,
          }),
        );
      }
    }
    if (step.isGpu) return;
    const fromGpu = incomingConversions(pipeline, j).filter(
      (c) => isGpuType(c.from) && !unknown.has(c.fromStep),
    );
    const toGpu = (consumers.get(step.id) ?? []).filter(
      (s) => isGpuType(s.memory.input) && !unknown.has(s.id),
    );
    if (fromGpu.length > 0 && toGpu.length > 0) {
      report(
        warning({
          code: "gpu-host-bounce",
          message: `data leaves the GPU for host step \`${step.id}\` and goes back to the GPU for \`${toGpu[0]!.id}\``,
          hint: "if this step can work on GPU arrays, give it a GPU memory type to keep the data on the card",
          file,
          pointer: step.pointer,
          at: "key",
        }),
      );
    }
  });
};
