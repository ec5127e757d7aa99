import { createPaint, type Paint } from "../ui/paint.js";
import { shouldUseColor } from "./output.js";

/** Colour for a person at a terminal only (a TTY, no NO_COLOR, or FORCE_COLOR). */
export function paintFor(stream: NodeJS.WriteStream = process.stderr): Paint {
  return createPaint(shouldUseColor(stream));
}
