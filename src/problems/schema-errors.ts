/**
 * Turns ajv's errors from a precompiled validator into located Problems. Unknown and missing
 * properties point at the key (Redocly's habit); everything else at the value.
 */
import { displayText } from "../text/safe-text.js";
import { DURATION_UNITS_TEXT, durationSuggestion } from "../units/duration.js";
import { SIZE_UNITS_TEXT, sizeSuggestions } from "../units/size.js";
import { didYouMean } from "./did-you-mean.js";
import { error, type Problem, toPointer } from "./problem.js";

export interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  /** Set on the errors about a property name (`propertyNames`): the offending name. */
  propertyName?: string;
}

/** Keywords that only say "one of the branches failed"; their branch errors say more. */
const NOISE = new Set(["if", "anyOf", "oneOf", "then", "else", "propertyNames"]);

export function schemaProblems(
  errors: readonly AjvError[],
  file: string | undefined,
  knownProperties: (pointer: string) => readonly string[] = () => [],
  valueAt: (pointer: string) => unknown = () => undefined,
): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  // Asked once per mapping, not once per unknown key in it.
  const knownAt = new Map<string, readonly string[]>();
  const known = (pointer: string): readonly string[] => {
    let keys = knownAt.get(pointer);
    if (!keys) {
      keys = knownProperties(pointer);
      knownAt.set(pointer, keys);
    }
    return keys;
  };
  // anyOf branches each complain about the same value (e.g. "must be integer" and "must match
  // pattern" for a size); keep one message per location so the user sees one clear problem.
  const byPointer = new Map<string, AjvError[]>();
  for (const e of withoutMismatchedBranches(errors)) {
    if (NOISE.has(e.keyword)) continue;
    if (e.propertyName !== undefined) {
      const p = nameProblem(e, e.propertyName, file);
      if (!seen.has(p.pointer!)) problems.push(p);
      seen.add(p.pointer!);
      continue;
    }
    const list = byPointer.get(e.instancePath) ?? [];
    list.push(e);
    byPointer.set(e.instancePath, list);
  }
  for (const [pointer, list] of byPointer) {
    const typeLike = list.filter((e) => e.keyword === "type" || e.keyword === "pattern");
    const collapse = typeLike.length > 1 && list.some((e) => e.schemaPath.includes("anyOf"));
    for (const e of list) {
      if (collapse && (e.keyword === "type" || e.keyword === "pattern")) {
        const key = `${pointer}|anyOf`;
        if (seen.has(key)) continue;
        seen.add(key);
        problems.push(
          error({
            code: "schema-invalid-value",
            message: `${describe(pointer)} has an invalid value`,
            hint: hintForSchemaPath(e.schemaPath, valueAt(pointer)),
            file,
            pointer,
          }),
        );
        continue;
      }
      const p = toProblem(e, file, known, valueAt);
      const key = `${p.pointer}|${p.code}|${p.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      problems.push(p);
    }
  }
  return problems;
}

/**
 * ajv reports every branch of a failed anyOf. When the value has the type of some branch (an
 * object where a string or an object is allowed), the branches of other types only add a false
 * "must be string": drop them and keep what the matching branch says. When no branch has the
 * value's type, all stay (and are collapsed into one problem below).
 */
function withoutMismatchedBranches(errors: readonly AjvError[]): readonly AjvError[] {
  const anyOfs = errors.filter((e) => e.keyword === "anyOf");
  if (anyOfs.length === 0) return errors;
  const drop = new Set<AjvError>();
  for (const a of anyOfs) {
    const prefix = `${a.schemaPath}/`;
    const branches = new Map<string, AjvError[]>();
    for (const e of errors) {
      if (e === a || !e.schemaPath.startsWith(prefix)) continue;
      if (e.instancePath !== a.instancePath && !e.instancePath.startsWith(`${a.instancePath}/`)) continue;
      const branch = e.schemaPath.slice(prefix.length).split("/")[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const mismatched = [...branches].filter(([branch, list]) =>
      list.some(
        (e) =>
          e.keyword === "type" &&
          e.instancePath === a.instancePath &&
          e.schemaPath === `${prefix}${branch}/type`,
      ),
    );
    if (mismatched.length === 0 || mismatched.length === branches.size) continue;
    for (const [, list] of mismatched) for (const e of list) drop.add(e);
  }
  return drop.size === 0 ? errors : errors.filter((e) => !drop.has(e));
}

/** A key the schema's `propertyNames` rejects: pointed at, with what names may be. */
function nameProblem(e: AjvError, name: string, file: string | undefined): Problem {
  const what = /Env\//.test(e.schemaPath)
    ? "environment variable names"
    : /matrix/.test(e.schemaPath)
      ? "matrix variable names"
      : undefined;
  return error({
    code: "schema-invalid-value",
    message: `\`${name}\` is not a valid name in ${describe(e.instancePath)}`,
    hint: what
      ? `${what} are letters, digits and _, and do not start with a digit`
      : `names must match ${String(e.params.pattern)}`,
    file,
    pointer: e.instancePath + toPointer([name]),
    at: "key",
  });
}

/** ajv's `string,number,boolean` as "string, number or boolean". */
function typeList(types: string): string {
  const list = types.split(",");
  return list.length > 1 ? `${list.slice(0, -1).join(", ")} or ${list.at(-1)}` : types;
}

/** What a size or duration may be, after what `value` most likely meant (`12gib`: 12GiB). */
function hintForSchemaPath(schemaPath: string, value?: unknown): string | undefined {
  const text = typeof value === "string" ? value : "";
  const meant = (options: readonly string[]) =>
    options.length === 0 ? "" : `did you mean ${options.map((o) => `\`${o}\``).join(" or ")}? `;
  if (/Size/.test(schemaPath))
    return `${meant(sizeSuggestions(text))}sizes are bytes or a number with a unit: ${SIZE_UNITS_TEXT}`;
  if (/Duration/.test(schemaPath)) {
    const duration = durationSuggestion(text);
    return `${meant(duration ? [duration] : [])}durations are milliseconds or a number with a unit: ${DURATION_UNITS_TEXT}`;
  }
  return undefined;
}

/** A size or duration the schema's pattern refused: named by its kind, the text shown (cut, escaped). */
function unitMessage(schemaPath: string, at: string, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const kind = /Size/.test(schemaPath) ? "size" : /Duration/.test(schemaPath) ? "duration" : undefined;
  return kind && `${at} is not a ${kind}: \`${displayText(value, 40)}\``;
}

function describe(pointer: string): string {
  return pointer === "" ? "the document" : `\`${pointer.slice(1).replaceAll("/", ".")}\``;
}

function toProblem(
  e: AjvError,
  file: string | undefined,
  known: (pointer: string) => readonly string[],
  valueAt: (pointer: string) => unknown,
): Problem {
  const at = describe(e.instancePath);
  switch (e.keyword) {
    case "additionalProperties": {
      const prop = String(e.params.additionalProperty);
      const suggestion = didYouMean(prop, known(e.instancePath));
      return error({
        code: "schema-unknown-property",
        message: `unknown property \`${prop}\` in ${at}`,
        hint: suggestion ? `did you mean \`${suggestion}\`?` : undefined,
        file,
        pointer: e.instancePath + toPointer([prop]),
        at: "key",
      });
    }
    case "required":
      return error({
        code: "schema-missing-property",
        message: `${at} is missing the required property \`${String(e.params.missingProperty)}\``,
        file,
        pointer: e.instancePath,
        at: "key",
      });
    case "enum": {
      const allowed = (e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v));
      return error({
        code: "schema-invalid-value",
        message: `${at} must be one of ${allowed.join(", ")}`,
        file,
        pointer: e.instancePath,
      });
    }
    case "const":
      return error({
        code: "schema-invalid-value",
        message: `${at} must be ${JSON.stringify(e.params.allowedValue)}`,
        file,
        pointer: e.instancePath,
      });
    case "type":
      return error({
        code: "schema-wrong-type",
        message: `${at} must be ${typeList(String(e.params.type))}`,
        hint: hintForSchemaPath(e.schemaPath, valueAt(e.instancePath)),
        file,
        pointer: e.instancePath,
      });
    case "pattern":
      return error({
        code: "schema-invalid-value",
        message: unitMessage(e.schemaPath, at, valueAt(e.instancePath)) ?? `${at} has an invalid format`,
        hint:
          hintForSchemaPath(e.schemaPath, valueAt(e.instancePath)) ??
          `expected to match ${String(e.params.pattern)}`,
        file,
        pointer: e.instancePath,
      });
    case "false schema":
      // A key the schema forbids in this company (dependentSchemas: `retries` beside `ladder`).
      return error({
        code: "schema-invalid-value",
        message: `${at} is not allowed here`,
        hint: /dependentSchemas\/ladder/.test(e.schemaPath)
          ? "an on_oom ladder replaces `retries` and `fallback`: write them as its rungs (retry, …, cpu)"
          : undefined,
        file,
        pointer: e.instancePath,
        at: "key",
      });
    case "minItems":
    case "maxItems":
    case "minLength":
    case "maxLength":
      return error({
        code: "schema-invalid-value",
        message: `${at} ${sizeRule(e.keyword, Number(e.params.limit))}`,
        file,
        pointer: e.instancePath,
      });
    default:
      return error({
        code: "schema-invalid-value",
        message: `${at} ${e.message ?? "is invalid"}`,
        file,
        pointer: e.instancePath,
      });
  }
}

/** "must not be empty", "must have at least 2 items": in place of Ajv's "must NOT have fewer than 1 items". */
function sizeRule(keyword: string, limit: number): string {
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  if ((keyword === "minItems" || keyword === "minLength") && limit === 1) return "must not be empty";
  if (keyword === "minItems") return `must have at least ${plural(limit, "item")}`;
  if (keyword === "maxItems") return `must have at most ${plural(limit, "item")}`;
  if (keyword === "minLength") return `must be at least ${plural(limit, "character")} long`;
  return `must be at most ${plural(limit, "character")} long`;
}
