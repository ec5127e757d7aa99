/** The words of a size-out-of-range problem, one place for every key that holds a size. */
import { displayText } from "../text/safe-text.js";

/**
 * `subject` (`` `vram` of step `s` ``) is too large. A number past 2⁵³ is not shown: the parser has already rounded it
 * (9007199254740993 reads as …992), so the value shown would not be the one in the file.
 */
export function sizeTooLarge(
  subject: string,
  value: number | string,
): { code: "size-out-of-range"; message: string; hint: string } {
  const shown = typeof value === "string" ? `\`${displayText(value.trim(), 40)}\`` : "8 PiB or more";
  return {
    code: "size-out-of-range",
    message: `${subject} is too large: ${shown}`,
    hint: "sizes must stay below 8 PiB",
  };
}
