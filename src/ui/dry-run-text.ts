/**
 * `gpuplan run --dry-run` for a person: per pipeline its GPUs, per step the command, cwd and env
 * delta. Everything here comes from the pipeline file (names, commands, env values): escaped, and
 * cut where longer than a person reads (names past MAX_NAME_SHOWN characters, values past
 * MAX_VALUE_SHOWN): a plan named with 50 MB wrote 50 MB to the terminal. --json keeps them whole.
 */
import type { DryRun } from "../run/prepare/dry-run.js";
import type { PlanRegistryEntry } from "../schema-types/plan.js";
import { displayCut, escapeText, MAX_NAME_SHOWN } from "../text/safe-text.js";
import { shortUuids } from "./short-uuid.js";

/**
 * A command, folder or env value longer than this is shown cut, as a failure line cuts a word past
 * PATH_MAX: a dry run is read to check them, so anything a person wrote is shown whole.
 */
const MAX_VALUE_SHOWN = 4096;

/** `registry` gives each GPU's short UUID beside its device id. */
export function formatDryRun(
  d: DryRun,
  registry: readonly Pick<PlanRegistryEntry, "gpu" | "uuid">[],
): string {
  let cut = false;
  const shown = (text: string, max: number): string => {
    if (text.length > max) cut = true;
    return displayCut(text, max);
  };
  const name = (text: string): string => shown(text, MAX_NAME_SHOWN);
  const value = (text: string): string => shown(text, MAX_VALUE_SHOWN);
  const short = shortUuids([...registry.map((g) => g.uuid), ...d.bindings.map((b) => b.planUuid)]);
  const uuidOf = new Map(registry.map((g) => [g.gpu, short(g.uuid)]));
  const gpu = (id: string): string => {
    const uuid = uuidOf.get(id);
    return uuid ? `${escapeText(id)} (${uuid})` : escapeText(id);
  };
  const plural = d.pipelines.length === 1 ? "pipeline" : "pipelines";
  const out: string[] = [
    `gpuplan run --dry-run: ${d.pipelines.length} ${plural} of ${name(d.plan)}; nothing was started`,
  ];
  if (d.bindings.length > 0) {
    const width = Math.max(...d.bindings.map((b) => b.gpu.length));
    out.push("", "GPUs (plan → this machine):");
    for (const b of d.bindings) {
      const note = b.replaced ? `  (stands in for ${short(b.planUuid)})` : "";
      out.push(
        `  ${escapeText(b.gpu.padEnd(width))} → ${short(b.uuid)} ${escapeText(b.pciBusId ?? b.liveGpu)}${note}`,
      );
    }
  }
  for (const p of d.pipelines) {
    out.push(
      "",
      `pipeline ${name(p.name)}${p.gpus.length ? ` on ${p.gpus.map(gpu).join(", ")}` : " on cpu"}`,
    );
    for (const s of p.steps) {
      const needs = s.needs.length ? ` after ${s.needs.map(name).join(", ")}` : "";
      out.push(`  ${name(s.id)} (${escapeText(s.device)}${s.exclusive ? ", exclusive" : ""})${needs}`);
      out.push(`    run: ${value(s.command)}`, `    cwd: ${value(s.cwd)}`);
      for (const [k, v] of Object.entries(s.env)) out.push(`    ${value(k)}=${value(v)}`);
      if (s.unset.length) out.push(`    unset: ${s.unset.map(value).join(" ")}`);
      for (const problem of s.problems) out.push(`    problem: ${value(problem)}`);
    }
  }
  const problems = d.pipelines.flatMap((p) => p.steps).filter((s) => s.problems.length > 0).length;
  if (problems > 0)
    out.push(
      "",
      `${problems} ${problems === 1 ? "step" : "steps"} could not start here (problem: lines above)`,
    );
  if (cut) out.push("", "… marks text cut to fit a terminal; gpuplan run --dry-run --json shows it whole");
  return `${out.join("\n")}\n`;
}
