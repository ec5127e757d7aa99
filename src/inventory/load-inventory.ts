/**
 * Where compile gets its inventory: a file (detect JSON or the short form), a built-in target,
 * or live detection.
 */
import { didYouMean } from "../problems/did-you-mean.js";
import { UsageError } from "../problems/errors.js";
import { error, hasErrors, type Problem, valueAtPointer } from "../problems/problem.js";
import { schemaProblems } from "../problems/schema-errors.js";
import { parseSource, readSourceText, type SourceFile } from "../source/source-file.js";
import { displayText } from "../text/safe-text.js";
import { parseSize } from "../units/size.js";
import { VERSION } from "../version.js";
import { MAX_GPU_MEMORY_BYTES, MAX_GPUS } from "./limits.js";
import { expandShortInventory, INVENTORY_FILE_SEED } from "./short-form.js";
import { TARGETS } from "./targets.js";
import { INVENTORY_SCHEMA, type Inventory, type ShortInventory } from "./types.js";

export interface InventoryChoice {
  inventory: Inventory | undefined;
  /** How the plan names where its inventory came from: `target:dgx-h100`, `file:inv.json`, `detect`. */
  label: string;
  /** The inventory file as typed (the plan records it relative to its own folder). */
  file?: string;
  source?: SourceFile;
  problems: Problem[];
}

export async function loadInventoryFile(file: string): Promise<InventoryChoice> {
  const text = await readSourceText(file, "inventory file");
  const parsed = parseSource(file, text);
  const label = `file:${file}`;
  if (hasErrors(parsed.problems))
    return { inventory: undefined, label, file, source: parsed.source, problems: parsed.problems };
  // The parser's warnings (a `%YAML 1.1` directive) stand beside whatever the checks find, as
  // they do for a pipeline file.
  const warnings = parsed.problems;
  const wrongKind = notAnInventory(parsed.data, file);
  if (wrongKind)
    return { inventory: undefined, label, file, source: parsed.source, problems: [...warnings, wrongKind] };
  // Loaded here, not at the top: --target and live detection never need it.
  const { default: validateInventory } = await import("../generated/inventory-validator.js");
  if (!validateInventory(parsed.data)) {
    return {
      inventory: undefined,
      label,
      file,
      source: parsed.source,
      problems: [
        ...warnings,
        ...schemaProblems(validateInventory.errors ?? [], file, undefined, (pointer) =>
          valueAtPointer(parsed.data, pointer),
        ),
      ],
    };
  }
  const data = parsed.data as Inventory | ShortInventory;
  if (!("schema" in data)) {
    const tooMany = tooManyGpus(data, file);
    if (tooMany)
      return { inventory: undefined, label, file, source: parsed.source, problems: [...warnings, tooMany] };
  }
  const inventory = "schema" in data ? data : expandShortInventory(data, "file", INVENTORY_FILE_SEED);
  const problems = [
    ...warnings,
    ...("schema" in data
      ? duplicateGpus(data, file)
      : [...gpuMemoryProblems(data, file), ...shortFormUuidProblems(data, file)]),
  ];
  return {
    inventory: hasErrors(problems) ? undefined : inventory,
    label,
    file,
    source: parsed.source,
    problems,
  };
}

/**
 * Another of gpuplan's files (a plan saved into .gpuplan/targets/, a pipeline file passed to
 * --inventory) is said as that, once: the schema's view of it was a dozen missing and unknown
 * properties that never said what the file was.
 */
function notAnInventory(data: unknown, file: string): Problem | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const record = data as Record<string, unknown>;
  const hint =
    "an inventory is what `gpuplan detect --save FILE` writes on the machine, or the short form (docs/reference/file-formats/inventory.md)";
  const schema = record.schema;
  if (typeof schema === "string" && schema !== INVENTORY_SCHEMA && /^gpuplan\//.test(schema)) {
    const newer = /^gpuplan\/inventory@/.test(schema);
    return error({
      code: "not-an-inventory",
      message: newer
        ? `${file} is an inventory in format ${displayText(schema, 40)}, which this gpuplan (${VERSION}) does not read: it reads ${INVENTORY_SCHEMA}`
        : `${file} is a gpuplan file of another kind (${displayText(schema, 40)}), not an inventory`,
      hint: newer ? "save it again with this gpuplan: gpuplan detect --save FILE" : hint,
      file,
      pointer: "/schema",
    });
  }
  if (schema === undefined && "pipelines" in record && !("gpus" in record))
    return error({
      code: "not-an-inventory",
      message: `${file} is a pipeline file, not an inventory`,
      hint,
      file,
      offset: 0,
    });
  return undefined;
}

/** Each `count` is bounded by the schema; their sum is bounded here, before expanding them. */
function tooManyGpus(short: ShortInventory, file: string): Problem | undefined {
  let total = 0;
  for (const [i, kind] of (short.gpus ?? []).entries()) {
    total += kind.count ?? 1;
    if (total > MAX_GPUS) {
      return error({
        code: "too-many-gpus",
        message: `the inventory lists ${total.toLocaleString("en-US")} or more GPUs, more than the limit of ${MAX_GPUS}`,
        hint: "an inventory describes one machine; list each kind of GPU once with its real count",
        file,
        pointer: kind.count !== undefined ? `/gpus/${i}/count` : `/gpus/${i}`,
      });
    }
  }
  return undefined;
}

/**
 * A short-form card's memory as a person typed it. 0 is a slip, not "unknown" as in a detected
 * inventory: planned on, every budget on it would be 0 bytes. A size past what gpuplan counts
 * (8 PiB) or past a GPU's bound (1 PiB, as a detected inventory's schema has it) is a typo too:
 * it read as 0 bytes, with an error about a budget of 0 B at some step.
 */
function gpuMemoryProblems(short: ShortInventory, file: string): Problem[] {
  const cpu =
    short.cpu.memory !== undefined && parseSize(short.cpu.memory) === undefined
      ? [
          error({
            code: "size-out-of-range",
            message: `the CPU's \`memory: ${String(short.cpu.memory).slice(0, 40)}\` is too large to count in bytes`,
            hint: "give the machine's memory as free -h shows it (`memory: 512GiB`)",
            file,
            pointer: "/cpu/memory",
          }),
        ]
      : [];
  return cpu.concat(
    (short.gpus ?? []).flatMap((kind, i) => {
      const bytes = parseSize(kind.memory);
      const at = { file, pointer: `/gpus/${i}/memory` };
      if (bytes === 0)
        return [
          error({
            code: "zero-gpu-memory",
            message: `GPU \`${kind.name}\` has \`memory: ${String(kind.memory)}\``,
            hint: "give the card's memory as nvidia-smi or rocm-smi shows it (`memory: 80GiB`)",
            ...at,
          }),
        ];
      if (bytes === undefined || bytes > MAX_GPU_MEMORY_BYTES)
        return [
          error({
            code: "size-out-of-range",
            message: `GPU \`${kind.name}\` has \`memory: ${String(kind.memory).slice(0, 40)}\`, more than 1 PiB, the most a GPU's memory may be`,
            hint: "give the card's memory as nvidia-smi or rocm-smi shows it (`memory: 80GiB`)",
            ...at,
          }),
        ];
      return [];
    }),
  );
}

/** Two entries with one id or UUID would make two registry entries for one card. */
function duplicateGpus(inventory: Inventory, file: string): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  inventory.gpus.forEach((g, i) => {
    for (const [key, value] of [
      ["id", g.id],
      ["uuid", g.uuid],
    ] as const) {
      const first = seen.get(`${key}:${value}`);
      if (first !== undefined) {
        problems.push(
          error({
            code: "duplicate-gpu",
            message: `GPU ${key} \`${value}\` appears twice in the inventory (gpus[${first}] and gpus[${i}])`,
            hint: "each GPU must be listed once; regenerate the file with gpuplan detect --json",
            file,
            pointer: `/gpus/${i}/${key}`,
          }),
        );
      } else {
        seen.set(`${key}:${value}`, i);
      }
    }
  });
  return problems;
}

/**
 * The short form's `uuids`: one per card (`count` of them), and no UUID twice across all entries —
 * else a card goes unnamed, or two registry entries name one card and `run` refuses the plan.
 */
function shortFormUuidProblems(short: ShortInventory, file: string): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, string>();
  for (const [i, kind] of (short.gpus ?? []).entries()) {
    if (!kind.uuids) continue;
    const count = kind.count ?? 1;
    if (kind.uuids.length !== count) {
      problems.push(
        error({
          code: "uuids-not-count",
          message: `\`uuids\` lists ${kind.uuids.length} UUID${kind.uuids.length === 1 ? "" : "s"} for ${count} card${count === 1 ? "" : "s"} (\`count\`)`,
          hint: "give one UUID per card, or leave `uuids` out for stable synthetic ones",
          file,
          pointer: `/gpus/${i}/uuids`,
        }),
      );
    }
    kind.uuids.forEach((uuid, j) => {
      const where = `gpus[${i}].uuids[${j}]`;
      const first = seen.get(uuid);
      if (first === undefined) {
        seen.set(uuid, where);
        return;
      }
      problems.push(
        error({
          code: "duplicate-gpu",
          message: `GPU uuid \`${uuid}\` appears twice in the inventory (${first} and ${where})`,
          hint: "each card has its own UUID (nvidia-smi -L lists them)",
          file,
          pointer: `/gpus/${i}/uuids/${j}`,
        }),
      );
    });
  }
  return problems;
}

export function targetInventory(name: string): InventoryChoice {
  const target = TARGETS.find((t) => t.name === name.toLowerCase());
  if (!target) throw unknownTarget(name, []);
  return {
    inventory: expandShortInventory(target.inventory, "target", `target:${target.name}`),
    label: `target:${target.name}`,
    problems: [],
  };
}

/** Whether `--target NAME` names a built-in target: one that reads no targets folder. */
export const isBuiltInTarget = (name: string): boolean => TARGETS.some((t) => t.name === name.toLowerCase());

/**
 * `--target NAME`: a built-in target, else a custom one (an inventory file in one of `folders`,
 * custom-targets.ts). The plan names it `target:NAME` either way.
 */
export async function chooseTarget(name: string, folders: readonly string[]): Promise<InventoryChoice> {
  if (isBuiltInTarget(name)) return targetInventory(name);
  const { listCustomTargets, refuseAmbiguousTarget, targetKey } = await import("./custom-targets.js");
  const custom = listCustomTargets(folders).filter((t) => !t.shadowed);
  const found = custom.find((t) => t.name === targetKey(name));
  if (!found) {
    // Only targets that would work are offered: a broken file's name (an invalid inventory, a
    // name two files answer to) sent the user to a target that fails too. Read only on this path.
    const usable: string[] = [];
    const broken: string[] = [];
    for (const t of custom)
      (t.clashes.length === 0 && (await isUsableInventory(t.file)) ? usable : broken).push(t.name);
    throw unknownTarget(name, usable, broken);
  }
  refuseAmbiguousTarget(found);
  const { file: _file, ...choice } = await loadInventoryFile(found.file);
  return { ...choice, label: `target:${found.name}` };
}

async function isUsableInventory(file: string): Promise<boolean> {
  try {
    const loaded = await loadInventoryFile(file);
    return loaded.inventory !== undefined && !hasErrors(loaded.problems);
  } catch {
    return false; // Unreadable: not usable either; `gpuplan targets` says why.
  }
}

function unknownTarget(name: string, custom: readonly string[], broken: readonly string[] = []): UsageError {
  const names = [...TARGETS.map((t) => t.name), ...custom];
  const suggestion = didYouMean(name, names);
  const notUsable =
    broken.length > 0
      ? `; not usable until fixed: ${broken.map((b) => `\`${b}\``).join(", ")} (gpuplan targets says why)`
      : "";
  return new UsageError(
    `unknown target \`${name}\``,
    "unknown-target",
    `${suggestion ? `did you mean \`${suggestion}\`? ` : ""}known targets: ${names.join(", ")} (gpuplan targets; custom ones are inventory files in .gpuplan/targets/ or --targets-dir)${notUsable}`,
  );
}
