/**
 * `gpuplan detect --slurm`: what the cluster's node types are, read from `sinfo` (the partitions
 * this user can submit to) and `scontrol show node --oneliner` (each node's GRES, CPUs, memory).
 * The commands run through an injected runner (the CLI's uses child_process with the caller's
 * environment, so SLURM_CONF applies); tests give captured output instead.
 */

import { append } from "../lists/append.js";
import { didYouMean } from "../problems/did-you-mean.js";
import { UsageError, VendorError } from "../problems/errors.js";
import { type Problem, warning } from "../problems/problem.js";
import type { GpuplanSlurmNodeTypes } from "../schema-types/slurm-node-types.js";
import { displayText } from "../text/safe-text.js";
import { type GpuModelChoice, groupNodeTypes, type SlurmNodeType } from "./node-types.js";
import { parseNodes } from "./nodes.js";
import { parsePartitions, SINFO_ARGS } from "./partitions.js";

export interface CommandOutput {
  /** Exit status; null when the command did not end by itself (see failure). */
  status: number | null;
  stdout: string;
  stderr: string;
  /** `interrupted`: the caller's interrupt stopped it (slurmCommandRunner's signal). */
  failure?: "not-found" | "timeout" | "output-too-large" | "interrupted";
  /** With failure `timeout`: the limit it ran past, in ms. */
  limitMs?: number;
}

/** `did not answer in 15 s`: what a command past its time limit did, with the limit where known. */
export function noAnswer(out: CommandOutput): string {
  return `did not answer in ${out.limitMs !== undefined ? `${out.limitMs / 1000} s` : "time"}`;
}

/** `unsetEnv`: variables the command must not see (sbatchOverrides: those that beat its script). */
interface CommandOptions {
  unsetEnv?: readonly string[];
}

export type RunCommand = (
  command: string,
  args: readonly string[],
  options?: CommandOptions,
) => Promise<CommandOutput>;

/** What `detect --slurm --json` prints (schemas/slurm-node-types.schema.json). */
export interface SlurmNodeTypesReport extends Omit<GpuplanSlurmNodeTypes, "nodeTypes" | "problems"> {
  nodeTypes: SlurmNodeType[];
  problems: Problem[];
}

export interface ReadClusterOptions {
  partition?: string;
  gpuModels?: readonly GpuModelChoice[];
}

const SCONTROL_ARGS = ["show", "node", "--oneliner"];

export async function readSlurmNodeTypes(
  run: RunCommand,
  options: ReadClusterOptions = {},
): Promise<SlurmNodeTypesReport> {
  const sinfo = parsePartitions(await slurmOutput(run, "sinfo", SINFO_ARGS));
  const scontrol = parseNodes(await slurmOutput(run, "scontrol", SCONTROL_ARGS));
  const problems = [...sinfo.problems, ...scontrol.problems];
  const visible = new Set(sinfo.partitions.map((p) => p.name));
  let partitions = sinfo.partitions;
  if (options.partition !== undefined) {
    const wanted = sinfo.partitions.find((p) => p.name === options.partition);
    if (!wanted) {
      const names = sinfo.partitions.map((p) => p.name);
      const suggestion = didYouMean(options.partition, names);
      throw new UsageError(
        `--partition: this cluster has no partition \`${displayText(options.partition, 64)}\` you can submit to`,
        "unknown-partition",
        `${suggestion ? `did you mean \`${suggestion}\`? ` : ""}partitions: ${names.join(", ") || "none"} (sinfo -s)`,
      );
    }
    partitions = [wanted];
  }
  const inScope = new Set(partitions.map((p) => p.name));
  const nodes = scontrol.nodes
    .filter((n) => n.partitions.some((p) => inScope.has(p)))
    .map((n) => ({ ...n, partitions: n.partitions.filter((p) => visible.has(p)) }));
  const grouped = groupNodeTypes(nodes, options.gpuModels ?? []);
  append(problems, grouped.problems);
  if (grouped.nodeTypes.length === 0) {
    problems.push(
      warning({
        code: "slurm-no-nodes",
        message:
          options.partition !== undefined
            ? `partition \`${options.partition}\` has no nodes gpuplan could read`
            : "no node in a partition you can submit to could be read",
        hint: "check `sinfo` and `scontrol show node`",
      }),
    );
  }
  return {
    schema: "gpuplan/slurm-node-types@1",
    partition: options.partition ?? null,
    partitions,
    nodeTypes: grouped.nodeTypes,
    problems,
  };
}

/**
 * stdout of a Slurm client command, or a VendorError that says what went wrong and what to do;
 * `outcome` says what the failure leaves unknown (in the hint). What Slurm printed is escaped.
 */
export async function slurmOutput(
  run: RunCommand,
  command: string,
  args: readonly string[],
  outcome?: string,
): Promise<string> {
  const call = displayText(`${command} ${args.join(" ")}`, 400);
  const then = (hint: string) => (outcome ? `${outcome}; ${hint}` : hint);
  const out = await run(command, args);
  if (out.failure === "not-found") {
    throw new UsageError(
      `Slurm's \`${command}\` is not on PATH`,
      "slurm-not-found",
      "run gpuplan where Slurm's client commands work (a login node; `module load slurm` on some clusters)",
    );
  }
  if (out.failure === "timeout") {
    throw new VendorError(
      `\`${command}\` ${noAnswer(out)}`,
      "slurm-timeout",
      call,
      undefined,
      then("slurmctld may be down or unreachable: try `scontrol ping`"),
    );
  }
  if (out.failure === "output-too-large") {
    throw new VendorError(
      `\`${command}\` printed more than gpuplan reads`,
      "slurm-output-too-large",
      call,
      undefined,
      then(outcome ? "try again later" : "narrow it with --partition"),
    );
  }
  if (out.status !== 0) {
    const stderr = out.stderr.trim().split("\n").slice(-3).join(" / ");
    throw new VendorError(
      `\`${command}\` failed (exit ${out.status})`,
      "slurm-command-failed",
      call,
      displayText(stderr || "(no message)", 400),
      then(slurmHint(out.stderr)),
    );
  }
  return out.stdout;
}

function slurmHint(stderr: string): string {
  if (/configuration|slurm\.conf|SRV|resolve/i.test(stderr))
    return "the Slurm client finds no configuration: set SLURM_CONF to the cluster's slurm.conf";
  if (/Unable to contact|Connection refused|Zero Bytes|timed out/i.test(stderr))
    return "slurmctld is not answering: check `scontrol ping` and SLURM_CONF";
  if (/munge|authentication|credential/i.test(stderr))
    return "Slurm authentication failed: is munged running?";
  return "run the command by hand to see what Slurm says";
}
