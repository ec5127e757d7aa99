import type { Problem } from "../../problems/problem.js";
import type { PipelineSpec } from "../../schema-types/pipeline.js";
import type { ResolvedPipeline } from "../model.js";

/** A small rule over one pipeline template: it pushes problems and never throws. */
interface RuleContext {
  file: string;
  spec: PipelineSpec;
  pipeline: ResolvedPipeline;
  report: (problem: Problem) => void;
}

export type Rule = (ctx: RuleContext) => void;
