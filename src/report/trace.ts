/**
 * A report model in the Chrome trace-event format (the JSON object form), which Perfetto and
 * chrome://tracing open: a process per GPU (and one for the host lanes) with a thread per slot,
 * one complete event ("X") per attempt on its slot's thread, an exclusive step's wait as one too,
 * and counters ("C") for memory and for the pipelines waiting for a slot. A run's plan comes as
 * one more process with the estimated bars on the same slots. Times are microseconds from the
 * report's 0.
 */
import { assignLanes } from "./interval-lanes.js";
import type { ReportModel } from "./model.js";

interface TraceEvent {
  name: string;
  ph: "X" | "M" | "C";
  ts?: number;
  dur?: number;
  pid: number;
  tid: number;
  cat?: string;
  args?: Record<string, unknown>;
}

export interface ChromeTrace {
  traceEvents: TraceEvent[];
  displayTimeUnit: "ms";
  otherData: Record<string, string | number | null>;
}

const US = 1000;

export function toChromeTrace(model: ReportModel): ChromeTrace {
  const events: TraceEvent[] = [];
  const pids = new Map<string, number>();
  const pidOf = (group: string, label: string): number => {
    let pid = pids.get(group);
    if (pid === undefined) {
      pid = pids.size + 1;
      pids.set(group, pid);
      events.push({ name: "process_name", ph: "M", pid, tid: 0, args: { name: label } });
      events.push({ name: "process_sort_index", ph: "M", pid, tid: 0, args: { sort_index: pid } });
    }
    return pid;
  };
  const gpuName = new Map(model.header.gpus.map((g) => [g.gpu, `${g.gpu} ${g.name}`]));
  const track = model.lanes.map((lane) => {
    const pid =
      lane.kind === "host" ? pidOf("host", "host") : pidOf(lane.gpu!, gpuName.get(lane.gpu!) ?? lane.gpu!);
    const tid = lane.index + 1;
    return { pid, tid, name: lane.kind === "host" ? `host lane ${lane.index}` : `slot ${lane.index}` };
  });
  const named = new Set<string>();
  const nameThread = (pid: number, tid: number, name: string) => {
    if (named.has(`${pid}/${tid}`)) return;
    named.add(`${pid}/${tid}`);
    events.push({ name: "thread_name", ph: "M", pid, tid, args: { name } });
    events.push({ name: "thread_sort_index", ph: "M", pid, tid, args: { sort_index: tid } });
  };
  for (const t of track) nameThread(t.pid, t.tid, t.name);

  model.bars.forEach((b) => {
    const r = model.rows[b.row]!;
    const t = track[b.lane]!;
    events.push({
      name: `${model.pipelines[r.pipeline]}/${r.step}`,
      cat: `attempt,${b.outcome}`,
      ph: "X",
      ts: b.start * US,
      dur: Math.max(0, b.end - b.start) * US,
      pid: t.pid,
      tid: t.tid,
      args: {
        pipeline: model.pipelines[r.pipeline],
        step: r.step,
        attempt: b.attempt,
        outcome: b.outcome,
        status: b.status,
        device: b.device,
        uuid: b.device === "cpu" ? null : r.uuid,
        exitCode: b.exitCode,
        signal: b.signal,
        durationMs: b.durationMs,
        estimateMs: r.estimateMs,
        peakVramBytes: b.peakVramBytes,
        budgetBytes: r.budgetBytes,
        argv: r.argv,
        logPath: b.logPath,
        stderrPath: b.stderrPath,
      },
    });
  });
  for (const w of model.waits) {
    const r = model.rows[w.row]!;
    const t = track[w.lane]!;
    events.push({
      name: `${model.pipelines[r.pipeline]}/${r.step} waits for the GPU`,
      cat: "wait",
      ph: "X",
      ts: w.start * US,
      dur: Math.max(0, w.end - w.start) * US,
      pid: t.pid,
      tid: t.tid,
    });
  }
  for (const q of model.queues) {
    const pid = pidOf(q.gpu, gpuName.get(q.gpu) ?? q.gpu);
    for (const [at, n] of q.points)
      events.push({
        name: "pipelines waiting for a slot",
        ph: "C",
        ts: at * US,
        pid,
        tid: 0,
        args: { waiting: n },
      });
  }
  for (const s of model.memory) {
    const pid = s.gpu === "host" ? pidOf("host", "host") : pidOf(s.gpu, gpuName.get(s.gpu) ?? s.gpu);
    const label = s.kind === "reserved" ? "memory reserved (GiB)" : "memory used (GiB)";
    for (const [at, bytes] of s.points)
      events.push({
        name: label,
        ph: "C",
        ts: at * US,
        pid,
        tid: 0,
        args: { GiB: +(bytes / 1024 ** 3).toFixed(3) },
      });
  }
  if (model.planned.length) {
    // The plan's bars on tracks of their own, packed per GPU (where a run put two pipelines in one
    // slot one after the other, the plan may have had them side by side: one track would overlap).
    const plan = pidOf("plan", "the plan's estimates");
    const byGroup = new Map<string, typeof model.planned>();
    for (const p of model.planned) {
      const g = model.lanes[p.lane]!.gpu ?? "host";
      byGroup.set(g, [...(byGroup.get(g) ?? []), p]);
    }
    let base = 0;
    for (const [group, list] of byGroup) {
      const { lanes, count } = assignLanes(list);
      for (let k = 0; k < count; k++) nameThread(plan, base + k + 1, `${group} ${k}`);
      list.forEach((p, j) => {
        const r = model.rows[p.row]!;
        events.push({
          name: `${model.pipelines[r.pipeline]}/${r.step} (planned)`,
          cat: "planned",
          ph: "X",
          ts: p.start * US,
          dur: Math.max(0, p.end - p.start) * US,
          pid: plan,
          tid: base + lanes[j]! + 1,
        });
      });
      base += count;
    }
  }
  const h = model.header;
  return {
    traceEvents: events,
    displayTimeUnit: "ms",
    otherData: {
      generator: "gpuplan report --format trace",
      kind: h.kind,
      run: h.runId,
      plan: h.planName,
      startedAt: h.startedAt,
      status: h.status,
    },
  };
}
