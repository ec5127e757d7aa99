/**
 * Parse → schema check (all errors) → normalize → rules → expand. Returns the resolved file and
 * every problem found on the way; the caller decides what to do with them (STYLE.md §4).
 */
import { createHash } from "node:crypto";
import validatePipeline from "../generated/pipeline-validator.js";
import { hasErrors, type Problem } from "../problems/problem.js";
import { schemaProblems } from "../problems/schema-errors.js";
import type { GpuplanPipelineFile } from "../schema-types/pipeline.js";
import { parseSource, readSourceText, type SourceFile } from "../source/source-file.js";
import { expandPipelines } from "./expand.js";
import { knownPipelineKeys } from "./known-keys.js";
import type { ResolvedFile } from "./model.js";
import { normalizeFile } from "./normalize.js";
import { RULES } from "./rules/index.js";

export interface LoadedPipelineFile {
  source: SourceFile;
  sha256: string;
  resolved: ResolvedFile | undefined;
  problems: Problem[];
}

export async function loadPipelineFile(file: string): Promise<LoadedPipelineFile> {
  return checkPipelineText(file, await readSourceText(file, "pipeline file"));
}

export function checkPipelineText(file: string, text: string): LoadedPipelineFile {
  const sha256 = createHash("sha256").update(text).digest("hex");
  const parsed = parseSource(file, text);
  const result = { source: parsed.source, sha256, resolved: undefined, problems: parsed.problems };
  if (hasErrors(parsed.problems)) return result;
  if (!validatePipeline(parsed.data)) {
    return { ...result, problems: schemaProblems(validatePipeline.errors ?? [], file, knownPipelineKeys) };
  }
  const data = parsed.data as GpuplanPipelineFile;
  const problems: Problem[] = [];
  const normalized = normalizeFile(data, file);
  problems.push(...normalized.problems);
  for (const t of normalized.value.templates) {
    for (const rule of RULES)
      rule({ file, spec: t.spec, pipeline: t.resolved, report: (p) => problems.push(p) });
  }
  const expanded = expandPipelines(normalized.value.templates, file);
  problems.push(...expanded.problems);
  return {
    ...result,
    problems,
    resolved: { name: normalized.value.name, registry: normalized.value.registry, pipelines: expanded.value },
  };
}
