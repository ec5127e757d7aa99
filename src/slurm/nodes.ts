/**
 * The nodes in `scontrol show node --oneliner`: name, partitions, state, CPUs, memory and GRES.
 * Every value is checked before it is used; a node whose values do not check out is left out
 * with a problem that says which value and why, so the rest of the cluster still plans.
 */
import { error, type Problem } from "../problems/problem.js";
import { displayText } from "../text/safe-text.js";
import { type GresEntry, parseGres } from "./gres.js";
import { parseKeyValueLine } from "./key-value-line.js";

export interface SlurmNode {
  name: string;
  partitions: string[];
  /** Slurm's state words, e.g. IDLE, MIXED+DRAIN, DOWN*. */
  state: string;
  /** False when new jobs cannot start there (down, drained, failing, not responding, future). */
  usable: boolean;
  /** CPUs jobs can have: CPUEfctv (22.05+, after specialised cores), else CPUTot. */
  cpus: number;
  /** Memory jobs can have, MiB: RealMemory less MemSpecLimit. */
  memoryMiB: number;
  gres: GresEntry[];
}

const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const PARTITION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$/;
const STATE = /^[A-Z_]+(\+[A-Z_]+)*[*~#!%$@^-]?$/;
const NUMBER = /^[0-9]{1,10}$/;
const UNUSABLE = new Set([
  "DOWN",
  "DRAIN",
  "DRAINED",
  "DRAINING",
  "FAIL",
  "FAILING",
  "FUTURE",
  "INVAL",
  "INVALID_REG",
  "NOT_RESPONDING",
  "UNKNOWN",
]);

/** The keys a node's facts come from: a repeated one means the line cannot be read safely. */
const RELIED_ON = [
  "NodeName",
  "Partitions",
  "State",
  "CPUTot",
  "CPUEfctv",
  "RealMemory",
  "MemSpecLimit",
  "Gres",
];

const COMMAND = "scontrol show node --oneliner";

export function parseNodes(output: string): { nodes: SlurmNode[]; problems: Problem[] } {
  const nodes: SlurmNode[] = [];
  const problems: Problem[] = [];
  const lines = output.split("\n").filter((l) => l.trim() !== "");
  lines.forEach((line, i) => {
    const where = `line ${i + 1} of \`${COMMAND}\``;
    const { values, repeated } = parseKeyValueLine(line);
    const rawName = values.get("NodeName");
    if (rawName === undefined || !NODE_NAME.test(rawName)) {
      problems.push(
        untrusted(
          `${where}: the node name ${rawName === undefined ? "is missing" : `\`${displayText(rawName, 80)}\` is not a host name`}`,
        ),
      );
      return;
    }
    const label = `node \`${rawName}\``;
    const twice = RELIED_ON.filter((k) => repeated.has(k));
    if (twice.length) {
      problems.push(
        error({
          code: "slurm-ambiguous-output",
          message: `${label}: ${twice.join(", ")} appear${twice.length === 1 ? "s" : ""} twice in its \`${COMMAND}\` line (a free-text value such as OS or Reason holds \`Key=\`); the node is left out`,
          hint: "ask the cluster's admins to clear the text, or write the inventory by hand",
        }),
      );
      return;
    }
    const number = (key: string): number | undefined => {
      const v = values.get(key);
      return v !== undefined && NUMBER.test(v) ? Number(v) : undefined;
    };
    const cpuKey = values.has("CPUEfctv") ? "CPUEfctv" : "CPUTot";
    const cpus = number(cpuKey);
    const realMemory = number("RealMemory");
    const memSpec = values.has("MemSpecLimit") ? number("MemSpecLimit") : 0;
    const notCount = [
      [cpuKey, cpus === undefined || cpus < 1],
      ["RealMemory", realMemory === undefined],
      ["MemSpecLimit", memSpec === undefined],
    ].find(([, bad]) => bad)?.[0] as string | undefined;
    if (notCount !== undefined || cpus === undefined || realMemory === undefined || memSpec === undefined) {
      const key = notCount ?? cpuKey;
      problems.push(untrusted(`${label}: ${key} is ${describe(values.get(key))}, not a count`));
      return;
    }
    const state = values.get("State") ?? "";
    if (!STATE.test(state)) {
      problems.push(untrusted(`${label}: State is ${describe(state)}`));
      return;
    }
    const gres = parseGres(values.get("Gres") ?? "");
    if (!gres.ok) {
      problems.push(untrusted(`${label}: Gres entry ${describe(gres.bad)} is not name[:type]:count`));
      return;
    }
    const partitionText = values.get("Partitions") ?? "";
    const partitions = partitionText === "" || partitionText === "(null)" ? [] : partitionText.split(",");
    const badPartition = partitions.find((p) => !PARTITION_NAME.test(p));
    if (badPartition !== undefined) {
      problems.push(untrusted(`${label}: partition name ${describe(badPartition)}`));
      return;
    }
    const words = state.replace(/[*~#!%$@^-]$/, "").split("+");
    const usable = !state.endsWith("*") && !words.some((w) => UNUSABLE.has(w));
    nodes.push({
      name: rawName,
      partitions,
      state,
      usable,
      cpus,
      memoryMiB: Math.max(0, realMemory - memSpec),
      gres: gres.entries,
    });
  });
  return { nodes, problems };
}

const describe = (value: string | undefined): string =>
  value === undefined ? "missing" : `\`${displayText(value, 80)}\``;

function untrusted(message: string): Problem {
  return error({
    code: "slurm-untrusted-value",
    message: `${message}; the node is left out`,
    hint: "gpuplan reads only values it can check; run `scontrol show node NAME` to see what Slurm reports",
  });
}
