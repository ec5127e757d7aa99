/**
 * `registry.executor.slurm` of a pipeline file, as the plan records it (camelCase, sizes in bytes,
 * durations in ms; what the file sets, and the settings with a schema default resolved), and the
 * options an export runs with: the plan's settings with the command line's flags over them.
 */
import { pipelineSchema } from "../generated/schema-values.js";
import type { SlurmSettingsSpec } from "../schema-types/pipeline.js";
import type { PlanSlurmSettings } from "../schema-types/plan.js";
import { parseDuration } from "../units/duration.js";
import { parseSize } from "../units/size.js";
import type { SlurmExportOptions } from "./export-plan.js";

const DEFAULTS = pipelineSchema.defaults.SlurmSettings;

export function planSlurmSettings(spec: SlurmSettingsSpec): PlanSlurmSettings {
  const gres = spec.gres_type;
  const time = spec.time === undefined ? undefined : parseDuration(spec.time);
  const mem = spec.mem_per_task === undefined ? undefined : parseSize(spec.mem_per_task);
  return {
    ...(spec.partition !== undefined && { partition: spec.partition }),
    ...(spec.account !== undefined && { account: spec.account }),
    ...(spec.qos !== undefined && { qos: spec.qos }),
    ...(gres !== undefined && { gresTypes: typeof gres === "string" ? { "*": gres } : { ...gres } }),
    ...(spec.throttle !== undefined && { throttle: spec.throttle }),
    timeFactor: spec.time_factor ?? DEFAULTS.time_factor,
    ...(time !== undefined && { timeMs: time }),
    ...(spec.cpus_per_task !== undefined && { cpusPerTask: spec.cpus_per_task }),
    ...(mem !== undefined && { memPerTaskBytes: mem }),
    shards: spec.shards ?? DEFAULTS.shards,
    ...(spec.sbatch_args !== undefined && { sbatchArgs: [...spec.sbatch_args] }),
  };
}

/** What the command line may set; unset fields fall back to the plan's settings, then defaults. */
export interface SlurmFlags {
  partition?: string;
  account?: string;
  qos?: string;
  gresTypes?: Record<string, string>;
  throttle?: number;
  timeFactor?: number;
  timeMs?: number;
  cpusPerTask?: number;
  memPerTaskBytes?: number;
  shards?: boolean;
  sbatchArgs?: string[];
}

export function slurmExportOptions(
  plan: PlanSlurmSettings | undefined,
  flags: SlurmFlags,
): SlurmExportOptions {
  const p = plan ?? {};
  const pick = <K extends keyof SlurmFlags & keyof PlanSlurmSettings>(k: K) => flags[k] ?? p[k];
  const timeMs = pick("timeMs");
  const options: SlurmExportOptions = {
    gresTypes: { ...p.gresTypes, ...flags.gresTypes },
    timeFactor: pick("timeFactor") ?? DEFAULTS.time_factor,
    shards: pick("shards") ?? DEFAULTS.shards,
    // The file's arguments first, the command line's after them: the later one wins in sbatch.
    sbatchArgs: [...(p.sbatchArgs ?? []), ...(flags.sbatchArgs ?? [])],
  };
  const partition = pick("partition");
  const account = pick("account");
  const qos = pick("qos");
  const throttle = pick("throttle");
  const cpus = pick("cpusPerTask");
  const mem = pick("memPerTaskBytes");
  if (partition !== undefined) options.partition = partition;
  if (account !== undefined) options.account = account;
  if (qos !== undefined) options.qos = qos;
  if (throttle !== undefined) options.throttle = throttle;
  if (cpus !== undefined) options.cpusPerTask = cpus;
  if (mem !== undefined) options.memPerTaskBytes = mem;
  if (timeMs !== undefined) options.timeMinutes = Math.max(1, Math.ceil(timeMs / 60_000));
  return options;
}
