/**
 * gpuplan reads every file as YAML 1.2 (js-yaml's core schema), whatever its `%YAML` directive
 * says; js-yaml accepts `%YAML 1.1` without a word and refuses only a major version other than 1.
 * A 1.1 file's plain `yes`, `on`, `0777` and `1:30` then read as the text `yes`, the text `on`,
 * 777 and the text `1:30`, where its author meant true, true, 511 and 90. So the directive gets a
 * warning at itself: the file is read as 1.2, and its author is told so. YAML 1.2 asks a processor
 * to warn of a later minor version (`%YAML 1.3`) too.
 */
import { type Problem, warning } from "../problems/problem.js";

/** The `%YAML` directive of a document js-yaml read, with its offset; only the lines before `---` can hold one. */
function yamlDirective(text: string): { version: string; offset: number } | undefined {
  let offset = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  // Directives, comments and blank lines only, up to the document's start: a quoted string
  // continued at column 0 further down may hold `%YAML` as text.
  while (offset < text.length) {
    const end = text.indexOf("\n", offset);
    const line = text.slice(offset, end === -1 ? text.length : end);
    const version = /^%YAML[ \t]+([0-9]+\.[0-9]+)(?=[ \t]|#|\r|$)/.exec(line)?.[1];
    if (version !== undefined) return { version, offset };
    if (!/^(?:%|[ \t]*(?:#|\r?$))/.test(line)) return undefined;
    if (end === -1) return undefined;
    offset = end + 1;
  }
  return undefined;
}

/** A warning at a `%YAML` directive naming a version other than 1.2, the one gpuplan reads. */
export function yamlVersionWarning(file: string, text: string): Problem | undefined {
  const directive = yamlDirective(text);
  if (directive === undefined || directive.version === "1.2") return undefined;
  const older = /^1\.[01]$/.test(directive.version);
  return warning({
    code: "yaml-version",
    message: older
      ? `the file says it is YAML ${directive.version}, but gpuplan reads YAML 1.2, where plain yes/no/on/off are text (not true/false), 0777 is 777 (not 511) and 1:30 is text (not 90)`
      : `the file says it is YAML ${directive.version}, but gpuplan reads YAML 1.2`,
    hint: older
      ? "check such values (quote text; write true/false, 0o777, 90), then write `%YAML 1.2` or remove the line"
      : "write `%YAML 1.2` or remove the line",
    file,
    offset: directive.offset,
  });
}
