/** Turns the resolved templates into concrete pipelines, one per matrix combination. */
import { append } from "../lists/append.js";
import { error, type Problem } from "../problems/problem.js";
import type { PipelineSpec } from "../schema-types/pipeline.js";
import { argumentSizeProblems } from "./argument-sizes.js";
import {
  expandMatrix,
  type MatrixValues,
  placeholders,
  showValues,
  substitute,
  varyingNotInName,
} from "./expand-matrix.js";
import type { ResolvedPipeline, ResolvedStep } from "./model.js";

/** A template as expansion needs it: its matrix, and the pipeline it resolved to. */
export interface ExpandableTemplate {
  spec: Pick<PipelineSpec, "matrix">;
  resolved: ResolvedPipeline;
}

export function expandPipelines(
  templates: readonly ExpandableTemplate[],
  file: string,
): { value: ResolvedPipeline[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const out: ResolvedPipeline[] = [];
  const first = new Map<string, { pointer: string; values: MatrixValues }>();
  const saidTooLong = new Set<string>();
  for (const { spec, resolved } of templates) {
    // A name that leaves out a varying variable was reported by the matrix rule, once; its
    // expansions share names by the thousand. Otherwise values can still collide: [a, a],
    // 1 and "1", or p-{a}{b} with a: [1, 11], b: [1, ""] (both p-11).
    let said = varyingNotInName(resolved.template, spec.matrix).length > 0;
    for (const values of expandMatrix(spec.matrix)) {
      const p = applyMatrix(resolved, values);
      const earlier = first.get(p.name);
      if (earlier !== undefined && earlier.pointer !== resolved.pointer) {
        problems.push(
          error({
            code: "duplicate-pipeline-name",
            message: `pipeline name \`${p.name}\` is used more than once`,
            hint: "pipeline names identify runs, logs and locks; make each unique",
            file,
            pointer: `${resolved.pointer}/name`,
          }),
        );
      } else if (earlier !== undefined && !said) {
        said = true;
        problems.push(
          error({
            code: "duplicate-pipeline-name",
            message: `two combinations of the matrix make the pipeline name \`${p.name}\`: ${showValues(earlier.values)} and ${showValues(values)}`,
            hint: 'the name must tell every combination apart: give each variable distinct values (1 and "1" are the same text) and separate placeholders (p-{a}-{b})',
            file,
            pointer: `${resolved.pointer}/name`,
          }),
        );
      }
      if (earlier === undefined || earlier.pointer !== resolved.pointer)
        first.set(p.name, { pointer: resolved.pointer, values });
      append(problems, argumentSizeProblems(p, file, saidTooLong));
      out.push(p);
    }
  }
  return { value: out, problems };
}

/**
 * Characters of text the matrices may expand to, all templates together: names, commands, env,
 * cwd and the matrix values each pipeline records, as the plan will spell them out. Counting
 * pipelines and steps is not enough: one 100 kB value put into `{v}` 3,000 times is a 300 MB
 * plan from one pipeline. Bench's 20,000 × 10-step file holds about 6 MB of such text.
 */
const MAX_EXPANDED_CHARS = 200_000_000;

/**
 * What expanding would make, counted without expanding: a 270-byte matrix can ask for 10¹⁰
 * pipelines. The first template that takes the running total past a limit is the one reported.
 */
export function expansionProblem(
  templates: readonly ExpandableTemplate[],
  limits: { maxPipelines: number; maxSteps: number },
  file: string,
): Problem | undefined {
  // What the file writes out is never refused: the limits are on what matrices add to it.
  const maxPipelines = Math.max(limits.maxPipelines, templates.length);
  const maxSteps = Math.max(
    limits.maxSteps,
    templates.reduce((n, t) => n + t.resolved.steps.length, 0),
  );
  let pipelines = 0;
  let steps = 0;
  let chars = 0;
  for (const { spec, resolved } of templates) {
    // Floating point is exact up to 2⁵³ and only grows past the limit after that, which is all
    // a comparison needs.
    const combos = Object.values(spec.matrix ?? {}).reduce((n, values) => n * values.length, 1);
    pipelines += combos;
    steps += combos * resolved.steps.length;
    const where = spec.matrix ? `${resolved.pointer}/matrix` : resolved.pointer;
    if (pipelines > maxPipelines) {
      return error({
        code: "too-many-pipelines",
        message: `the matrices expand to ${count(pipelines)} pipelines, more than the limit of ${count(maxPipelines)}`,
        hint: "shrink the matrix, or raise `limits.max_pipelines` if the file really is meant to be that large",
        file,
        pointer: where,
        at: spec.matrix ? "value" : "key",
      });
    }
    if (steps > maxSteps) {
      return error({
        code: "too-many-steps",
        message: `the matrices expand to ${count(steps)} steps, more than the limit of ${count(maxSteps)}`,
        hint: "shrink the matrix, or raise `limits.max_steps` if the file really is meant to be that large",
        file,
        pointer: where,
        at: spec.matrix ? "value" : "key",
      });
    }
    // A file without a matrix holds its own text already: only what matrices make is counted.
    if (spec.matrix) chars += expandedChars(spec.matrix, resolved, combos);
    if (chars > MAX_EXPANDED_CHARS) {
      return error({
        code: "too-much-expanded-text",
        message: `the matrices expand to about ${count(Math.round(chars / 1e6))} MB of text (names, commands, env and cwd values), more than the limit of ${count(MAX_EXPANDED_CHARS / 1e6)} MB`,
        hint: "shorten the matrix values, or the text they are put into: each `{var}` repeats its value in every pipeline",
        file,
        pointer: where,
        at: "value",
      });
    }
  }
  return undefined;
}

/**
 * The characters one template's expansions hold, counted from the values' lengths: each value of
 * a variable is in combos ÷ (its count of values) of the pipelines, once per `{var}`. Steps with
 * no placeholder are shared in memory, but the plan writes them out for every pipeline.
 */
function expandedChars(
  matrix: NonNullable<PipelineSpec["matrix"]>,
  t: ResolvedPipeline,
  combos: number,
): number {
  const perVariable = new Map<string, number>();
  let chars = 0;
  for (const [name, values] of Object.entries(matrix)) {
    const all = values.reduce((n: number, v) => n + String(v).length, 0);
    const each = values.length === 0 ? 0 : (all * combos) / values.length;
    perVariable.set(name, each);
    // The plan records each pipeline's matrix values.
    chars += each + name.length * combos;
  }
  const text = (s: string): number => {
    let n = s.length * combos;
    if (s.includes("{")) for (const name of placeholders(s)) n += perVariable.get(name) ?? 0;
    return n;
  };
  const texts = (list: readonly string[]): number => list.reduce((n, s) => n + text(s), 0);
  chars += text(t.name) + t.template.length * combos;
  for (const s of t.steps) {
    chars += texts(s.argv) + (s.cwd === null ? 0 : text(s.cwd));
    for (const [k, v] of Object.entries(s.env)) chars += k.length * combos + text(v);
    if (s.worker) chars += texts(s.worker.argv) + texts(s.worker.args);
  }
  return chars;
}

const count = (n: number): string =>
  n <= Number.MAX_SAFE_INTEGER
    ? n.toLocaleString("en-US")
    : `more than ${Number.MAX_SAFE_INTEGER.toLocaleString("en-US")}`;

function applyMatrix(t: ResolvedPipeline, values: MatrixValues): ResolvedPipeline {
  // Always substitute, matrix or not: `{{` and `}}` are literal braces in every pipeline.
  // Unknown placeholders were reported once per template by the matrix rule.
  const sub = (s: string) => substitute(s, values, new Set());
  return {
    ...t,
    name: sub(t.name),
    matrix: values,
    steps: t.steps.map((s) => {
      // A step with nothing to substitute is the template's own (never changed later): a big
      // file of plain pipelines is not held twice while it expands (decision 0015).
      if (!hasBraces(s)) return s;
      return {
        ...s,
        argv: s.argv.map(sub),
        // The worker's own argv is shared by every pipeline using its key: only task args vary.
        worker: s.worker && { ...s.worker, args: s.worker.args.map(sub) },
        env: Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, sub(v)])),
        cwd: s.cwd === null ? null : sub(s.cwd),
      };
    }),
  };
}

/** Whether any string that expansion substitutes in holds a brace (a placeholder, `{{` or `}}`). */
function hasBraces(s: ResolvedStep): boolean {
  const braced = (text: string) => text.includes("{") || text.includes("}");
  return (
    s.argv.some(braced) ||
    (s.worker?.args.some(braced) ?? false) ||
    Object.values(s.env).some(braced) ||
    (s.cwd !== null && braced(s.cwd))
  );
}
