/**
 * A parsed source file (YAML or JSON — JSON is YAML). Data comes from js-yaml, which is about
 * ten times faster than building `yaml`'s position-keeping document; that document is built
 * only when a problem has to be located (see locate.ts), so a clean compile of a large file
 * never pays for it.
 */
import { CORE_SCHEMA, load, YAMLException } from "js-yaml";
import { error, type Problem } from "../problems/problem.js";
import { displayText } from "../text/safe-text.js";
import { aliasOverrun, MAX_ALIAS_CHARS, MAX_ALIAS_NODES } from "./alias-budget.js";
import { collectionKeyOffsets, mayHoldCollectionKey } from "./collection-keys.js";
import { duplicateKeys } from "./duplicate-keys.js";
import { linePositions } from "./line-positions.js";
import { mergeKeyPointers } from "./merge-keys.js";
import type { SourceFile } from "./read-source-text.js";
import { yamlVersionWarning } from "./yaml-version.js";

export type { SourceFile } from "./read-source-text.js";
export { readSourceText } from "./read-source-text.js";

export interface ParsedSource {
  source: SourceFile;
  data: unknown;
  problems: Problem[];
}

/** Parse YAML/JSON text (YAML 1.2 core schema: no dates, no custom tags), collecting syntax problems. */
export function parseSource(file: string, text: string): ParsedSource {
  const source: SourceFile = { file, text: withLineFeeds(text) };
  if (text.trim() === "") {
    return {
      source,
      data: undefined,
      problems: [error({ code: "empty-file", message: "the file is empty", file, offset: 0 })],
    };
  }
  const notText = notTextProblem(file, text);
  if (notText) return { source, data: undefined, problems: [notText] };
  try {
    const data = load(text, { schema: CORE_SCHEMA, filename: file, json: false });
    if (data === null && holdsOnlyComments(text)) {
      const message = "the file is empty: it holds only comments";
      return { source, data: undefined, problems: [error({ code: "empty-file", message, file, offset: 0 })] };
    }
    // Only a file with an anchor can repeat anything.
    const overrun = text.includes("&") ? aliasOverrun(data, text.length) : undefined;
    if (overrun) return { source, data: undefined, problems: [aliasProblem(overrun, file)] };
    const merges = text.includes("<<") ? mergeKeyPointers(data) : [];
    if (merges.length > 0)
      return { source, data: undefined, problems: merges.map((p) => mergeProblem(p, file)) };
    // Read from the text with line feeds, as locating is: a lone-CR file reads otherwise there.
    const keys = mayHoldCollectionKey(text) ? collectionKeyOffsets(source.text, data) : [];
    if (keys.length > 0)
      return { source, data: undefined, problems: keys.map((at) => collectionKeyProblem(at, file)) };
    // Most files never write `%YAML`: they are not scanned.
    const version = text.includes("%YAML") ? yamlVersionWarning(file, source.text) : undefined;
    return { source, data, problems: version ? [version] : [] };
  } catch (e) {
    if (!(e instanceof YAMLException)) throw e;
    return { source, data: undefined, problems: syntaxProblems(e, file, source.text) };
  }
}

/**
 * Comments, blank lines, directives and document markers only: a file whose content is all
 * commented out is empty (as `empty-file` says), not a document that "must be object". An
 * explicit `~` or `null` is content, and stays a wrong type. Asked only when js-yaml read null.
 */
function holdsOnlyComments(text: string): boolean {
  // Line by line: one pattern over the whole text backtracks exponentially on blank lines.
  return text
    .split(/\r\n|\r|\n/)
    .every((line) => /^\ufeff?[ \t]*(?:#.*)?$|^\ufeff?(?:---|\.\.\.|%.*)(?:[ \t]+#.*)?[ \t]*$/su.test(line));
}

/**
 * The text with each lone CR (a classic Mac line end) as LF, for locating problems. YAML 1.2 and
 * js-yaml break lines at a lone CR, but the `yaml` package's document, the offset scan, line
 * counting and code frames break only at LF: a lone-CR file had every problem at 1:1 and the
 * whole file as one line of its code frame. One character for one keeps every offset; CRLF stays.
 */
function withLineFeeds(text: string): string {
  return text.includes("\r") ? text.replace(/\r(?!\n)/g, "\n") : text;
}

/**
 * A file read as UTF-8 that is not UTF-8 text: a NUL byte (a binary file, or UTF-16) or the
 * replacement character the decoder put where bytes were not UTF-8 (Latin-1, Windows-1252). Said
 * so at the first such place, instead of a YAML error about "non-printable characters" over a
 * code frame of binary, or a value silently changed.
 */
function notTextProblem(file: string, text: string): Problem | undefined {
  const nul = text.indexOf("\0");
  // UTF-16 with a byte-order mark: FF FE or FE FF decode to two replacement characters; without
  // one, ASCII in UTF-16 has a NUL beside every character.
  const utf16 = text.startsWith("\ufffd\ufffd") || /^(?:[^\0]\0){4}|^(?:\0[^\0]){4}/.test(text);
  if (utf16) {
    return error({
      code: "not-a-text-file",
      message: "the file is UTF-16 text; gpuplan reads UTF-8",
      hint: "save it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)",
      file,
      offset: 0,
    });
  }
  if (nul !== -1) {
    return error({
      code: "not-a-text-file",
      message: "the file is not a text file: it holds a NUL byte",
      hint: "give gpuplan a YAML or JSON file",
      file,
      offset: nul,
    });
  }
  const bad = text.indexOf("\ufffd");
  if (bad !== -1) {
    return error({
      code: "not-a-text-file",
      message: "the file is not UTF-8 text here (or holds U+FFFD, the mark of an earlier failed conversion)",
      hint: "save it as UTF-8 (a Latin-1 file: iconv -f LATIN1 -t UTF-8)",
      file,
      offset: bad,
    });
  }
  return undefined;
}

function aliasProblem(overrun: NonNullable<ReturnType<typeof aliasOverrun>>, file: string): Problem {
  const nodes = MAX_ALIAS_NODES.toLocaleString("en-US");
  const chars = MAX_ALIAS_CHARS.toLocaleString("en-US");
  const [message, hint] =
    overrun.kind === "cycle"
      ? [
          "this alias is inside the node it names, so the data would never end",
          "an alias (*name) can only repeat a node that is complete before it",
        ]
      : overrun.kind === "characters"
        ? [
            `by here, aliases repeat more than ${chars} characters of text`,
            `aliases may repeat at most ${nodes} nodes and ${chars} characters in all; write the repeated part out, or use a matrix`,
          ]
        : [
            `aliases here repeat more than ${nodes} nodes (a YAML "billion laughs")`,
            `aliases may repeat at most ${nodes} nodes and ${chars} characters in all; write the repeated part out, or use a matrix`,
          ];
  return error({ code: "alias-expansion", message, hint, file, pointer: overrun.pointer });
}

/**
 * The merged keys are missing from the data, so the file means something else than it says: the
 * rest of the checks would only add confusing errors (a missing `run`), and stop here.
 */
function mergeProblem(pointer: string, file: string): Problem {
  return error({
    code: "merge-key",
    message: "`<<` is a YAML merge key, which gpuplan does not read: nothing is merged here",
    hint: "write the keys out (in a pipeline file, settings every step shares go under `defaults:`)",
    file,
    pointer,
    at: "key",
  });
}

/**
 * The key came out of js-yaml as a string the file never wrote (`a,b`, `[object Object]`), so
 * the data means something else than the file says: stop here, as for a merge key.
 */
function collectionKeyProblem(offset: number, file: string): Problem {
  return error({
    code: "collection-key",
    message: "a list or mapping is used as a key here; gpuplan keys are names (text)",
    hint: 'write the key as a name (quote it if it holds [ ] { } or commas: "a,b": …)',
    file,
    offset,
  });
}

/** js-yaml gives no position for a second document: point at its `---` (or the first one after content). */
function secondDocumentOffset(text: string): number {
  const markers = [...text.matchAll(/^---(?=\s|$)/gm)].map((m) => m.index ?? 0);
  const afterContent = markers.find(
    (at) =>
      text
        .slice(0, at)
        .replace(/^\s*(#.*)?$/gm, "")
        .trim() !== "",
  );
  return afterContent ?? 0;
}

/**
 * Where js-yaml's error is in `text`. js-yaml drops a leading byte-order mark before reading, so
 * its positions in a file that starts with one are one short: every syntax error pointed a
 * character early, one at a line's start at the end of the line before.
 */
function markOffset(e: YAMLException, text: string): number | undefined {
  const position = e.mark?.position;
  if (position === undefined) return undefined;
  return text.charCodeAt(0) === 0xfeff ? position + 1 : position;
}

function syntaxProblems(e: YAMLException, file: string, text: string): Problem[] {
  const reason = e.reason ?? "invalid YAML";
  // js-yaml says what went wrong in `reason`; these are its fixed phrases for the two cases a
  // user most often needs told apart.
  if (reason.startsWith("duplicated mapping key"))
    return duplicateKeyProblems(file, text, markOffset(e, text) ?? 0);
  return [syntaxProblem(e, reason, file, text)];
}

/** Every duplicate key at once, each naming the key and its first place; js-yaml's one where none is found. */
function duplicateKeyProblems(file: string, text: string, offset: number): Problem[] {
  const found = duplicateKeys(text);
  const lines = linePositions(
    text,
    found.map((d) => d.firstOffset),
  );
  const problems = found.map((d) => {
    const first = lines.get(d.firstOffset)!;
    return error({
      code: "duplicate-key",
      message: `\`${displayText(d.key, 60)}\` appears twice in this mapping (first at ${first.line}:${first.column})`,
      hint: "YAML keeps only one of them; remove or rename the other",
      file,
      offset: d.offset,
    });
  });
  if (problems.length > 0) return problems;
  return [
    error({
      code: "duplicate-key",
      message: "a key appears twice in the same mapping",
      hint: "YAML keeps only one of them; remove or rename the other",
      file,
      offset,
    }),
  ];
}

function syntaxProblem(e: YAMLException, reason: string, file: string, text: string): Problem {
  if (reason.startsWith("expected a single document")) {
    return error({
      code: "multiple-documents",
      message: "the file holds more than one YAML document",
      hint: "remove the `---` separator; one file is one pipeline file",
      file,
      offset: markOffset(e, text) ?? secondDocumentOffset(text),
    });
  }
  return error({
    code: "syntax-error",
    message: `invalid YAML: ${reason}`,
    file,
    offset: markOffset(e, text) ?? 0,
  });
}
