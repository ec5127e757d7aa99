/**
 * How the report model travels inside the page: its long lists (bars, rows, holds) as columns
 * instead of objects with the same keys 5,000 times, a column of few distinct values as a
 * dictionary, and a column of strings with a long common start (log paths) as that start once.
 * A 5,000-step run's model shrinks from ~4.8 MB to well under half. Shared by the writer and the
 * page's script (no DOM, no Node).
 */
import type { ReportModel } from "../../report/model.js";

type Column =
  /** Values, as they are. */
  | { v: unknown[] }
  /** Indices into `d`, the distinct values. */
  | { d: unknown[]; i: number[] }
  /** Strings that all start with `p` (nulls stay null): the rest of each. */
  | { p: string; s: (string | null)[] };

interface PackedTable {
  n: number;
  cols: Record<string, Column>;
}

export type PackedModel = Omit<ReportModel, "bars" | "rows" | "holds" | "planned" | "skips"> & {
  packed: Record<"bars" | "rows" | "holds" | "planned" | "skips", PackedTable>;
};

const isPrimitive = (v: unknown): boolean => v === null || ["string", "number", "boolean"].includes(typeof v);

function commonPrefix(values: readonly unknown[]): string {
  let prefix: string | null = null;
  for (const v of values) {
    if (v === null) continue;
    if (typeof v !== "string") return "";
    if (prefix === null) prefix = v;
    else {
      let k = 0;
      while (k < prefix.length && k < v.length && prefix[k] === v[k]) k++;
      prefix = prefix.slice(0, k);
      if (prefix === "") return "";
    }
  }
  return prefix ?? "";
}

function packColumn(values: unknown[]): Column {
  if (values.every(isPrimitive)) {
    const distinct = new Map<unknown, number>();
    for (const v of values) if (!distinct.has(v)) distinct.set(v, distinct.size);
    if (distinct.size <= Math.max(16, values.length / 4))
      return { d: [...distinct.keys()], i: values.map((v) => distinct.get(v)!) };
    const prefix = commonPrefix(values);
    if (prefix.length >= 8)
      return { p: prefix, s: values.map((v) => (v === null ? null : (v as string).slice(prefix.length))) };
  }
  return { v: values };
}

function packTable<T extends object>(rows: readonly T[]): PackedTable {
  const keys = rows.length ? Object.keys(rows[0]!) : [];
  const cols: Record<string, Column> = {};
  for (const k of keys) cols[k] = packColumn(rows.map((r) => (r as Record<string, unknown>)[k]));
  return { n: rows.length, cols };
}

function unpackTable<T>(t: PackedTable): T[] {
  const rows: Record<string, unknown>[] = Array.from({ length: t.n }, () => ({}));
  for (const [k, c] of Object.entries(t.cols)) {
    if ("v" in c) for (let j = 0; j < t.n; j++) rows[j]![k] = c.v[j];
    else if ("d" in c) for (let j = 0; j < t.n; j++) rows[j]![k] = c.d[c.i[j]!];
    else for (let j = 0; j < t.n; j++) rows[j]![k] = c.s[j] === null ? null : c.p + c.s[j];
  }
  return rows as T[];
}

export function packModel(model: ReportModel): PackedModel {
  const { bars, rows, holds, planned, skips, ...rest } = model;
  return {
    ...rest,
    packed: {
      bars: packTable(bars),
      rows: packTable(rows),
      holds: packTable(holds),
      planned: packTable(planned),
      skips: packTable(skips),
    },
  };
}

export function unpackModel(packed: PackedModel): ReportModel {
  const { packed: p, ...rest } = packed;
  return {
    ...rest,
    bars: unpackTable(p.bars),
    rows: unpackTable(p.rows),
    holds: unpackTable(p.holds),
    planned: unpackTable(p.planned),
    skips: unpackTable(p.skips),
  };
}
