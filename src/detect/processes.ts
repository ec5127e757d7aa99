/**
 * Who the processes on the GPUs are, as nvidia-smi and nvitop show them: the vendor library gives
 * only pids (and memory); the owner and command line come from /proc, and whether gpuplan started
 * a process from the GPU slot locks.
 *
 * "Started by gpuplan" must not be forgeable or stale, so it is not read from anything a process
 * controls (its environment, its command line): a process counts as gpuplan's when one of its
 * ancestors (the kernel's parent links in /proc/PID/stat) is the pid a held GPU slot names as its
 * holder — `gpuplan run`, whose steps and warm workers are its children. The lock is checked with
 * flock (a record whose lock is free is stale and ignored), and the ancestor must have started
 * before it took the slot, so a recycled pid never inherits a mark. A step whose gpuplan died is
 * reparented and loses the mark: unmarked means "not known to be gpuplan's", never "foreign".
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { GpuInfo, GpuProcess } from "../inventory/types.js";
import { textFromBytes } from "../text/bytes-text.js";
import type { Roots } from "./roots.js";

/** A held slot's holder: what `gpuplan locks` shows. */
export interface SlotHolder {
  pid: number;
  run: string;
  pipeline: string;
  step: string | null;
  /** ISO 8601 time the slot was taken. */
  since: string;
  host?: string;
}

/** Reads the holders of every held GPU slot (the slot lock's inspect(); injectable for tests). */
export type ReadHolders = () => Promise<SlotHolder[]>;

/** Longest command line kept (some launchers pass megabytes of arguments). */
export const MAX_COMMAND_LENGTH = 1000;
/** Ancestor links followed before giving up (a loop in a corrupt /proc, a very deep tree). */
const MAX_ANCESTORS = 64;
/** /proc/stat's btime is whole seconds and starttime is in 1/100 s ticks: allow for both. */
const START_TIME_SLACK_MS = 2_000;
/** USER_HZ: the unit of /proc/PID/stat times, 100 on every Linux architecture gpuplan runs on. */
const USER_HZ = 100;

interface ProcStat {
  ppid: number;
  /** Start time in ms since the epoch; null when /proc/stat has no btime. */
  startMs: number | null;
}

/**
 * Fill in user, command and the gpuplan mark of every GPU's processes (in place). Processes the
 * vendor library reported but /proc does not show keep nulls.
 */
export async function describeProcesses(
  gpus: readonly Pick<GpuInfo, "processes">[],
  roots: Roots,
  readHolders: ReadHolders,
): Promise<void> {
  const all = gpus.flatMap((g) => g.processes ?? []);
  if (!all.length) return;
  // In a nested pid namespace (a container) the libraries report the host's pids, which name
  // other processes, or none, in our /proc: trust nothing /proc says about them.
  if (inNestedPidNamespace(roots)) return;
  const users = readUserNames();
  const bootMs = readBootTimeMs(roots);
  const stats = new Map<number, ProcStat | null>();
  const statOf = (pid: number) => {
    if (!stats.has(pid)) stats.set(pid, readStat(roots, pid, bootMs));
    return stats.get(pid)!;
  };
  const described = new Map<number, Omit<GpuProcess, "pid" | "usedMemoryBytes">>();
  for (const p of all) {
    if (described.has(p.pid)) continue;
    const uid = readUid(roots, p.pid);
    described.set(p.pid, {
      user: uid === null ? null : (users.get(uid) ?? String(uid)),
      command: readCommand(roots, p.pid),
      gpuplan: null,
    });
  }
  const holders = await heldBy(readHolders);
  if (holders.size) {
    for (const [pid, facts] of described) {
      if (statOf(pid) === null) continue;
      facts.gpuplan = gpuplanAncestor(roots, pid, holders, statOf);
    }
  }
  for (const p of all) Object.assign(p, described.get(p.pid));
}

/** The records of held slots on this host, by holder pid. */
async function heldBy(readHolders: ReadHolders): Promise<Map<number, SlotHolder[]>> {
  const here = hostname();
  const byPid = new Map<number, SlotHolder[]>();
  let holders: SlotHolder[];
  try {
    holders = await readHolders();
  } catch {
    // No lock directory, no flock: nothing is known to be gpuplan's.
    return byPid;
  }
  for (const h of holders) {
    if (h.host !== undefined && h.host !== here) continue;
    byPid.set(h.pid, [...(byPid.get(h.pid) ?? []), h]);
  }
  return byPid;
}

function gpuplanAncestor(
  roots: Roots,
  pid: number,
  holders: Map<number, SlotHolder[]>,
  statOf: (pid: number) => ProcStat | null,
): GpuProcess["gpuplan"] {
  let current = pid;
  for (let hop = 0; hop < MAX_ANCESTORS && current > 1; hop++) {
    const stat = statOf(current);
    if (!stat) return null;
    const records = current === pid ? undefined : holders.get(current);
    if (records) {
      const startedBefore = (r: SlotHolder) => {
        const since = Date.parse(r.since);
        return stat.startMs !== null && Number.isFinite(since) && stat.startMs <= since + START_TIME_SLACK_MS;
      };
      const valid = records.filter(startedBefore);
      return valid.length ? whichStep(roots, pid, valid) : null;
    }
    current = stat.ppid;
  }
  return null;
}

/**
 * One gpuplan run holds a slot per running pipeline: the records agree on the run, and say
 * which pipeline and step when they all agree, or when the process's own GPUPLAN_PIPELINE and
 * GPUPLAN_STEP (readable by its owner and root) pick one of them. Otherwise only the run is known.
 */
function whichStep(roots: Roots, pid: number, records: SlotHolder[]): NonNullable<GpuProcess["gpuplan"]> {
  const first = records[0]!;
  const same = records.every((r) => r.pipeline === first.pipeline && r.step === first.step);
  if (same) return { run: first.run, pipeline: first.pipeline, step: first.step };
  const env = readEnviron(roots, pid);
  const match = records.find(
    (r) => r.pipeline === env.get("GPUPLAN_PIPELINE") && (r.step ?? undefined) === env.get("GPUPLAN_STEP"),
  );
  return match
    ? { run: match.run, pipeline: match.pipeline, step: match.step }
    : { run: first.run, pipeline: null, step: null };
}

function readEnviron(roots: Roots, pid: number): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of (readText(join(roots.proc, String(pid), "environ")) ?? "").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

/** A /proc file as text: a command line's arguments need not be UTF-8 (src/text/bytes-text.ts). */
const readText = (file: string): string | null => {
  try {
    return textFromBytes(readFileSync(file));
  } catch {
    return null;
  }
};

/** Whether this process lives in a child pid namespace (NSpid lists more than one pid). */
function inNestedPidNamespace(roots: Roots): boolean {
  const status = readText(join(roots.proc, "self/status")) ?? "";
  const nspid = /^NSpid:\s*(.+)$/m.exec(status);
  return nspid ? nspid[1]!.trim().split(/\s+/).length > 1 : false;
}

function readUid(roots: Roots, pid: number): number | null {
  const status = readText(join(roots.proc, String(pid), "status"));
  const uid = status ? /^Uid:\s*(\d+)/m.exec(status) : null;
  return uid ? Number(uid[1]) : null;
}

/** Arguments joined by spaces; a kernel thread or zombie has none, so its name is shown as [name], as ps does. */
function readCommand(roots: Roots, pid: number): string | null {
  const raw = readText(join(roots.proc, String(pid), "cmdline"));
  if (raw === null) return null;
  let command = raw.replace(/\0+$/, "").replace(/\0/g, " ");
  if (!command) {
    const comm = readText(join(roots.proc, String(pid), "comm"))?.trim();
    command = comm ? `[${comm}]` : "";
  }
  return command ? command.slice(0, MAX_COMMAND_LENGTH) : null;
}

/** /proc/PID/stat: the command name (field 2) may hold spaces and parentheses, so fields count from its last ')'. */
function readStat(roots: Roots, pid: number, bootMs: number | null): ProcStat | null {
  const text = readText(join(roots.proc, String(pid), "stat"));
  if (!text) return null;
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // After the name: state(3) ppid(4) … starttime(22), so ppid is fields[1] and starttime fields[19].
  const ppid = Number(fields[1]);
  const ticks = Number(fields[19]);
  if (!Number.isInteger(ppid)) return null;
  return {
    ppid,
    startMs: bootMs !== null && Number.isFinite(ticks) ? bootMs + (ticks * 1000) / USER_HZ : null,
  };
}

function readBootTimeMs(roots: Roots): number | null {
  const btime = /^btime\s+(\d+)/m.exec(readText(join(roots.proc, "stat")) ?? "");
  return btime ? Number(btime[1]) * 1000 : null;
}

/** uid → name from /etc/passwd (users only a directory service knows are shown by uid). */
function readUserNames(): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of (readText("/etc/passwd") ?? "").split("\n")) {
    const [name, , uid] = line.split(":");
    if (name && uid !== undefined && /^\d+$/.test(uid) && !names.has(Number(uid)))
      names.set(Number(uid), name);
  }
  return names;
}
