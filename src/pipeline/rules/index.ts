import { deviceVariables } from "./device-variables.js";
import { gpuOptionsOnCpuSteps } from "./gpu-options.js";
import { loneSurrogates } from "./lone-surrogates.js";
import { matrixPlaceholders } from "./matrix-placeholders.js";
import { memoryConversions } from "./memory-conversions.js";
import { needsGraph } from "./needs-graph.js";
import { nulBytes } from "./nul-bytes.js";
import type { Rule } from "./rule.js";
import { runCommand } from "./run-command.js";
import { stepIdCase } from "./step-id-case.js";
import { uniqueStepIds } from "./step-ids.js";
import { workerSteps } from "./worker-steps.js";

/** The template rules, in the order their problems read best. */
export const RULES: readonly Rule[] = [
  uniqueStepIds,
  stepIdCase,
  nulBytes,
  loneSurrogates,
  deviceVariables,
  needsGraph,
  runCommand,
  workerSteps,
  matrixPlaceholders,
  gpuOptionsOnCpuSteps,
  memoryConversions,
];
