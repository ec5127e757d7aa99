/**
 * Parse → schema check (all errors) → normalize → rules → expand. Returns the resolved file and
 * every problem found on the way; the caller decides what to do with them (STYLE.md §4).
 */
import validatePipeline from "../generated/pipeline-validator.js";
import { append } from "../lists/append.js";
import { fromPointer, hasErrors, type Problem, toPointer, valueAtPointer } from "../problems/problem.js";
import { type AjvError, schemaProblems } from "../problems/schema-errors.js";
import type { GpuplanPipelineFile } from "../schema-types/pipeline.js";
import { parseSource, readSourceText, type SourceFile } from "../source/source-file.js";
import { sha256Hex } from "../text/sha256.js";
import { type ExpandableTemplate, expandPipelines, expansionProblem } from "./expand.js";
import { knownPipelineKeys } from "./known-keys.js";
import { pipelineNameCaseProblems, workerKeyCaseProblems } from "./log-name-case.js";
import type { ResolvedFile } from "./model.js";
import { normalizeFile, type Templates } from "./normalize.js";
import { RULES } from "./rules/index.js";
import { workerLaunchProblems } from "./worker-launches.js";

export interface LoadedPipelineFile {
  source: SourceFile;
  sha256: string;
  resolved: ResolvedFile | undefined;
  problems: Problem[];
}

export async function loadPipelineFile(file: string): Promise<LoadedPipelineFile> {
  return checkPipelineText(file, await readSourceText(file, "pipeline file"));
}

/**
 * After schema errors, keep checking what is still sound, so that one pass reports everything:
 * an invalid optional key is dropped (its error is already reported), a step or pipeline whose
 * id, run, name or shape is wrong is left out (other indices kept, so pointers stay right). A
 * file whose shape is wrong at the top (not a mapping, no pipeline list, wrong version) stops.
 */
function salvage(
  data: unknown,
  errors: readonly AjvError[],
): { data: GpuplanPipelineFile; skip: Set<number>; dropped: Set<string> } | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const original = data as Record<string, unknown>;
  if (!Array.isArray(original.pipelines) || original.version !== 1) return undefined;
  const clone = structuredClone(original) as Record<string, unknown> & { pipelines: unknown[] };
  const skip = new Set<number>();
  // What was dropped, so that nothing later reports it as missing (#11.12).
  const dropped = new Set<string>();
  for (const e of errors) {
    const path = fromPointer(e.instancePath);
    if (e.keyword === "additionalProperties") path.push(String(e.params.additionalProperty));
    const [first, index, ...rest] = path;
    if (first === "pipelines" && index !== undefined) {
      const i = Number(index);
      const target = pruneTarget(clone.pipelines[i], rest);
      if (target === undefined) skip.add(i);
      else {
        target.drop();
        dropped.add(toPointer(["pipelines", i, ...target.path]));
      }
    } else if (first === "registry" || first === "defaults" || first === "name" || first === "description") {
      dropPath(clone, path);
      dropped.add(toPointer(path));
    } else if (first !== undefined && first !== "pipelines" && first !== "version") {
      dropPath(clone, [first]);
      dropped.add(toPointer([first]));
    } else {
      return undefined;
    }
  }
  if (!validatePipeline({ ...clone, pipelines: clone.pipelines.filter((_, i) => !skip.has(i)) })) {
    // Dropping keys was not enough (e.g. a drop made something required go missing): fall back
    // to leaving out every pipeline that still has an error, and the registry and defaults.
    for (const e of validatePipeline.errors ?? []) {
      const [first, index] = fromPointer(e.instancePath);
      if (first === "pipelines" && index !== undefined) skip.add(Number(index));
    }
    for (const key of ["registry", "defaults"]) {
      if (key in clone) dropped.add(`/${key}`);
      delete clone[key];
    }
    if (!validatePipeline({ ...clone, pipelines: clone.pipelines.filter((_, i) => !skip.has(i)) }))
      return undefined;
  }
  return { data: clone as unknown as GpuplanPipelineFile, skip, dropped };
}

/** Inside one pipeline: what to drop for an error at `rest`, or undefined to leave the pipeline out. */
function pruneTarget(pipeline: unknown, rest: string[]): { drop: () => void; path: string[] } | undefined {
  if (typeof pipeline !== "object" || pipeline === null) return undefined;
  const [key, stepIndex, stepKey] = rest;
  if (key === undefined || key === "name") return undefined;
  if (key === "steps") {
    // An error in a step's id or run, or in the step as a whole, leaves the pipeline out.
    if (stepIndex === undefined || stepKey === undefined || stepKey === "id" || stepKey === "run")
      return undefined;
    const path = ["steps", stepIndex, stepKey];
    return { drop: () => dropPath(pipeline as Record<string, unknown>, path), path };
  }
  return { drop: () => dropPath(pipeline as Record<string, unknown>, [key]), path: [key] };
}

function dropPath(root: Record<string, unknown>, path: readonly string[]): void {
  let node: unknown = root;
  for (const seg of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return;
    node = (node as Record<string, unknown>)[seg];
  }
  if (typeof node === "object" && node !== null && !Array.isArray(node)) {
    delete (node as Record<string, unknown>)[path[path.length - 1]!];
  }
}

/** Whether the value at a pointer (or one around it) was dropped as invalid. */
function droppedCheck(dropped: ReadonlySet<string>): (pointer: string) => boolean {
  if (dropped.size === 0) return () => false;
  return (pointer) => {
    for (let p = pointer; ; p = p.slice(0, p.lastIndexOf("/"))) {
      if (dropped.has(p)) return true;
      if (p === "") return false;
    }
  };
}

export function checkPipelineText(file: string, text: string): LoadedPipelineFile {
  const sha256 = sha256Hex(text);
  const checked = checkTemplates(file, text);
  const result = { source: checked.source, sha256, resolved: undefined };
  const { problems, templates } = checked;
  if (!templates) return { ...result, problems };
  const tooLarge = expansionProblem(templates.list, templates.limits, file);
  if (tooLarge) return { ...result, problems: [...problems, tooLarge] };
  const expanded = expandPipelines(templates.list, file);
  append(problems, expanded.problems);
  append(problems, pipelineNameCaseProblems(expanded.value, file));
  append(problems, workerLaunchProblems(expanded.value, file));
  return {
    ...result,
    problems,
    resolved: { name: templates.name, registry: templates.registry, pipelines: expanded.value },
  };
}

/**
 * Parse, schema check, normalize and the rules. Returns the templates with only what expansion
 * needs of the file (each template's matrix): the parsed document is let go before the templates
 * expand, so a big file is not held three times over (docs/decisions/0015-compact-plans.md).
 */
function checkTemplates(
  file: string,
  text: string,
): {
  source: SourceFile;
  problems: Problem[];
  templates?: Omit<Templates, "templates"> & { list: ExpandableTemplate[] };
} {
  const parsed = parseSource(file, text);
  if (hasErrors(parsed.problems)) return { source: parsed.source, problems: parsed.problems };
  // The parser's warnings (a `%YAML 1.1` directive) stand beside whatever the checks find.
  const problems: Problem[] = [...parsed.problems];
  let data = parsed.data as GpuplanPipelineFile;
  let skip = new Set<number>();
  let dropped = new Set<string>();
  if (!validatePipeline(parsed.data)) {
    const errors = validatePipeline.errors ?? [];
    append(
      problems,
      schemaProblems(errors, file, knownPipelineKeys, (pointer) => valueAtPointer(parsed.data, pointer)),
    );
    const salvaged = salvage(parsed.data, errors);
    if (!salvaged) return { source: parsed.source, problems };
    ({ data, skip, dropped } = salvaged);
  }
  const normalized = normalizeFile(data, file, skip, droppedCheck(dropped));
  append(problems, normalized.problems);
  // A size past the bound is reported as such: read as not given, it must not add "missing-vram".
  for (const p of normalized.problems)
    if (p.code === "size-out-of-range" && p.pointer !== undefined) dropped.add(p.pointer);
  const invalid = droppedCheck(dropped);
  for (const t of normalized.value.templates) {
    for (const rule of RULES)
      rule({ file, spec: t.spec, pipeline: t.resolved, invalid, report: (p) => problems.push(p) });
  }
  append(problems, workerKeyCaseProblems(normalized.value.templates, file));
  const { templates, ...rest } = normalized.value;
  const list = templates.map((t) => ({ spec: { matrix: t.spec.matrix }, resolved: t.resolved }));
  return { source: parsed.source, problems, templates: { ...rest, list } };
}
