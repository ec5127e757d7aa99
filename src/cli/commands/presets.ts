/** `gpuplan presets`: the built-in device-map presets, as a table or as versioned JSON. */
import { listPresets } from "../../compile/device-map/index.js";
import type { GpuplanPresets } from "../../schema-types/presets.js";
import { jsonText } from "../../text/json-text.js";
import { formatPresets } from "../../ui/presets-table.js";
import { writeOut } from "../output.js";
import { paintFor } from "../paint.js";

/** List the presets on stdout; always succeeds. */
export default async function presets(options: { json?: boolean }): Promise<number> {
  const table = listPresets();
  if (options.json) {
    const out: GpuplanPresets = { schema: "gpuplan/presets@1", presets: table };
    writeOut(`${jsonText(out, 2)}\n`);
    return 0;
  }
  writeOut(formatPresets(table, await paintFor("stdout")));
  return 0;
}
