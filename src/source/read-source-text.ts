/**
 * Reading a file the user named, apart from parsing it (source-file.ts loads js-yaml): `gpuplan
 * run plan.json` reads its plan with JSON.parse and never loads the YAML parser.
 */
import { readFileSync } from "node:fs";
import { fileError } from "../problems/file-errors.js";

export interface SourceFile {
  /** The path as the user gave it. */
  file: string;
  text: string;
}

/**
 * Read a file for the user; a missing or unreadable file is a usage error (exit 2). Read at once:
 * nothing else runs meanwhile, and node:fs/promises would cost a compile ~2 ms of start (#17).
 */
export async function readSourceText(file: string, what: string): Promise<string> {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw fileError(e, file, "read", what);
  }
}
