/**
 * gpuplan as a library: the same core the CLI uses. Everything here returns data and problems;
 * nothing prints or exits.
 */
export { type CompileResult, compilePlan } from "./compile/compile.js";
export { listPresets, resolveDeviceMap } from "./compile/device-map/index.js";
export { detectInventory } from "./detect/index.js";
export { type InventoryChoice, loadInventoryFile, targetInventory } from "./inventory/load-inventory.js";
export { TARGETS } from "./inventory/targets.js";
export type { DetectOptions, GpuInfo, Inventory } from "./inventory/types.js";
export { checkPipelineText, type LoadedPipelineFile, loadPipelineFile } from "./pipeline/load-pipeline.js";
export { InputProblems, InternalError, UsageError, VendorError } from "./problems/errors.js";
export type { Problem, Severity } from "./problems/problem.js";
export type { GpuplanPipelineFile } from "./schema-types/pipeline.js";
export type { GpuplanPlan, PlannedPipeline, PlannedStep } from "./schema-types/plan.js";
export { parseDuration } from "./units/duration.js";
export { parseSize } from "./units/size.js";
export { VERSION } from "./version.js";
