// `gpuplan report --format trace`: the Chrome trace-event format (JSON object form) with what
// Perfetto and chrome://tracing need of each event, one complete event per attempt on its slot's
// track, and slices on one track that nest or follow each other (Perfetto cuts overlapping ones).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRunFolder } from "../../src/report/run-folder.js";
import { buildRunReport } from "../../src/report/run-report.js";
import { type ChromeTrace, toChromeTrace } from "../../src/report/trace.js";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { NO_GPU, readEvents, runCpuExample } from "./helpers/runs.js";
import { writeSyntheticRun } from "./helpers/synthetic-run.js";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};

const METADATA = new Set(["process_name", "thread_name", "process_sort_index", "thread_sort_index"]);

/** What the trace-event format asks of each event, as Perfetto's JSON importer reads it; the problems found. */
function traceProblems(trace: unknown): string[] {
  const problems: string[] = [];
  const t = trace as Partial<ChromeTrace>;
  if (!Array.isArray(t.traceEvents)) return ["traceEvents is not an array"];
  if (t.displayTimeUnit !== undefined && !["ms", "ns"].includes(t.displayTimeUnit))
    problems.push("displayTimeUnit");
  const isInt = (v: unknown) => Number.isInteger(v);
  t.traceEvents.forEach((e, i) => {
    const where = `event ${i} (${JSON.stringify(e).slice(0, 80)})`;
    if (typeof e.name !== "string" || e.name === "") problems.push(`${where}: name`);
    if (!isInt(e.pid) || !isInt(e.tid)) problems.push(`${where}: pid/tid`);
    switch (e.ph) {
      case "X":
        if (typeof e.ts !== "number" || e.ts < 0 || typeof e.dur !== "number" || e.dur < 0)
          problems.push(`${where}: ts/dur`);
        if (e.cat !== undefined && typeof e.cat !== "string") problems.push(`${where}: cat`);
        break;
      case "C":
        if (typeof e.ts !== "number") problems.push(`${where}: ts`);
        if (!e.args || !Object.values(e.args).every((v) => typeof v === "number"))
          problems.push(`${where}: counter args`);
        break;
      case "M":
        if (!METADATA.has(e.name)) problems.push(`${where}: metadata name`);
        if (e.name.endsWith("_name") && typeof e.args?.name !== "string")
          problems.push(`${where}: args.name`);
        if (e.name.endsWith("_index") && !isInt(e.args?.sort_index))
          problems.push(`${where}: args.sort_index`);
        break;
      default:
        problems.push(`${where}: phase ${String(e.ph)}`);
    }
  });
  // Slices on one track either follow each other or nest.
  const tracks = new Map<string, { ts: number; end: number; name: string }[]>();
  for (const e of t.traceEvents) {
    if (e.ph !== "X") continue;
    const k = `${e.pid}/${e.tid}`;
    tracks.set(k, [...(tracks.get(k) ?? []), { ts: e.ts!, end: e.ts! + e.dur!, name: e.name }]);
  }
  for (const [k, list] of tracks) {
    list.sort((a, b) => a.ts - b.ts || b.end - a.end);
    const open: { end: number; name: string }[] = [];
    for (const s of list) {
      while (open.length && open.at(-1)!.end <= s.ts) open.pop();
      const parent = open.at(-1);
      if (parent && s.end > parent.end)
        problems.push(`track ${k}: ${s.name} overlaps ${parent.name} without nesting`);
      open.push(s);
    }
  }
  return problems;
}

describe("Chrome trace export", () => {
  it("the CPU example's run, through the CLI: valid, one event per attempt, named tracks", () => {
    const cwd = temp();
    const runDir = runCpuExample(cwd);
    const r = gpuplan(["report", "--format", "trace", "-o", "trace.json"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    const trace = JSON.parse(readFileSync(join(cwd, "trace.json"), "utf8")) as ChromeTrace;
    expect(traceProblems(trace)).toEqual([]);
    const attempts = trace.traceEvents.filter((e) => e.ph === "X" && e.cat?.startsWith("attempt"));
    const starts = readEvents(runDir).filter((e) => e.event === "gpu.step.start");
    expect(attempts).toHaveLength(starts.length);
    expect(attempts.map((e) => e.name).sort()).toEqual(starts.map((e) => `${e.pipeline}/${e.step}`).sort());
    const names = trace.traceEvents.filter((e) => e.name === "thread_name").map((e) => e.args?.name);
    expect(names).toContain("host lane 0");
    expect(attempts[0]!.args).toMatchObject({ device: "cpu", status: "ok", exitCode: 0 });
    // Microseconds: a step of ~300 ms lasts ~300,000.
    expect(attempts.every((e) => e.dur! >= 1000 && e.dur! < 60_000_000)).toBe(true);
  }, 60_000);

  it("a 5,000-step run on 8 GPUs: a process per GPU, a thread per slot, every attempt once, nothing overlapping", async () => {
    const dir = temp();
    const run = await writeSyntheticRun(dir, 1000);
    const model = buildRunReport(await readRunFolder(run.runDir));
    const trace = toChromeTrace(model);
    expect(traceProblems(trace)).toEqual([]);
    const attempts = trace.traceEvents.filter((e) => e.ph === "X" && e.cat?.startsWith("attempt"));
    expect(attempts).toHaveLength(run.attempts);
    const processes = trace.traceEvents.filter((e) => e.name === "process_name").map((e) => e.args?.name);
    for (const g of run.plan.registry) expect(processes).toContain(`${g.gpu} ${g.name}`);
    const slotTracks = new Set(attempts.map((e) => `${e.pid}/${e.tid}`));
    expect(slotTracks.size).toBe(run.plan.registry.reduce((n, g) => n + g.maxPipelines, 0));
    expect(
      trace.traceEvents.filter((e) => e.ph === "C" && e.name === "memory used (GiB)").length,
    ).toBeGreaterThan(0);
    expect(attempts.filter((e) => e.cat === "attempt,retried").length).toBeGreaterThan(0);
  }, 60_000);

  it("finds what a broken trace gets wrong (the checker checks)", () => {
    expect(traceProblems({ traceEvents: [{ name: "x", ph: "X", ts: 0, pid: 1, tid: 1 }] })).toEqual([
      expect.stringContaining("ts/dur"),
    ]);
    expect(
      traceProblems({
        traceEvents: [
          { name: "a", ph: "X", ts: 0, dur: 10, pid: 1, tid: 1 },
          { name: "b", ph: "X", ts: 5, dur: 10, pid: 1, tid: 1 },
        ],
      }),
    ).toEqual(["track 1/1: b overlaps a without nesting"]);
    expect(
      traceProblems({ traceEvents: [{ name: "thread_name", ph: "M", pid: 1, tid: 1, args: {} }] }),
    ).toHaveLength(1);
  });
});
