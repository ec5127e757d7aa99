import type { Problem } from "../../problems/problem.js";
import type { PipelineSpec } from "../../schema-types/pipeline.js";
import type { ResolvedPipeline } from "../model.js";

/** A small rule over one pipeline template: it pushes problems and never throws. */
export interface RuleContext {
  file: string;
  spec: PipelineSpec;
  pipeline: ResolvedPipeline;
  report: (problem: Problem) => void;
}

export type Rule = (ctx: RuleContext) => void;

export const label = (p: ResolvedPipeline, stepId?: string): string =>
  stepId === undefined ? `pipeline \`${p.name}\`` : `step \`${stepId}\` of pipeline \`${p.name}\``;
