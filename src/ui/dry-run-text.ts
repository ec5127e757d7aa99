/**
 * `gpuplan run --dry-run` for a person: per pipeline its GPUs, per step the command, cwd and env
 * delta. Everything here comes from the pipeline file (names, commands, env values): escaped.
 */
import type { DryRun } from "../run/prepare/dry-run.js";
import type { PlanRegistryEntry } from "../schema-types/plan.js";
import { escapeText } from "../text/safe-text.js";
import { shortUuids } from "./short-uuid.js";

/** `registry` gives each GPU's short UUID beside its device id. */
export function formatDryRun(
  d: DryRun,
  registry: readonly Pick<PlanRegistryEntry, "gpu" | "uuid">[],
): string {
  const short = shortUuids([...registry.map((g) => g.uuid), ...d.bindings.map((b) => b.planUuid)]);
  const uuidOf = new Map(registry.map((g) => [g.gpu, short(g.uuid)]));
  const gpu = (id: string): string => {
    const uuid = uuidOf.get(id);
    return uuid ? `${escapeText(id)} (${uuid})` : escapeText(id);
  };
  const plural = d.pipelines.length === 1 ? "pipeline" : "pipelines";
  const out: string[] = [
    `gpuplan run --dry-run: ${d.pipelines.length} ${plural} of ${escapeText(d.plan)}; nothing was started`,
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
      `pipeline ${escapeText(p.name)}${p.gpus.length ? ` on ${p.gpus.map(gpu).join(", ")}` : " on cpu"}`,
    );
    for (const s of p.steps) {
      const needs = s.needs.length ? ` after ${s.needs.map(escapeText).join(", ")}` : "";
      out.push(`  ${escapeText(s.id)} (${escapeText(s.device)}${s.exclusive ? ", exclusive" : ""})${needs}`);
      out.push(`    run: ${escapeText(s.command)}`, `    cwd: ${escapeText(s.cwd)}`);
      for (const [k, v] of Object.entries(s.env)) out.push(`    ${escapeText(k)}=${escapeText(v)}`);
      if (s.unset.length) out.push(`    unset: ${s.unset.map(escapeText).join(" ")}`);
      for (const problem of s.problems) out.push(`    problem: ${escapeText(problem)}`);
    }
  }
  const problems = d.pipelines.flatMap((p) => p.steps).filter((s) => s.problems.length > 0).length;
  if (problems > 0)
    out.push(
      "",
      `${problems} ${problems === 1 ? "step" : "steps"} could not start here (problem: lines above)`,
    );
  return `${out.join("\n")}\n`;
}
