/**
 * A parsed source file (YAML or JSON — JSON is YAML) that keeps its text and syntax tree, so
 * problems found later by JSON pointer can be turned into line:column when printed.
 */
import { readFile } from "node:fs/promises";
import { type Document, LineCounter, parseAllDocuments } from "yaml";
import { UsageError } from "../problems/errors.js";
import { error, type Problem } from "../problems/problem.js";

export interface SourceFile {
  /** The path as the user gave it. */
  file: string;
  text: string;
  doc: Document | undefined;
  lineCounter: LineCounter;
}

export interface ParsedSource {
  source: SourceFile;
  data: unknown;
  problems: Problem[];
}

/** Read a file for the user; a missing or unreadable file is a usage error (exit 2). */
export async function readSourceText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : String(code ?? e);
    throw new UsageError(`cannot read ${what} ${file}: ${reason}`, "unreadable-file");
  }
}

/** Parse YAML/JSON text, collecting syntax problems instead of throwing. */
export function parseSource(file: string, text: string): ParsedSource {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  const problems: Problem[] = [];
  // parseAllDocuments returns an EmptyStream (not an array) for empty input.
  const list = Array.isArray(docs) ? docs : [];
  const source: SourceFile = { file, text, doc: list[0], lineCounter };
  if (list.length === 0) {
    problems.push(error({ code: "empty-file", message: "the file is empty", file, offset: 0 }));
    return { source, data: undefined, problems };
  }
  if (list.length > 1) {
    const second = list[1]!;
    problems.push(
      error({
        code: "multiple-documents",
        message: "the file holds more than one YAML document",
        hint: "remove the `---` separator; one file is one pipeline file",
        file,
        offset: second.range[0],
      }),
    );
  }
  const doc = list[0]!;
  for (const e of doc.errors) {
    problems.push(
      error({
        code: e.code === "DUPLICATE_KEY" ? "duplicate-key" : "syntax-error",
        message: firstLine(e.message),
        file,
        offset: e.pos[0],
      }),
    );
  }
  if (problems.length > 0) return { source, data: undefined, problems };
  let data: unknown;
  try {
    // maxAliasCount guards against "billion laughs" alias expansion.
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    problems.push(error({ code: "syntax-error", message: firstLine((e as Error).message), file, offset: 0 }));
  }
  return { source, data, problems };
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
}
