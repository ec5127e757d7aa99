/**
 * Who really holds a slot. A record's pid is whatever its writer put there, and F_OFD_GETLK
 * answers l_pid = -1 (an OFD lock belongs to no one process), so the kernel is asked another way:
 * /proc/PID/fdinfo/N lists, as "lock:" lines, the locks held through the open file description
 * behind that descriptor. A pid is named as a holder only when one of its descriptors on this
 * lock file holds the byte; when the recorded pid does not (gpuplan was killed, or a step's
 * process escaped its group and lives on), the processes this user can see are searched, and
 * the one found is named with its own pid.
 */
import { readdirSync, readFileSync, readlinkSync, type Stats } from "node:fs";

export interface LockFileId {
  path: string;
  st: Pick<Stats, "dev" | "ino">;
}

/** Whether process `pid` holds `byte` of the file through one of its descriptors (false when it cannot be seen). */
export function holdsByte(pid: number, file: LockFileId, byte: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  const devText = devId(file.st.dev);
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== file.path) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
    } catch {
      continue;
    }
    for (const m of info.matchAll(LOCK_LINE)) {
      if (m[1] !== devText || Number(m[2]) !== file.st.ino) continue;
      const start = Number(m[3]);
      const end = m[4] === "EOF" ? Number.MAX_SAFE_INTEGER : Number(m[4]);
      if (start <= byte && byte <= end) return isProcess(pid);
    }
  }
  return false;
}

/**
 * Whether `pid` names a process rather than one of its threads: /proc/TID answers for a thread
 * too (listed nowhere, but open to a path), with its process's descriptors, so a recorded pid that
 * happens to be a thread id of the real holder would otherwise be named as the holder.
 */
function isProcess(pid: number): boolean {
  try {
    return /^Tgid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] === String(pid);
  } catch {
    return false;
  }
}

/** The visible processes that hold `byte` of the file, lowest pid first (the oldest is usually the one to name). */
export function findHolders(file: LockFileId, byte: number): number[] {
  let pids: number[];
  try {
    pids = readdirSync("/proc")
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
  return pids.filter((pid) => holdsByte(pid, file, byte));
}

// "lock:\t1: OFDLCK ADVISORY  WRITE -1 fe:00:2147601 4096 4195"
const LOCK_LINE =
  /^lock:\s+\d+:\s+OFDLCK\s+\S+\s+\S+\s+-?\d+\s+([0-9a-f]+:[0-9a-f]+):(\d+)\s+(\d+)\s+(\d+|EOF)\s*$/gm;

/** dev_t as /proc prints it: major:minor in hex, major with two digits at least. */
function devId(dev: number): string {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, "0")}:${minor.toString(16).padStart(2, "0")}`;
}
