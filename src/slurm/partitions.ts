/**
 * The partitions this user can submit to, from `sinfo --noheader --format=%R|%P|%a`: the name,
 * the same name with `*` on the default partition, and whether it is up.
 */
import { error, type Problem } from "../problems/problem.js";
import type { SlurmPartition } from "../schema-types/slurm-node-types.js";
import { displayText } from "../text/safe-text.js";
import { PARTITION_NAME } from "./nodes.js";

export type { SlurmPartition };

export const SINFO_ARGS = ["--noheader", "--format=%R|%P|%a"];

export function parsePartitions(output: string): { partitions: SlurmPartition[]; problems: Problem[] } {
  const partitions: SlurmPartition[] = [];
  const problems: Problem[] = [];
  for (const line of output.split("\n")) {
    if (line.trim() === "") continue;
    const [name, marked, available, ...rest] = line.trim().split("|");
    if (
      name === undefined ||
      marked === undefined ||
      available === undefined ||
      rest.length > 0 ||
      !PARTITION_NAME.test(name) ||
      (marked !== name && marked !== `${name}*`) ||
      !/^[a-z]{1,16}$/.test(available)
    ) {
      problems.push(
        error({
          code: "slurm-untrusted-value",
          message: `sinfo line \`${displayText(line, 120)}\` is not partition|partition[*]|availability; the partition is left out`,
          hint: "gpuplan reads only values it can check; run `sinfo -s` to see what Slurm reports",
        }),
      );
      continue;
    }
    if (partitions.some((p) => p.name === name)) continue;
    partitions.push({ name, isDefault: marked.endsWith("*"), available });
  }
  return { partitions, problems };
}
