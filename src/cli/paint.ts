import type { Paint } from "./format/human.js";
import { noPaint } from "./format/human.js";
import { shouldUseColor } from "./output.js";

/** Colour for a TTY only; chalk is loaded only then, to keep non-interactive start-up lean. */
export async function paintFor(stream: NodeJS.WriteStream = process.stderr): Promise<Paint> {
  if (!shouldUseColor(stream)) return noPaint;
  const { Chalk } = await import("chalk");
  const c = new Chalk({ level: 1 });
  return { red: c.red, yellow: c.yellow, dim: c.dim, bold: c.bold, cyan: c.cyan };
}
