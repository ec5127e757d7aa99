/**
 * A run's report model (model.ts) from what its folder holds: lanes for the slots of the GPUs it
 * used (a pipeline's bars go in the slot it held, read from its gpu.lock.acquired) and host lanes
 * for CPU pipelines (numbered here, as no event numbers them), one bar per attempt, the slots held
 * and waited for, memory over time, and a row per step with the plan's estimate beside what ran.
 * Pure: the folder is read by run-folder.ts.
 */
import type { GpuplanPlan, PlannedPipeline } from "../schema-types/plan.js";
import { attemptKey, type FoldedAttempt, type FoldedRun, foldRunEvents } from "./attempts.js";
import { type Axis, buildAxis } from "./axis.js";
import { assignLanes } from "./interval-lanes.js";
import type { ListedStatus } from "./listed-status.js";
import { memorySeries } from "./memory-series.js";
import type { Bar, Counts, Hold, Lane, Outcome, Queue, ReportModel, Skip, StepRow, Wait } from "./model.js";
import { gpuFacts, gpusOf, type IndexedStep, indexPlan, type PlanIndex, stepArgv } from "./plan-index.js";
import { clampImplausibleTimes } from "./plausible-times.js";
import type { RunFolder } from "./run-folder.js";

const key2 = (a: string, b: string): string => `${a}\u0000${b}`;

/**
 * Appends `value` to `key`'s list in place: copying the list for each value (`[...old, value]`) made
 * a pipeline of 130,000 attempts take minutes.
 */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The report of the run in `folder`. `listed` is how `gpuplan runs` lists it (listed-status.ts):
 * a Slurm run's status is that, since its tasks' own ends are in no run.end the events hold.
 */
export function buildRunReport(folder: RunFolder, listed: ListedStatus | null = null): ReportModel {
  const times = clampImplausibleTimes(folder.events, folder.readAtMs);
  const fold = foldRunEvents(times.events);
  const axis = buildAxis(fold.sessions);
  const plan = folder.plan ? indexPlan(folder.plan) : null;
  const notes = [...folder.notes];
  if (times.note) notes.push(times.note);
  // The folder is what was asked for; a journal that names another run was copied or edited.
  if (folder.header && folder.header.run !== folder.id)
    notes.push(
      `journal.jsonl: its header names run ${folder.header.run}, not ${folder.id} (the folder's name): a copied or renamed run folder?`,
    );
  if (folder.events.length === 0) notes.push("no events: nothing ran yet, or events.jsonl is missing");
  if (listed?.problem) notes.push(`gpuplan runs: ${listed.problem}`);

  const selected = selectedPipelines(fold, folder, plan);
  const pipelines = [...selected];
  const pipelineIndex = new Map(pipelines.map((p, i) => [p, i]));
  const pipelineNo = (name: string): number => {
    let i = pipelineIndex.get(name);
    if (i === undefined) {
      i = pipelines.push(name) - 1;
      pipelineIndex.set(name, i);
    }
    return i;
  };

  const rows: StepRow[] = [];
  const rowIndex = new Map<string, number>();
  const rowOf = (pipeline: string, step: string): number => {
    const key = key2(pipeline, step);
    let i = rowIndex.get(key);
    if (i === undefined) {
      i = rows.push(newRow(pipelineNo(pipeline), step, plan?.step(pipeline, step))) - 1;
      rowIndex.set(key, i);
    }
    return i;
  };
  // The plan's steps by pipeline once: filtering them all for each pipeline took 12 s at 20,000
  // pipelines of 5 steps.
  const plannedSteps = new Map<string, IndexedStep[]>();
  for (const s of plan?.steps ?? []) pushTo(plannedSteps, s.pipeline.name, s);
  for (const name of selected) for (const s of plannedSteps.get(name) ?? []) rowOf(name, s.step.id);

  const lanes = new LaneBook(folder.plan, selected, plan, fold);
  const bars: Bar[] = [];
  const laneOfAttempt = placeAttempts(fold, axis, lanes, plan);
  const kept = keptAttempts(fold);
  fold.attempts.forEach((a, i) => {
    const row = rowOf(a.pipeline, a.step);
    const end = a.endMs ?? a.startMs;
    const bar: Bar = {
      lane: laneOfAttempt[i]!,
      start: axis.at(a.session, a.startMs),
      end: axis.at(a.session, end),
      row,
      attempt: a.attempt,
      outcome: kept.has(a) ? "kept" : outcomeOf(a),
      status: a.end?.status ?? null,
      device: a.device,
      onHost: a.device === "cpu" && !a.fallback && lanes.kind(laneOfAttempt[i]!) === "slot",
      durationMs: a.end?.durationMs ?? Math.max(0, end - a.startMs),
      exitCode: a.end?.exitCode ?? null,
      signal: a.end?.signal ?? null,
      framework: a.end?.framework ?? null,
      hint: a.end?.hint ?? null,
      logPath: a.start.logPath,
      stderrPath: a.start.stderrPath ?? null,
      stderrTail: folder.stderrTails.get(attemptKey(a.pipeline, a.step, a.attempt)) ?? [],
      peakVramBytes: a.end?.peakVramBytes ?? null,
      load: a.load ? [axis.at(a.session, a.load[0]), axis.at(a.session, a.load[1])] : null,
      reused: a.reused,
    };
    rows[row]!.bars.push(bars.push(bar) - 1);
  });

  for (const t of fold.lockTimeouts) {
    const r = rows[rowOf(t.pipeline, t.step)]!;
    r.outcome = "failed";
    r.waitMs += t.waitedMs;
    r.skipReason = `never started: its slot wait ran past --lock-timeout (${t.waitedMs} ms)`;
  }
  const skips: Skip[] = fold.skips.map((s) => {
    const row = rowOf(s.pipeline, s.step);
    return {
      lane: lanes.pipelineLaneAt(s.session, s.pipeline, s.atMs),
      at: axis.at(s.session, s.atMs),
      row,
      cause: s.cause,
      reason: s.reason,
    };
  });
  fillRows(rows, bars, skips);
  // A pipeline's slot waits go on its first step that ran. Found in one pass over the rows: a
  // search of every row for each pipeline took 56 s at 20,000 pipelines of 5 steps.
  const firstRan = new Map<number, StepRow>();
  for (const r of rows) if (r.bars.length > 0 && !firstRan.has(r.pipeline)) firstRan.set(r.pipeline, r);
  for (const [pipeline, ms] of fold.waitedMs) {
    const first = firstRan.get(pipelineNo(pipeline));
    if (first) first.waitMs += ms;
  }

  const { holds, waits } = holdsAndWaits(fold, axis, lanes, pipelineNo, rowOf, rows);
  const planned = rows.flatMap((r, row) => {
    const last = r.bars.at(-1);
    return r.planned && last !== undefined
      ? [{ lane: bars[last]!.lane, start: r.planned[0], end: r.planned[1], row }]
      : [];
  });
  const wallMs = fold.sessions.length ? fold.sessions.at(-1)!.endMs - fold.sessions[0]!.startMs : null;
  const makespanMs = fold.sessions.length
    ? fold.sessions.reduce((n, s, i) => n + (fold.durations[i] ?? s.endMs - s.startMs), 0)
    : null;
  const p = folder.plan;
  return {
    header: {
      kind: "run",
      title: `run ${folder.id}`,
      runId: folder.id,
      runDir: folder.runDir,
      planName: p?.name ?? null,
      pipelineFile: p?.source.file ?? null,
      input: folder.header?.input ?? null,
      gpus: lanes.gpus.map(gpuFacts),
      startedAt: fold.sessions.length
        ? new Date(fold.sessions[0]!.startMs).toISOString()
        : (folder.header?.startedAt ?? null),
      endedAt: fold.sessions.length ? new Date(fold.sessions.at(-1)!.endMs).toISOString() : null,
      wallMs,
      status: listed?.status ?? fold.status ?? (fold.sessions.length ? "unfinished" : "not started"),
      sessions: fold.sessions.length,
      counts: countRows(rows, bars),
      makespanMs,
      planMakespanMs: p?.summary.makespanMs ?? null,
      lowerBoundMs: p?.summary.lowerBoundMs ?? null,
      maxParallelPipelines: p?.settings.maxParallelPipelines ?? null,
      notes,
    },
    pipelines,
    // The run's own time: a plan that expected far longer is cut at the edge, not the run shrunk.
    axis: {
      spanMs: axis.spanMs > 0 ? axis.spanMs : Math.max(0, ...planned.map((b) => b.end)),
      breaks: axis.breaks,
    },
    lanes: lanes.all,
    bars,
    holds,
    waits,
    queues: queuesOf(fold, axis),
    skips,
    planned,
    memory: memorySeries(
      fold.memory.map((m) => ({ ...m, at: axis.at(m.session, m.atMs) })),
      (gpu) => plan?.gpu(gpu),
    ),
    rows,
    placements: [],
  };
}

/** The pipelines the run was started with: the journal's, else the first run.start's, else what ran. */
function selectedPipelines(fold: FoldedRun, folder: RunFolder, plan: PlanIndex | null): string[] {
  const named = folder.header?.pipelines.length ? folder.header.pipelines : fold.pipelines;
  const order = new Map(plan?.plan.pipelines.map((p, i) => [p.name, i]) ?? []);
  const list = named.length ? [...named] : [...new Set(fold.attempts.map((a) => a.pipeline))];
  // The plan's order (the order a person wrote them in), unknown names last in the order given.
  return list
    .map((name, i) => ({ name, i }))
    .sort((a, b) => (order.get(a.name) ?? 1e9 + a.i) - (order.get(b.name) ?? 1e9 + b.i))
    .map((x) => x.name);
}

function newRow(pipeline: number, step: string, planned: IndexedStep | undefined): StepRow {
  const s = planned?.step;
  return {
    pipeline,
    step,
    device: s?.device ?? "?",
    uuid: s?.uuid ?? null,
    outcome: "not-run",
    attempts: 0,
    durationMs: null,
    estimateMs: s ? s.estimateMs : null,
    estimateRatio: null,
    peakVramBytes: null,
    vramBytes: s?.vramBytes ?? null,
    budgetBytes: s?.memoryBudgetBytes ?? null,
    waitMs: 0,
    argv: s ? stepArgv(s) : [],
    exclusive: s?.exclusive ?? false,
    worker: s?.worker?.key ?? null,
    planned: planned ? [planned.plannedStartMs, planned.plannedEndMs] : null,
    bars: [],
    skipReason: null,
  };
}

function outcomeOf(a: FoldedAttempt): Outcome {
  if (!a.end) return "interrupted";
  if (a.retried) return "retried";
  switch (a.end.status) {
    case "ok":
      return a.fallback ? "fallback" : "ok";
    case "oom":
      return "oom";
    case "timeout":
      return "timeout";
    case "interrupted":
      return "interrupted";
    default:
      return "failed";
  }
}

/** Attempts that finished a step ok in a session before one that skipped it as completed (--resume). */
function keptAttempts(fold: FoldedRun): Set<FoldedAttempt> {
  const kept = new Set<FoldedAttempt>();
  // By step first: searching every attempt for each skip is quadratic (7 s for a resumed run of
  // 30,000 steps, minutes at 100,000).
  const okOf = new Map<string, FoldedAttempt[]>();
  for (const a of fold.attempts) if (a.end?.status === "ok") pushTo(okOf, key2(a.pipeline, a.step), a);
  for (const s of fold.skips) {
    if (s.cause !== "completed") continue;
    const ok = okOf.get(key2(s.pipeline, s.step))?.findLast((a) => a.session < s.session);
    if (ok) kept.add(ok);
  }
  return kept;
}

function fillRows(rows: StepRow[], bars: readonly Bar[], skips: readonly Skip[]): void {
  for (const r of rows) {
    const mine = r.bars.map((b) => bars[b]!);
    const last = mine.at(-1);
    r.attempts = mine.length;
    if (last) {
      r.outcome = last.outcome;
      r.durationMs = last.durationMs;
      if (r.estimateMs && (last.outcome === "ok" || last.outcome === "kept"))
        r.estimateRatio = last.durationMs / r.estimateMs;
      const peaks = mine.map((b) => b.peakVramBytes).filter((v): v is number => v !== null);
      r.peakVramBytes = peaks.length ? peaks.reduce((a, b) => (b > a ? b : a)) : null;
    }
  }
  for (const s of skips) {
    const r = rows[s.row]!;
    if (s.cause === "completed") {
      if (r.outcome === "not-run") r.outcome = "kept";
    } else if (r.outcome === "not-run") {
      r.outcome = "skipped";
      r.skipReason = s.reason;
    }
  }
}

function countRows(rows: readonly StepRow[], bars: readonly Bar[]): Counts {
  const c: Counts = {
    steps: rows.length,
    ok: 0,
    failed: 0,
    oom: 0,
    timeout: 0,
    retried: 0,
    fallback: 0,
    interrupted: 0,
    kept: 0,
    skipped: 0,
    notRun: 0,
    attempts: bars.length,
  };
  for (const r of rows) {
    if (r.outcome === "ok" || r.outcome === "fallback") c.ok++;
    else if (r.outcome === "kept") c.kept++;
    else if (
      r.outcome === "failed" ||
      r.outcome === "oom" ||
      r.outcome === "timeout" ||
      r.outcome === "retried"
    )
      c.failed++;
    else if (r.outcome === "interrupted") c.interrupted++;
    else if (r.outcome === "skipped") c.skipped++;
    else if (r.outcome === "not-run") c.notRun++;
  }
  for (const b of bars) {
    if (b.status === "oom") c.oom++;
    if (b.status === "timeout") c.timeout++;
    if (b.outcome === "retried") c.retried++;
    if (b.outcome === "fallback") c.fallback++;
  }
  return c;
}

/** The lanes: every slot of every GPU the run's pipelines use, then the host lanes CPU pipelines need. */
class LaneBook {
  readonly all: Lane[] = [];
  readonly gpus: ReturnType<typeof gpusOf>;
  private readonly slotLane = new Map<string, number>();
  private readonly hostLanes: number[] = [];
  /** Pipeline → its lane intervals per session, for skips. */
  private readonly placed = new Map<
    string,
    { session: number; lane: number; start: number; end: number }[]
  >();

  constructor(
    plan: GpuplanPlan | null,
    selected: readonly string[],
    index: PlanIndex | null,
    fold: FoldedRun,
  ) {
    const planned = selected
      .map((n) => index?.pipeline(n))
      .filter((p): p is PlannedPipeline => p !== undefined);
    this.gpus = plan ? gpusOf(plan, planned) : [];
    const slotsSeen = new Map<string, number>();
    for (const h of fold.holds)
      slotsSeen.set(h.gpu, Math.max(slotsSeen.get(h.gpu) ?? 0, ...h.slots.map((s) => s + 1)));
    for (const a of fold.attempts)
      if (a.device !== "cpu" && !slotsSeen.has(a.device)) slotsSeen.set(a.device, 1);
    const order = [
      ...this.gpus.map((g) => g.gpu),
      ...[...slotsSeen.keys()].filter((g) => !this.gpus.some((e) => e.gpu === g)).sort(),
    ];
    for (const gpu of order) {
      const slots = Math.max(
        this.gpus.find((g) => g.gpu === gpu)?.maxPipelines ?? 0,
        slotsSeen.get(gpu) ?? 0,
      );
      for (let s = 0; s < slots; s++) this.slot(gpu, s);
    }
  }

  slot(gpu: string, slot: number): number {
    const key = key2(gpu, String(slot));
    let lane = this.slotLane.get(key);
    if (lane === undefined) {
      lane = this.all.push({ kind: "slot", gpu, index: slot, label: `${gpu} slot ${slot}` }) - 1;
      this.slotLane.set(key, lane);
    }
    return lane;
  }

  host(n: number): number {
    while (this.hostLanes.length <= n) {
      const i = this.hostLanes.length;
      this.hostLanes.push(this.all.push({ kind: "host", gpu: null, index: i, label: `host ${i}` }) - 1);
    }
    return this.hostLanes[n]!;
  }

  /** How many slot lanes a GPU has now. */
  slotsOf(gpu: string): number {
    return this.all.filter((l) => l.kind === "slot" && l.gpu === gpu).length;
  }

  kind(lane: number): Lane["kind"] {
    return this.all[lane]!.kind;
  }

  place(pipeline: string, session: number, lane: number, start: number, end: number): void {
    const list = this.placed.get(pipeline) ?? [];
    list.push({ session, lane, start, end });
    this.placed.set(pipeline, list);
  }

  /** The pipeline's lane at a time of a session; else its last lane in that session, else in an earlier one. */
  pipelineLaneAt(session: number, pipeline: string, atMs: number): number | null {
    const all = this.placed.get(pipeline) ?? [];
    const list = all.filter((p) => p.session === session);
    return (list.find((p) => p.start <= atMs && atMs <= p.end) ?? list.at(-1) ?? all.at(-1))?.lane ?? null;
  }
}

/**
 * Each attempt's lane: its pipeline's slot on the pipeline's first GPU (the hold whose time
 * covers it), else, for a GPU attempt whose hold is not in the events, a slot of its GPU free at
 * the time, else a host lane: a CPU pipeline's for its whole time in the session, a GPU
 * pipeline's CPU steps' for each stretch of them it ran holding no slot (a pipeline gives its slot
 * back for CPU steps, #12 item 13: drawn in its GPU's slot lanes they would need lanes the GPU
 * does not have).
 */
function placeAttempts(fold: FoldedRun, axis: Axis, lanes: LaneBook, plan: PlanIndex | null): number[] {
  const result = new Array<number>(fold.attempts.length).fill(-1);
  const holdsOf = new Map<string, typeof fold.holds>();
  for (const h of fold.holds) {
    if (h.step !== null) continue;
    pushTo(holdsOf, key2(String(h.session), h.pipeline), h);
  }
  // Attempts grouped by session and pipeline: a pipeline stays in one lane while it runs.
  const groups = new Map<string, number[]>();
  fold.attempts.forEach((a, i) => {
    pushTo(groups, key2(String(a.session), a.pipeline), i);
  });
  const orphans: {
    gpu: string | null;
    session: number;
    pipeline: string;
    indices: number[];
    start: number;
    end: number;
  }[] = [];
  const unit = (gpu: string | null, indices: number[]) => {
    const first = fold.attempts[indices[0]!]!;
    // A loop, not Math.min(...): a pipeline of 130,000 attempts overflowed the stack as arguments.
    let start = first.startMs;
    let end = first.endMs ?? first.startMs;
    for (const i of indices) {
      const a = fold.attempts[i]!;
      start = Math.min(start, a.startMs);
      end = Math.max(end, a.endMs ?? a.startMs);
    }
    orphans.push({ gpu, session: first.session, pipeline: first.pipeline, indices, start, end });
  };
  for (const [k, indices] of groups) {
    const first = fold.attempts[indices[0]!]!;
    const planned = plan?.pipeline(first.pipeline);
    const home =
      planned?.gpus[0] ?? indices.map((i) => fold.attempts[i]!.device).find((d) => d !== "cpu") ?? null;
    const holds = (holdsOf.get(k) ?? []).filter((h) => h.gpu === home);
    const holdOf = (i: number) => {
      const a = fold.attempts[i]!;
      return holds.find((x) => x.startMs <= a.startMs && a.startMs <= x.endMs);
    };
    // CPU attempts outside every hold, in stretches: each stretch takes a host lane.
    const onHost = (i: number) => fold.attempts[i]!.device === "cpu" && holdOf(i) === undefined;
    const byStart = [...indices].sort((a, b) => fold.attempts[a]!.startMs - fold.attempts[b]!.startMs);
    let stretch: number[] = [];
    for (const i of byStart) {
      if (onHost(i)) stretch.push(i);
      else if (stretch.length > 0) {
        unit(null, stretch);
        stretch = [];
      }
    }
    if (stretch.length > 0) unit(null, stretch);
    const inSlots = indices.filter((i) => !onHost(i));
    if (inSlots.length === 0) continue;
    if (home !== null && holds.length > 0) {
      for (const i of inSlots) result[i] = lanes.slot(home, (holdOf(i) ?? holds[0]!).slots[0] ?? 0);
      for (const h of holds)
        lanes.place(first.pipeline, first.session, lanes.slot(home, h.slots[0] ?? 0), h.startMs, h.endMs);
      continue;
    }
    unit(home, inSlots);
  }
  // Without a hold: GPU pipelines share their GPU's slot lanes, CPU pipelines the host lanes.
  const byGpu = new Map<string | null, typeof orphans>();
  for (const o of orphans) pushTo(byGpu, o.gpu, o);
  for (const [gpu, list] of byGpu) {
    const { lanes: n } = assignLanes(
      list.map((o) => ({ start: axis.at(o.session, o.start), end: axis.at(o.session, o.end) })),
    );
    list.forEach((o, j) => {
      const lane = gpu === null ? lanes.host(n[j]!) : lanes.slot(gpu, n[j]!);
      for (const i of o.indices) result[i] = lane;
      lanes.place(o.pipeline, o.session, lane, o.start, o.end);
    });
  }
  return result;
}

function holdsAndWaits(
  fold: FoldedRun,
  axis: Axis,
  lanes: LaneBook,
  pipelineNo: (name: string) => number,
  rowOf: (pipeline: string, step: string) => number,
  rows: StepRow[],
): { holds: Hold[]; waits: Wait[] } {
  const holds: Hold[] = [];
  const own = new Map<string, number>();
  for (const h of fold.holds) {
    if (h.step !== null) continue;
    for (const s of h.slots) {
      const lane = lanes.slot(h.gpu, s);
      own.set(key2(`${h.session}\u0000${h.pipeline}`, h.gpu), lane);
      holds.push({
        lane,
        start: axis.at(h.session, h.startMs),
        end: axis.at(h.session, h.endMs),
        pipeline: pipelineNo(h.pipeline),
        kind: "slot",
      });
    }
  }
  for (const h of fold.holds) {
    if (h.step === null) continue;
    const mine = own.get(key2(`${h.session}\u0000${h.pipeline}`, h.gpu));
    for (const s of h.slots) {
      const lane = lanes.slot(h.gpu, s);
      if (lane === mine) continue;
      holds.push({
        lane,
        start: axis.at(h.session, h.startMs),
        end: axis.at(h.session, h.endMs),
        pipeline: pipelineNo(h.pipeline),
        kind: "exclusive",
      });
    }
  }
  const waits: Wait[] = [];
  for (const w of fold.waits) {
    if (w.step === null) continue;
    const row = rowOf(w.pipeline, w.step);
    rows[row]!.waitMs += Math.max(0, w.endMs - w.startMs);
    const lane = own.get(key2(`${w.session}\u0000${w.pipeline}`, w.gpu));
    if (lane === undefined) continue;
    waits.push({ lane, start: axis.at(w.session, w.startMs), end: axis.at(w.session, w.endMs), row });
  }
  return { holds, waits };
}

/** Pipelines waiting for a slot of each GPU over time, from their gpu.lock.wait to their slot. */
function queuesOf(fold: FoldedRun, axis: Axis): Queue[] {
  const changes = new Map<string, [number, number][]>();
  for (const w of fold.waits) {
    if (w.step !== null) continue;
    const list = changes.get(w.gpu) ?? [];
    list.push([axis.at(w.session, w.startMs), 1], [axis.at(w.session, w.endMs), -1]);
    changes.set(w.gpu, list);
  }
  return [...changes].map(([gpu, list]) => {
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const points: [number, number][] = [];
    let n = 0;
    let max = 0;
    for (const [t, d] of list) {
      n += d;
      max = Math.max(max, n);
      if (points.length && points.at(-1)![0] === t) points.at(-1)![1] = n;
      else points.push([t, n]);
    }
    return { gpu, points, max };
  });
}
