/**
 * The first line of a run's journal.jsonl, the run header: what the run was started from. Its own
 * small module: the report's reader, history's quick look at whose run a folder is, and the CLI's
 * check that an output does not land on a run's records all read it, and the last of these runs
 * on every compile -o, which must not load the report.
 */

/** The journal's first line: what the run was started from. */
export interface RunHeader {
  run: string;
  startedAt: string;
  input: string;
  baseDir: string;
  pipelines: string[];
}

/** The journal's first line as a run header, or null when it is not one. */
export function runHeaderOf(first: string): RunHeader | null {
  try {
    const h = JSON.parse(first) as Partial<RunHeader> & { type?: unknown };
    if (
      h.type === "run" &&
      typeof h.run === "string" &&
      typeof h.startedAt === "string" &&
      typeof h.input === "string" &&
      typeof h.baseDir === "string" &&
      Array.isArray(h.pipelines) &&
      h.pipelines.every((p) => typeof p === "string")
    )
      return h as RunHeader;
  } catch {
    // Not JSON: not a header.
  }
  return null;
}
