import type { Problem } from "../../problems/problem.js";
import type { PipelineSpec } from "../../schema-types/pipeline.js";
import type { ResolvedPipeline } from "../model.js";

/** A small rule over one pipeline template: it pushes problems and never throws. */
interface RuleContext {
  file: string;
  spec: PipelineSpec;
  pipeline: ResolvedPipeline;
  /**
   * Whether the schema rejected the value at this pointer (or around it) and it was dropped: a
   * rule says nothing about it being absent, since its problem is already reported (#11.12).
   */
  invalid: (pointer: string) => boolean;
  report: (problem: Problem) => void;
}

export type Rule = (ctx: RuleContext) => void;
