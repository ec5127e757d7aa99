/**
 * The built-in device-map presets. `cuda:N` here means the pipeline's N-th GPU, whatever its
 * real id (`cuda:5`, `rocm:1`); the resolver maps it. Component names follow diffusers.
 */
import type { DeviceMapPreset } from "../../schema-types/presets.js";

/** schemas/presets.schema.json, what `gpuplan presets --json` lists. */
export type { DeviceMapPreset } from "../../schema-types/presets.js";

const ALL_ON_ONE = { text_encoder: "cuda:0", unet: "cuda:0", vae: "cuda:0", controlnet: "cuda:0" };
const NO_CONTROLNET = { text_encoder: "cuda:0", unet: "cuda:0", vae: "cuda:0" };
// On two cards the ControlNet stays beside the UNet because both run at every denoising step;
// the text encoder and VAE run once per image, so the hop to the second card costs little.
const SPLIT_TWO = { text_encoder: "cuda:1", unet: "cuda:0", vae: "cuda:1", controlnet: "cuda:0" };

const PRESETS: readonly DeviceMapPreset[] = [
  {
    name: "a100-80gb",
    description: "Diffusion with ControlNet, every component on one A100 80GB",
    memoryClass: "80 GB",
    gpus: 1,
    components: ALL_ON_ONE,
  },
  {
    name: "a100-40gb",
    description: "Diffusion on one A100 40GB, without ControlNet",
    memoryClass: "40 GB",
    gpus: 1,
    components: NO_CONTROLNET,
  },
  {
    name: "rtx4090",
    description: "Diffusion on one RTX 4090 (24 GB), without ControlNet",
    memoryClass: "24 GB",
    gpus: 1,
    components: NO_CONTROLNET,
  },
  {
    name: "h100-80gb",
    description: "Diffusion with ControlNet, every component on one H100 80GB",
    memoryClass: "80 GB",
    gpus: 1,
    components: ALL_ON_ONE,
  },
  {
    name: "h200",
    description: "Diffusion with ControlNet, every component on one H200 (141 GB)",
    memoryClass: "141 GB",
    gpus: 1,
    components: ALL_ON_ONE,
  },
  {
    name: "l4",
    description: "Diffusion on one L4 (24 GB), without ControlNet",
    memoryClass: "24 GB",
    gpus: 1,
    components: NO_CONTROLNET,
  },
  {
    name: "l40s",
    description: "Diffusion with ControlNet, every component on one L40S (48 GB)",
    memoryClass: "48 GB",
    gpus: 1,
    components: ALL_ON_ONE,
  },
  {
    name: "mi300x",
    description: "Diffusion with ControlNet, every component on one AMD MI300X (192 GB)",
    memoryClass: "192 GB",
    gpus: 1,
    components: ALL_ON_ONE,
  },
  {
    name: "2xa100-80gb",
    description: "Two A100 80GB: UNet and ControlNet on the first, text encoder and VAE on the second",
    memoryClass: "2 × 80 GB",
    gpus: 2,
    components: SPLIT_TWO,
  },
  {
    name: "2xrtx4090",
    description: "Two RTX 4090: UNet and ControlNet on the first, text encoder and VAE on the second",
    memoryClass: "2 × 24 GB",
    gpus: 2,
    components: SPLIT_TWO,
  },
];

/** The preset with this name, ignoring case and surrounding blanks; undefined when unknown. */
export function findPreset(name: string): DeviceMapPreset | undefined {
  const wanted = name.trim().toLowerCase();
  return PRESETS.find((p) => p.name === wanted);
}

/** Every preset's canonical name, in table order. */
export function presetNames(): string[] {
  return PRESETS.map((p) => p.name);
}

/** The preset table for `gpuplan presets`: copies, so callers cannot edit the table. */
export function listPresets(): DeviceMapPreset[] {
  return PRESETS.map((p) => ({ ...p, components: { ...p.components } }));
}
