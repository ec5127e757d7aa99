/**
 * The node type an export asks for shares of: the inventory given with --inventory, else the one
 * the plan was compiled against when it can be found again (`target:NAME`, or `file:PATH`
 * beside the caller or the plan, with the same fingerprint). Never a guess: an inventory whose
 * fingerprint differs from the plan's is used only when named explicitly, with a warning.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { inventoryFingerprint } from "../inventory/fingerprint.js";
import { targetInventory } from "../inventory/load-inventory.js";
import { expandShortInventory, INVENTORY_FILE_SEED } from "../inventory/short-form.js";
import type { Inventory, ShortInventory } from "../inventory/types.js";
import { realPlanFolder } from "../plan/plan-paths.js";
import { UsageError } from "../problems/errors.js";
import { hasErrors, type Problem, warning } from "../problems/problem.js";
import { schemaProblems } from "../problems/schema-errors.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { parseSource, readSourceText, type SourceFile } from "../source/source-file.js";
import { displayText } from "../text/safe-text.js";
import { shellWord } from "../text/shell-word.js";
import { type NodeShape, nodeShape } from "./node-shape.js";

export interface LoadedNodeShape {
  node: NodeShape | null;
  problems: Problem[];
}

export async function loadNodeShape(
  plan: GpuplanPlan,
  planFile: string,
  explicit: string | undefined,
  cwd: string,
): Promise<LoadedNodeShape> {
  if (explicit !== undefined) {
    const loaded = await readInventory(explicit);
    if (hasErrors(loaded.problems) || !loaded.inventory) {
      throw new UsageError(
        `--inventory ${explicit}: not an inventory (${loaded.problems
          .filter((p) => p.severity === "error")
          .map((p) => p.message)
          .join("; ")})`,
        "invalid-inventory",
        "give the file gpuplan detect --slurm --save wrote, or one compile --inventory reads",
      );
    }
    const problems = [
      ...loaded.problems,
      ...(inventoryFingerprint(loaded.inventory) === plan.inventory.fingerprint
        ? []
        : [
            warning({
              code: "slurm-inventory-mismatch",
              message: `the plan was compiled against ${displayText(plan.inventory.label, 120)}, not against ${explicit}: its budgets may not fit these nodes`,
              hint: `recompile for the node type: gpuplan compile PIPELINE --inventory ${shellWord(explicit)} -o PLAN`,
            }),
          ]),
    ];
    return { node: nodeShape(loaded.inventory, `inventory ${explicit}`, loaded.slurm), problems };
  }
  const label = plan.inventory.label;
  if (label.startsWith("target:")) {
    try {
      const choice = targetInventory(label.slice("target:".length));
      if (choice.inventory && inventoryFingerprint(choice.inventory) === plan.inventory.fingerprint)
        return { node: nodeShape(choice.inventory, `target ${label.slice(7)}`), problems: [] };
    } catch {
      // A target this gpuplan does not have: no node type.
    }
    return { node: null, problems: [] };
  }
  if (label.startsWith("file:")) {
    const path = label.slice("file:".length);
    for (const candidate of [resolve(cwd, path), resolve(realPlanFolder(planFile, cwd), path)]) {
      if (!existsSync(candidate)) continue;
      const loaded = await readInventory(candidate).catch(() => undefined);
      if (loaded?.inventory && inventoryFingerprint(loaded.inventory) === plan.inventory.fingerprint)
        return {
          node: nodeShape(loaded.inventory, `inventory ${path}`, loaded.slurm),
          problems: loaded.problems,
        };
    }
  }
  return { node: null, problems: [] };
}

async function readInventory(
  file: string,
): Promise<{ inventory: Inventory | undefined; slurm?: ShortInventory["slurm"]; problems: Problem[] }> {
  const parsed = parseSource(file, await readSourceText(file, "inventory file"));
  if (hasErrors(parsed.problems)) return { inventory: undefined, problems: parsed.problems };
  // The parser's warnings (a `%YAML 1.1` directive), located here: export and run print them
  // without the file's text.
  const warnings = await locatedWarnings(parsed.problems, parsed.source);
  const { default: validate } = await import("../generated/inventory-validator.js");
  if (!validate(parsed.data))
    return { inventory: undefined, problems: [...warnings, ...schemaProblems(validate.errors ?? [], file)] };
  const data = parsed.data as Inventory | ShortInventory;
  if ("schema" in data) return { inventory: data, problems: warnings };
  return {
    inventory: expandShortInventory(data, "file", INVENTORY_FILE_SEED),
    ...(data.slurm && { slurm: data.slurm }),
    problems: warnings,
  };
}

async function locatedWarnings(problems: Problem[], source: SourceFile): Promise<Problem[]> {
  if (problems.length === 0) return [];
  const { locateProblems } = await import("../source/locate.js");
  return locateProblems(problems, [source]);
}
