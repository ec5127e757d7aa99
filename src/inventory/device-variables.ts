/**
 * The variables that choose which GPUs a process sees. gpuplan sets them for every step from the
 * GPUs bound to its pipeline (and removes inherited ones), so the slot lock it holds covers every
 * GPU the step can reach; a step's own `env` may not name them.
 */
export const DEVICE_VARIABLES = [
  "CUDA_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "ROCR_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
] as const;

/** Whether `name` is one of the variables gpuplan alone sets to pick a step's GPUs. */
export const isDeviceVariable = (name: string): boolean =>
  (DEVICE_VARIABLES as readonly string[]).includes(name);
