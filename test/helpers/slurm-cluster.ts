/**
 * One real Slurm cluster for the whole test run: slurmctld + slurmd + munged on loopback, one node
 * `localhost` with 16 CPUs, 16000 MiB and 4 fake H100 GPUs (device nodes under a temporary base
 * folder), sharded 4 ways each. The measured facts and gotchas behind every line of the config are
 * in the Slurm notes the config follows (batch_sched_delay=0, config_overrides, mknod'ed GPUs,
 * jobcomp/filetxt with MinJobAge=3600 so finished jobs stay visible, stop slurmd first).
 *
 * The cluster starts lazily, when the first test file asks for it, so a run that has no Slurm
 * test pays nothing; test files running in parallel processes share it through the base folder
 * the global setup hands out (the first to `mkdir` the lock starts it, the others wait for
 * `ready.json`). The global setup's teardown stops it by pid; a run killed before its teardown
 * leaves its cluster running, and the next run's setup sweeps it (sweepStaleClusters: only folders
 * with an owner file whose process is gone, only daemons whose command line names that folder).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

const SLURM_BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"];
export const CLUSTER_GPUS = 4;
export const CLUSTER_CPUS = 16;
export const CLUSTER_MEMORY_MIB = 16000;
const CLUSTER_SHARDS = 16;

interface ReadyCluster {
  ok: true;
  /** SLURM_CONF for every client command. */
  conf: string;
  base: string;
  /** process.env plus SLURM_CONF. */
  env: NodeJS.ProcessEnv;
  startMs: number;
}
export type ClusterState = ReadyCluster | { ok: false; reason: string };

const READY = "ready.json";
const FAILED = "failed.txt";

/** Where each binary is, or the ones missing. */
function missingBinaries(): string[] {
  return SLURM_BINARIES.filter(
    (b) => spawnSync("sh", ["-c", `command -v ${b}`], { stdio: "ignore" }).status !== 0,
  );
}

/** True when a start failure must fail the test run instead of skipping: CI, as root, installs Slurm. */
function mustHaveSlurm(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "0" && env.CI !== "false";
  return ci && process.getuid?.() === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function slurmConf(base: string, ctldPort: number, slurmdPort: number): string {
  return `# gpuplan test cluster (one node on loopback, 4 fake H100s)
ClusterName=gpuplantest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${ctldPort}
SlurmdPort=${slurmdPort}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${base}/munge/munge.sock
StateSaveLocation=${base}/state/ctld
SlurmdSpoolDir=${base}/state/slurmd
SlurmctldPidFile=${base}/run/slurmctld.pid
SlurmdPidFile=${base}/run/slurmd.pid
SlurmctldLogFile=${base}/log/slurmctld.log
SlurmdLogFile=${base}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=${base}/log/jobcomp.txt
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard
ReturnToService=2
MinJobAge=3600
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=${CLUSTER_CPUS} RealMemory=${CLUSTER_MEMORY_MIB} Gres=gpu:h100:${CLUSTER_GPUS},shard:${CLUSTER_SHARDS} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`;
}

/** Character devices like the real /dev/nvidiaN (major 195); symlinks to /dev/null where mknod is refused. */
function makeGpuDevices(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < CLUSTER_GPUS; i++) {
    const path = join(dir, `nvidia${i}`);
    if (spawnSync("mknod", [path, "c", "195", String(i)], { stdio: "ignore" }).status !== 0)
      symlinkSync("/dev/null", path);
  }
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(cmd, args, {
    env,
    encoding: "utf8",
    timeout: 20_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll until `check` returns a value, or throw with `what` after `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 1.5, 500)) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`test Slurm cluster: ${what} within ${timeoutMs / 1000} s`);
    await sleep(delay);
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Start munged, slurmctld and slurmd under `base`, wait for one warm-up job to finish. */
async function startCluster(base: string): Promise<ReadyCluster> {
  const started = Date.now();
  for (const d of ["munge", "state/ctld", "state/slurmd", "run", "log", "etc"])
    mkdirSync(join(base, d), { recursive: true });
  makeGpuDevices(join(base, "dev"));
  const key = join(base, "munge/munge.key");
  writeFileSync(key, randomBytes(1024), { mode: 0o600 });
  // munged wants its socket's folders searchable by everyone (mkdtemp makes the base 0700).
  chmodSync(base, 0o755);
  chmodSync(join(base, "munge"), 0o755);
  const conf = join(base, "etc/slurm.conf");
  writeFileSync(conf, slurmConf(base, await freePort(), await freePort()));
  const gpus = `${base}/dev/nvidia[0-${CLUSTER_GPUS - 1}]`;
  writeFileSync(
    join(base, "etc/gres.conf"),
    `NodeName=localhost Name=gpu Type=h100 File=${gpus}\nNodeName=localhost Name=shard Count=${CLUSTER_SHARDS} File=${gpus}\n`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: conf };
  try {
    run(
      "munged",
      [
        `--socket=${base}/munge/munge.sock`,
        `--key-file=${key}`,
        `--pid-file=${base}/run/munged.pid`,
        `--log-file=${base}/log/munged.log`,
        `--seed-file=${base}/munge/munge.seed`,
      ],
      env,
    );
    run("slurmctld", ["-f", conf, "-c"], env);
    run("slurmd", ["-f", conf, "-N", "localhost"], env);
    await until("the node did not come up idle", 30_000, () => {
      const r = spawnSync("sinfo", ["-h", "-o", "%t"], { env, encoding: "utf8", timeout: 5000 });
      return r.status === 0 && r.stdout.trim() === "idle" ? true : undefined;
    });
    // No job starts for the first seconds after slurmctld starts: wait for one before any test times anything.
    const job = run(
      "sbatch",
      ["--parsable", "--job-name=warm-up", `--output=/dev/null`, "--wrap", "true"],
      env,
    ).trim();
    await until("the warm-up job did not finish", 30_000, () => {
      const r = spawnSync("squeue", ["-h", "-t", "all", "-j", job, "-o", "%T"], { env, encoding: "utf8" });
      const state = r.stdout.trim();
      if (state === "COMPLETED") return true;
      if (/FAILED|CANCELLED|NODE_FAIL|BOOT_FAIL|TIMEOUT|OUT_OF_MEMORY/.test(state))
        throw new Error(`test Slurm cluster: the warm-up job ended ${state}`);
      return undefined;
    });
  } catch (e) {
    stopCluster(base);
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(
      `${message}\n--- slurmctld.log\n${tail(join(base, "log/slurmctld.log"))}\n--- slurmd.log\n${tail(join(base, "log/slurmd.log"))}`,
    );
  }
  return { ok: true, conf, base, env, startMs: Date.now() - started };
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Running, and not a zombie (a daemon whose parent is gone stays one where nothing reaps it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after `graceMs` (slurmd can ignore SIGTERM for >10 s once slurmctld is gone). */
function stopPid(pid: number | undefined, graceMs: number): void {
  if (pid === undefined || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const end = Date.now() + graceMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (alive(pid) && Date.now() < end) Atomics.wait(nap, 0, 0, 50);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/** A daemon's pid from its pid file under `base`, if that process is still the daemon started there (pids are reused). */
function daemonPid(base: string, file: string): number | undefined {
  const pid = readPid(join(base, "run", file));
  if (pid === undefined) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(base) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Cancel what is left, then stop slurmd first, slurmctld, munged — each by its pid file. */
function stopCluster(base: string): void {
  const conf = join(base, "etc/slurm.conf");
  const slurmd = daemonPid(base, "slurmd.pid");
  if (existsSync(conf) && slurmd !== undefined && alive(slurmd)) {
    // A failed test can leave jobs running; their slurmstepd would outlive the daemons.
    spawnSync("scancel", ["--user", String(process.getuid?.() ?? 0)], {
      env: { ...process.env, SLURM_CONF: conf },
      timeout: 5000,
      stdio: "ignore",
    });
  }
  stopPid(slurmd, 3000);
  stopPid(daemonPid(base, "slurmctld.pid"), 3000);
  stopPid(daemonPid(base, "munged.pid"), 2000);
}
/** Who made a cluster base: the test run's process, so a later run can tell a dead run's cluster from a live one's. */
const OWNER = "owner.json";

interface Owner {
  pid: number;
  /** /proc/PID/stat's start time: a reused pid is not the owner. */
  startTicks: number | null;
}

function startTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isSafeInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** Mark `base` as this process's (the global setup's), for sweepStaleClusters. */
export function claimClusterBase(base: string): void {
  const owner: Owner = { pid: process.pid, startTicks: startTicks(process.pid) };
  writeFileSync(join(base, OWNER), JSON.stringify(owner));
}

function ownerAlive(owner: Owner): boolean {
  return alive(owner.pid) && (owner.startTicks === null || startTicks(owner.pid) === owner.startTicks);
}

/**
 * Stop and remove the clusters earlier test runs left when they were killed before their teardown
 * (vitest killed, a CI timeout): every `gpuplan-slurm-*` folder under `parent` with an owner file
 * whose process is gone. A folder without an owner file is not ours to judge; a live owner's
 * cluster is in use. Returns the folders swept.
 */
export function sweepStaleClusters(parent: string): string[] {
  const swept: string[] = [];
  for (const name of readdirSync(parent)) {
    if (!/^gpuplan-slurm-[A-Za-z0-9]{6}$/.test(name)) continue;
    const base = join(parent, name);
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(base, OWNER), "utf8")) as Owner;
    } catch {
      continue;
    }
    if (!Number.isInteger(owner.pid) || ownerAlive(owner)) continue;
    removeClusterBase(base);
    swept.push(base);
  }
  return swept;
}

/**
 * The shared cluster of this test run, started by whichever test file asks first. Resolves to
 * `{ ok: false, reason }` where Slurm is missing or cannot start; throws instead where it must
 * work (CI as root, see mustHaveSlurm).
 */
export async function sharedCluster(base: string | undefined): Promise<ClusterState> {
  const fail = (reason: string): ClusterState => {
    if (mustHaveSlurm()) throw new Error(`the Slurm tests must run in CI, but ${reason}`);
    return { ok: false, reason };
  };
  if (!base) return fail("the test setup gave no cluster folder (test/setup/slurm.ts not in globalSetup?)");
  const missing = missingBinaries();
  if (missing.length)
    return fail(
      `Slurm is not installed (${missing.join(", ")} not on PATH): apt-get install --no-install-recommends slurmctld slurmd slurm-client munge`,
    );
  if (process.getuid?.() !== 0) return fail("the test cluster runs slurmd as root, and this is not root");
  let starter = false;
  try {
    mkdirSync(join(base, "lock"));
    starter = true;
  } catch {}
  if (starter) {
    try {
      const ready = await startCluster(base);
      writeFileSync(join(base, READY), JSON.stringify({ conf: ready.conf, startMs: ready.startMs }));
      return ready;
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      writeFileSync(join(base, FAILED), reason);
      return fail(`the cluster did not start: ${reason}`);
    }
  }
  const outcome = await until(
    "another test file started the cluster but it did not become ready",
    90_000,
    () => {
      if (existsSync(join(base, READY))) return "ready";
      if (existsSync(join(base, FAILED))) return "failed";
      return undefined;
    },
  );
  if (outcome === "failed")
    return fail(`the cluster did not start: ${readFileSync(join(base, FAILED), "utf8")}`);
  const { conf, startMs } = JSON.parse(readFileSync(join(base, READY), "utf8")) as {
    conf: string;
    startMs: number;
  };
  return { ok: true, conf, base, env: { ...process.env, SLURM_CONF: conf }, startMs };
}

/** Remove the base folder after stopping (the state and spool folders are the daemons'). */
export function removeClusterBase(base: string): void {
  stopCluster(base);
  rmSync(base, { recursive: true, force: true });
}
