/** GitHub Actions workflow commands: one `::error file=…,line=…::message` per problem. */
import type { Problem } from "../../problems/problem.js";
import { escapeLines, escapeText } from "../../text/safe-text.js";

// Workflow command data and properties escape %, CR, LF (and , : in properties); other control
// characters from the user's input are escaped first, since the log is shown on a terminal too.
const escapeData = (s: string): string =>
  s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
const escapeProperty = (s: string): string => escapeData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");

export function formatGithub(problems: readonly Problem[]): string {
  return problems
    .map((p) => {
      const props = [
        p.file !== undefined ? `file=${escapeProperty(escapeText(p.file))}` : undefined,
        p.line !== undefined ? `line=${p.line}` : undefined,
        p.column !== undefined ? `col=${p.column}` : undefined,
        `title=${escapeProperty(`gpuplan ${p.code}`)}`,
      ].filter(Boolean);
      const text = escapeLines(p.hint ? `${p.message}\nhint: ${p.hint}` : p.message);
      return `::${p.severity === "error" ? "error" : "warning"} ${props.join(",")}::${escapeData(text)}\n`;
    })
    .join("");
}
