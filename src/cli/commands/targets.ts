/** `gpuplan targets`: the built-in inventory profiles for `compile --target`. */
import { TARGETS } from "../../inventory/targets.js";
import type { GpuplanTargets } from "../../schema-types/targets.js";
import { formatTargets } from "../../ui/targets-table.js";
import { writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export default async function targets(options: { json?: boolean }): Promise<number> {
  if (options.json) {
    const out: GpuplanTargets = { schema: "gpuplan/targets@1", targets: [...TARGETS] };
    writeOut(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  writeOut(formatTargets(TARGETS, await paintFor(process.stdout)));
  return 0;
}
