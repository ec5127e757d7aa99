/**
 * How a gpuplan command ends (the contract scripts rely on, docs/reference): its own module so that
 * the code registry (codes.ts, which gives each code its exit status) and the error classes
 * (errors.ts, which carry codes) need not import each other.
 */
export const EXIT = {
  ok: 0,
  problems: 1,
  usage: 2,
  busy: 75,
  hangup: 129,
  interrupted: 130,
  quit: 131,
  terminated: 143,
} as const;
