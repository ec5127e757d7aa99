/**
 * `gpuplan targets`: the inventory profiles for `compile --target` — the built-in ones, then the
 * custom ones (inventory files in .gpuplan/targets or --targets-dir). A custom file that is not an
 * inventory is reported (located; under --json in the document's `problems`) and the command exits
 * 1, after listing the others.
 */
import {
  listCustomTargets,
  refuseAmbiguousTarget,
  targetFolders,
  toTarget,
} from "../../inventory/custom-targets.js";
import { loadInventoryFile } from "../../inventory/load-inventory.js";
import { TARGETS, type Target } from "../../inventory/targets.js";
import { append } from "../../lists/append.js";
import { EXIT } from "../../problems/exit-codes.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import type { GpuplanTargets } from "../../schema-types/targets.js";
import type { SourceFile } from "../../source/source-file.js";
import { jsonText } from "../../text/json-text.js";
import { formatHuman } from "../../ui/problems/human.js";
import { formatTargets } from "../../ui/targets-table.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export default async function targets(options: { json?: boolean; targetsDir?: string }): Promise<number> {
  const custom: Target[] = [];
  const shadowed = new Set<Target>();
  const problems: Problem[] = [];
  const sources: SourceFile[] = [];
  for (const t of listCustomTargets(targetFolders(options.targetsDir, ["."]))) {
    refuseAmbiguousTarget(t);
    const loaded = await loadInventoryFile(t.file);
    if (loaded.source) sources.push(loaded.source);
    append(problems, loaded.problems);
    if (loaded.inventory && !hasErrors(loaded.problems)) {
      let target = toTarget(t.name, t.file, loaded.inventory);
      if (t.shadowed) {
        target = {
          ...target,
          description: `${target.description} (not used: a built-in target has this name)`,
        };
        shadowed.add(target);
      }
      custom.push(target);
    }
  }
  const all = [...TARGETS, ...custom];
  const exit = hasErrors(problems) ? EXIT.problems : EXIT.ok;
  const located =
    problems.length === 0 ? [] : (await import("../../source/locate.js")).locateProblems(problems, sources);
  if (options.json) {
    // The problems are part of the result, as in compile's JSON report: stderr stays quiet.
    const out: GpuplanTargets = {
      schema: "gpuplan/targets@1",
      targets: all,
      problems: located.map(toReportedProblem),
    };
    writeOut(`${jsonText(out, 2)}\n`);
    return exit;
  }
  writeOut(formatTargets(all, await paintFor("stdout"), shadowed));
  if (located.length > 0) writeErr(formatHuman(located, sources, await paintFor(), { seeAll: "--json" }));
  return exit;
}
