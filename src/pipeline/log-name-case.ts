/**
 * Names that differ only in case name one log file on a case-insensitive file system (macOS and
 * Windows by default, SMB shares, some Docker bind mounts): a step's output goes to
 * `logs/<pipeline>@<step>.out.log` in the run folder (docs/decisions/0003-step-output-in-files.md),
 * so steps `A` and `a`, or pipelines `P` and `p` with a step in common, would write into one file
 * and each read the other's lines back (the view, OOM classification, failure reports). A warning
 * at the second name, naming the first: the files are apart on Linux, where most runs are.
 */
import { type Problem, warning } from "../problems/problem.js";
import { logNameKey } from "../run/record/log-names.js";
import type { PipelineSpec } from "../schema-types/pipeline.js";
import { showValues } from "./expand-matrix.js";
import type { ResolvedPipeline } from "./model.js";

export const CASE_INSENSITIVE_SYSTEMS = "macOS, Windows, SMB shares, some Docker mounts";

/**
 * Pipelines (matrix expansions included) whose names differ only in case and that share a step
 * id: once per template, as a matrix of such names makes them by the thousand.
 */
export function pipelineNameCaseProblems(pipelines: readonly ResolvedPipeline[], file: string): Problem[] {
  const problems: Problem[] = [];
  const byKey = new Map<string, ResolvedPipeline[]>();
  const said = new Set<string>();
  for (const p of pipelines) {
    const key = logNameKey(p.name);
    const earlier = byKey.get(key);
    if (earlier === undefined) {
      byKey.set(key, [p]);
      continue;
    }
    earlier.push(p);
    if (said.has(p.pointer)) continue;
    for (const other of earlier) {
      // The same name twice is duplicate-pipeline-name, an error of its own.
      if (other.name === p.name) continue;
      const step = sharedStep(other, p);
      if (step === undefined) continue;
      said.add(p.pointer);
      problems.push(nameCaseWarning(other, p, step, file));
      break;
    }
  }
  return problems;
}

/** The first step of `p` whose log name `other` has too, as `s` or `S` and `s`. */
function sharedStep(other: ResolvedPipeline, p: ResolvedPipeline): string | undefined {
  const ids = new Map<string, string>();
  for (const s of other.steps) if (!ids.has(logNameKey(s.id))) ids.set(logNameKey(s.id), s.id);
  for (const s of p.steps) {
    const first = ids.get(logNameKey(s.id));
    if (first !== undefined)
      return first === s.id ? `step \`${s.id}\`` : `steps \`${first}\` and \`${s.id}\``;
  }
  return undefined;
}

function nameCaseWarning(first: ResolvedPipeline, p: ResolvedPipeline, steps: string, file: string): Problem {
  const names =
    first.pointer === p.pointer
      ? `two combinations of the matrix make pipeline names that differ only in case, \`${first.name}\` (${showValues(first.matrix)}) and \`${p.name}\` (${showValues(p.matrix)})`
      : `pipeline name \`${p.name}\` differs only in case from pipeline \`${first.name}\``;
  return warning({
    code: "log-name-case",
    message: `${names}: on a case-insensitive file system (${CASE_INSENSITIVE_SYSTEMS}) the logs of their ${steps} would be one file`,
    hint: "make the names differ in more than case",
    file,
    pointer: `${p.pointer}/name`,
  });
}

/**
 * Worker keys of the whole file that differ only in case: a warm worker's own log is
 * `logs/workers/<key>@<device>.log`, so workers `Cellpose` and `cellpose` on one GPU would write
 * one file. Two keys that are the step ids of one pipeline (a key defaults to its step's id) are
 * left to the step-id warning, which already names them.
 */
export function workerKeyCaseProblems(
  templates: readonly { spec: PipelineSpec; resolved: ResolvedPipeline }[],
  file: string,
): Problem[] {
  const problems: Problem[] = [];
  const first = new Map<string, { key: string; pipeline: string; fromId: boolean }>();
  for (const { spec, resolved } of templates) {
    resolved.steps.forEach((step, j) => {
      if (!step.worker) return;
      const { key } = step.worker;
      const fromId = spec.steps[j]?.worker?.key === undefined;
      const earlier = first.get(logNameKey(key));
      if (earlier === undefined) {
        first.set(logNameKey(key), { key, pipeline: resolved.pointer, fromId });
        return;
      }
      if (earlier.key === key || (fromId && earlier.fromId && earlier.pipeline === resolved.pointer)) return;
      problems.push(
        warning({
          code: "log-name-case",
          message: `worker key \`${key}\` differs only in case from worker key \`${earlier.key}\`: on a case-insensitive file system (${CASE_INSENSITIVE_SYSTEMS}) the two workers' logs on one GPU would be one file`,
          hint: "make the keys differ in more than case",
          file,
          pointer: `${step.pointer}/${fromId ? "id" : "worker/key"}`,
        }),
      );
    });
  }
  return problems;
}
