import { didYouMean } from "../../problems/did-you-mean.js";
import { error } from "../../problems/problem.js";
import { placeholderSpans, varyingNotInName } from "../expand-matrix.js";
import type { Rule } from "./rule.js";

/** Every {var} must be a matrix variable, and the name must tell the expansions apart. */
export const matrixPlaceholders: Rule = ({ pipeline, spec, file, invalid, report }) => {
  // A matrix the schema rejected is reported already; its placeholders are not "unknown".
  if (invalid(`${pipeline.pointer}/matrix`)) return;
  const vars = Object.keys(spec.matrix ?? {});
  const check = (text: string, pointer: string) => {
    for (const { name, index, text: written } of placeholderSpans(text)) {
      if (vars.includes(name)) continue;
      const suggestion = didYouMean(name, vars);
      report(
        error({
          code: "unknown-matrix-variable",
          message: `\`{${name}}\` is not a matrix variable of pipeline \`${pipeline.name}\``,
          hint: suggestion
            ? `did you mean \`{${suggestion}}\`?`
            : vars.length
              ? `matrix variables: ${vars.join(", ")}; write {{ for a literal brace`
              : "this pipeline has no matrix; write {{ and }} for literal braces",
          file,
          pointer,
          within: { index, text: written },
        }),
      );
    }
  };
  check(spec.name, `${pipeline.pointer}/name`);
  spec.steps.forEach((s, j) => {
    const at = pipeline.steps[j]!.pointer;
    if (typeof s.run === "string") check(s.run, `${at}/run`);
    else
      s.run?.forEach((arg, k) => {
        check(String(arg), `${at}/run/${k}`);
      });
    for (const [k, v] of Object.entries(s.env ?? {})) check(String(v), `${at}/env/${k}`);
    if (s.cwd !== undefined) check(s.cwd, `${at}/cwd`);
  });
  for (const [k, v] of Object.entries(spec.env ?? {})) check(String(v), `${pipeline.pointer}/env/${k}`);
  const missing = varyingNotInName(spec.name, spec.matrix);
  if (missing.length > 0) {
    report(
      error({
        code: "matrix-name-not-unique",
        message: `the name of pipeline \`${spec.name}\` does not use matrix variable${missing.length > 1 ? "s" : ""} ${missing.map((m) => `\`{${m}}\``).join(", ")}, so its expansions would share a name`,
        hint: `e.g. name: ${spec.name}-${missing.map((m) => `{${m}}`).join("-")}`,
        file,
        pointer: `${pipeline.pointer}/name`,
      }),
    );
  }
};
