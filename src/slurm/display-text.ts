/**
 * Text that comes from Slurm (node names, reasons, stderr) is shown to people only through this:
 * control characters, escape sequences and invisible direction overrides become visible escapes,
 * and long values are cut, so a hostile or broken value can neither repaint the terminal nor
 * hide what follows it.
 */
const isUnsafe = (code: number): boolean =>
  code <= 0x1f ||
  (code >= 0x7f && code <= 0x9f) ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x2028 && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069) ||
  code === 0xfeff;

export function displayText(value: string, maxLength = 200): string {
  const cut = value.length > maxLength ? `${value.slice(0, maxLength)}…` : value;
  let out = "";
  for (const c of cut) {
    const code = c.codePointAt(0)!;
    if (!isUnsafe(code)) out += c;
    else out += code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  }
  return out;
}
