/** A pure code frame: the lines around line:column with a caret under the column. */
export interface FrameStyle {
  dim: (s: string) => string;
  mark: (s: string) => string;
}

const plain: FrameStyle = { dim: (s) => s, mark: (s) => s };

/** `lines` is the source split once by the caller (splitting per problem is quadratic). */
export function codeFrame(
  lines: readonly string[],
  line: number,
  column: number,
  style: FrameStyle = plain,
  context = 2,
): string {
  const first = Math.max(1, line - context);
  // A file ending in a newline has an empty last "line" that is not worth showing.
  const count = lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
  const last = Math.max(line, Math.min(count, line + context));
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const gutter = `${n === line ? ">" : " "} ${String(n).padStart(width)} |`;
    const content = (lines[n - 1] ?? "").replaceAll("\t", "  ");
    out.push(
      n === line
        ? `${style.mark(gutter.slice(0, 1))}${style.dim(gutter.slice(1))} ${content}`
        : style.dim(`${gutter} ${content}`),
    );
    if (n === line) {
      const pad = " ".repeat(Math.max(0, column - 1));
      out.push(`${style.dim(`  ${" ".repeat(width)} |`)} ${pad}${style.mark("^")}`);
    }
  }
  return out.join("\n");
}
