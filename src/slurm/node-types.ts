/**
 * Nodes with the same GPUs (GRES type and count), shards, CPUs and memory form a node type: what
 * a plan is compiled for, since an array task may land on any node of its partition that has
 * what it asks for. Each node type gets an inventory in the short form `compile --inventory`
 * reads (and the built-in targets are written in), with GPUs of the model its GRES type names.
 */
import type { ShortInventory } from "../inventory/types.js";
import { error, type Problem } from "../problems/problem.js";
import type { NodeTypeGpu, SlurmNodeType as SchemaNodeType } from "../schema-types/slurm-node-types.js";
import { displayText } from "../text/safe-text.js";
import { GPU_MODELS, type GpuModel, MiB, modelForGresType } from "./gpu-models.js";
import type { GresEntry } from "./gres.js";
import type { SlurmNode } from "./nodes.js";

/** A node type as schemas/slurm-node-types.schema.json describes it, with its inventory typed. */
export interface SlurmNodeType extends Omit<SchemaNodeType, "inventory"> {
  inventory: ShortInventory | null;
}

/** `--gpu-model [TYPE=]MODEL`: a GRES type (or, with type null, every unknown or untyped one) → a known model. */
export interface GpuModelChoice {
  gresType: string | null;
  model: GpuModel;
}

const gpuEntries = (gres: GresEntry[]) => gres.filter((g) => g.name === "gpu");

function shardCount(gres: GresEntry[]): number {
  return gres.filter((g) => g.name === "shard").reduce((n, g) => n + g.count, 0);
}

/** Same GPUs, shards, CPUs and memory → same key. */
function nodeKey(node: SlurmNode): string {
  const gpus = gpuEntries(node.gres)
    .map((g) => `${g.type ?? ""}:${g.count}`)
    .sort();
  return JSON.stringify([gpus, shardCount(node.gres), node.cpus, node.memoryMiB]);
}

/** `h100x4-16cpu-16000mib`, `a100x4+v100x2-64cpu-512000mib`, `cpu-128cpu-1031000mib`. */
function nodeTypeName(node: SlurmNode): string {
  const gpus = gpuEntries(node.gres)
    .map((g) => `${g.type ?? "gpu"}x${g.count}`)
    .sort()
    .join("+");
  return `${gpus || "cpu"}-${node.cpus}cpu-${node.memoryMiB}mib`.toLowerCase();
}

function chooseModel(type: string | null, choices: readonly GpuModelChoice[]): GpuModel | undefined {
  const exact = type === null ? undefined : choices.find((c) => c.gresType === type);
  if (exact) return exact.model;
  const known = type === null ? undefined : modelForGresType(type);
  return known ?? choices.find((c) => c.gresType === null)?.model;
}

export function groupNodeTypes(
  nodes: readonly SlurmNode[],
  choices: readonly GpuModelChoice[] = [],
): { nodeTypes: SlurmNodeType[]; problems: Problem[] } {
  const groups = new Map<string, SlurmNode[]>();
  for (const node of nodes) {
    const key = nodeKey(node);
    groups.set(key, [...(groups.get(key) ?? []), node]);
  }
  const problems: Problem[] = [];
  const nodeTypes = [...groups.values()].map((members) => {
    const first = members[0]!;
    const name = nodeTypeName(first);
    const gpus: NodeTypeGpu[] = [];
    const models: GpuModel[] = [];
    for (const g of gpuEntries(first.gres)) {
      const model = chooseModel(g.type, choices);
      if (model) models.push(model);
      else problems.push(unknownModel(name, g.type));
      gpus.push({
        gresType: g.type,
        count: g.count,
        model: model?.name ?? null,
        memoryBytes: model ? model.memoryMiB * MiB : null,
      });
    }
    const gpuCount = gpus.reduce((n, g) => n + g.count, 0);
    const shards = shardCount(first.gres);
    const shardsPerGpu = gpuCount > 0 && shards >= gpuCount ? Math.floor(shards / gpuCount) : null;
    const partitions = [...new Set(members.flatMap((m) => m.partitions))].sort();
    const nodeType: SlurmNodeType = {
      name,
      nodes: members.map((m) => m.name).sort(),
      usableNodes: members.filter((m) => m.usable).length,
      partitions,
      cpus: first.cpus,
      memoryBytes: first.memoryMiB * MiB,
      gpus,
      shardsPerGpu,
      inventory: null,
    };
    if (models.length === gpus.length) nodeType.inventory = inventoryFor(nodeType, models);
    return nodeType;
  });
  nodeTypes.sort((a, b) => a.name.localeCompare(b.name));
  return { nodeTypes, problems };
}

function inventoryFor(t: SlurmNodeType, models: GpuModel[]): ShortInventory {
  return {
    gpus: t.gpus.map((g, i) => ({
      name: models[i]!.name,
      memory: models[i]!.memoryMiB * MiB,
      count: g.count,
      backend: models[i]!.backend,
      compute_capability: models[i]!.computeCapability,
    })),
    cpu: { threads: t.cpus, memory: `${t.memoryBytes / MiB}MiB`, model: `Slurm node type ${t.name}` },
    slurm: {
      node_type: t.name,
      partitions: t.partitions,
      nodes: t.nodes,
      gres: t.gpus.map((g, i) => ({ model: models[i]!.name, type: g.gresType, count: g.count })),
      ...(t.shardsPerGpu !== null && { shards_per_gpu: t.shardsPerGpu }),
    },
  };
}

function unknownModel(nodeType: string, type: string | null): Problem {
  const what = type === null ? "untyped GPUs (`gpu:N`)" : `GRES type \`${displayText(type, 64)}\``;
  return error({
    code: "slurm-unknown-gpu-model",
    message: `node type ${nodeType}: ${what} name${type === null ? "" : "s"} no GPU model gpuplan knows, so it cannot say how much memory the GPUs have`,
    hint: `name the model: --gpu-model ${type === null ? "" : `${displayText(type, 64)}=`}h100 (known: ${GPU_MODELS.map((m) => m.gresType).join(", ")}), or write the inventory by hand (gpuplan targets shows the form)`,
  });
}
