/**
 * The bytes of a plan file (format 2): the plan without its defaulted fields (plan-defaults.ts)
 * as compact JSON (src/text/compact-json.ts). compile writes them, `--check` compares them, and
 * a run keeps them as its copy of the plan; the same plan always gives the same bytes. They come
 * in pieces, a pipeline at a time, so a big plan is streamed to its file instead of being held
 * as one string beside the plan (docs/decisions/0015-compact-plans.md).
 */
import type { GpuplanPlan } from "../schema-types/plan.js";
import { valueText } from "../text/compact-json.js";
import { compactPipeline, gpuFacts, leaveOutDefaults } from "./plan-defaults.js";

/** The plan format gpuplan writes. */
export const PLAN_SCHEMA = "gpuplan/plan@2";

/** Whether a `schema` value names a plan format, this gpuplan's or any other. */
export const isPlanSchema = (schema: unknown): boolean =>
  typeof schema === "string" && /^gpuplan\/plan@\d+$/.test(schema);

/** About how much text a piece holds before it goes out. */
const PIECE = 1 << 16;

/** The plan as its file holds it (format 2, whichever format the plan was read from). */
export function planDocument(plan: GpuplanPlan): Record<string, unknown> {
  return { ...leaveOutDefaults(plan), schema: PLAN_SCHEMA };
}

/** The plan file's text, ending in a newline. */
export function planText(plan: GpuplanPlan): string {
  return [...planPieces(plan)].join("");
}

/**
 * The plan file's text in pieces, in order. The pipelines list always opens one pipeline per
 * line (no pipeline fits on one); each pipeline is made compact only while it is written.
 */
export function* planPieces(plan: GpuplanPlan): Generator<string> {
  const gpus = gpuFacts(plan.registry);
  const fields = Object.entries({ ...plan, schema: PLAN_SCHEMA }).filter(([, v]) => v !== undefined);
  let text = "{\n";
  for (const [i, [key, value]] of fields.entries()) {
    const head = `  ${JSON.stringify(key)}: `;
    if (key === "pipelines" && plan.pipelines.length > 0) {
      text += `${head}[\n`;
      const last = plan.pipelines.length - 1;
      for (const [j, p] of plan.pipelines.entries()) {
        text += `    ${valueText(compactPipeline(p, gpus), "    ")}${j < last ? ",\n" : "\n"}`;
        if (text.length >= PIECE) {
          yield text;
          text = "";
        }
      }
      text += "  ]";
    } else {
      text += head + valueText(value, "  ", undefined, head.length);
    }
    text += i < fields.length - 1 ? ",\n" : "\n";
  }
  yield `${text}}\n`;
}
