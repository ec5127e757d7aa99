// The shared lock directory `locks init` makes is root's, 0755: a user's gpuplan could not create
// its warm.<pid>.json there, said nothing, and `gpuplan locks` never listed her warm workers
// (docs/guides/locks.md promised "anyone may write one"). Now init makes a sticky warm/ folder,
// writers use it when the directory is not theirs, readers read both, and a record that cannot
// be written is said once. Needs root (init, and setpriv to be another user), as CI runs; skipped
// elsewhere, saying so. What the other user runs (the built dist, node if need be) is copied to a
// world-readable folder first: CI checks out under a 0700 `mktemp -d` she cannot enter.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readWarmWorkers } from "../../../src/run/warm/worker-info.js";
import { gpuplan, hasCrashed, ROOT } from "../../helpers/cli.js";
import { built } from "./processes.js";

const isRoot = process.getuid?.() === 0;
if (!isRoot)
  console.warn("warm/ folder tests skipped: locks init and another user need root, as CI runs them");

const NOBODY = 65534;
const base = `/tmp/gpuplan-warm-folder-${randomBytes(4).toString("hex")}`;
let node = process.execPath;
/** Writes one warm worker through createWarmInfoWriter (argv: lock dir, how many writes), prints what it was told. */
let writer = "";

/** Run the writer as uid 65534 (or `uid`), no groups: her gpuplan recording a warm worker. */
function writeAs(dir: string, writes = 1, uid = NOBODY): { told: string[]; pid: number } {
  const r = spawnSync(
    "setpriv",
    [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", node, writer, dir, String(writes)],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`the writer failed: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout) as { told: string[]; pid: number };
}

beforeAll(() => {
  if (!isRoot || !built) return;
  mkdirSync(base, { mode: 0o755 });
  chmodSync(base, 0o755);
  const app = join(base, "app");
  cpSync(join(ROOT, "dist"), join(app, "dist"), { recursive: true, dereference: true });
  copyFileSync(join(ROOT, "package.json"), join(app, "package.json"));
  writer = join(app, "write-warm.mjs");
  // The process records itself as its worker, so the record reads as live while it runs.
  const script = `import { createInterface } from "node:readline";
import { createWarmInfoWriter } from "./dist/run/warm/worker-info.js";
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
// "wait": say its pid first and write only once told to (a line), as a gpuplan whose pid
// another user guessed; then hold.
if (process.argv[4] === "wait") {
  console.log(JSON.stringify({ pid: process.pid }));
  await lines.next();
}
const told = [];
const write = createWarmInfoWriter(process.argv[2], "her-run", (why) => told.push(why));
for (let i = 0; i < Number(process.argv[3]); i++)
  write([{ key: "her-model", device: "cuda:0", pid: process.pid, busy: false, idleSince: 0 }]);
console.log(JSON.stringify({ told, pid: process.pid }));
// "hold", "wait": alive (and its record live) until its stdin closes.
if (process.argv[4] !== undefined) while (!(await lines.next()).done);
`;
  spawnSync("sh", ["-c", `cat > ${writer}`], { input: script });
  if (spawnSync("setpriv", [`--reuid=${NOBODY}`, "test", "-x", node]).status !== 0) {
    copyFileSync(process.execPath, join(app, "node"));
    node = join(app, "node");
  }
  spawnSync("chmod", ["-R", "a+rX", app]);
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});
afterEach(() => {
  rmSync(join(base, "shared"), { recursive: true, force: true });
});

/** `locks init --dir base/shared` as root, with extra arguments. */
function init(...args: string[]): string {
  const dir = join(base, "shared");
  const r = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-warm", ...args]);
  expect(r.stderr).toBe("");
  expect(r.exitCode).toBe(0);
  return dir;
}

/** Her writer as uid 65534, kept alive ("hold", "wait"): its lines one at a time, and its stdin. */
function startAs(dir: string, mode: "hold" | "wait") {
  const child = spawn(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", node, writer, dir, "1", mode],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  // Its next line, or its exit (a writer that failed) said at once rather than waited on.
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`the writer exited (${code}) before writing`))),
  );
  exited.catch(() => {});
  const next = async <T>(): Promise<T> => {
    const line = await Promise.race([lines.next(), exited]);
    return JSON.parse(line.value as string) as T;
  };
  return { child, next };
}

async function stop(child: ChildProcess): Promise<void> {
  child.stdin!.end();
  if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
}

/** Her records as root's `gpuplan locks` reads them (alive is assumed). */
const listed = (dir: string, skipped: string[] = []) =>
  readWarmWorkers(
    dir,
    () => true,
    (path, why) => skipped.push(`${path}: ${why}`),
  ).map((w) => `${w.key} ${w.run}`);

describe.skipIf(!built || !isRoot)("warm workers in the shared lock directory", () => {
  it("locks init makes warm/ root's and sticky: 1777, or 1770 with the group", () => {
    const dir = init();
    const st = statSync(join(dir, "warm"));
    expect([st.mode & 0o7777, st.uid, st.gid, statSync(dir).mode & 0o7777]).toEqual([0o1777, 0, 0, 0o755]);
    rmSync(dir, { recursive: true });
    init("--group", String(NOBODY));
    const grouped = statSync(join(dir, "warm"));
    expect([grouped.mode & 0o7777, grouped.uid, grouped.gid]).toEqual([0o1770, 0, NOBODY]);
  });

  it("another user's record goes to warm/, where it is read back while her gpuplan runs", async () => {
    const dir = init();
    const { child, next } = startAs(dir, "hold");
    try {
      const { told, pid } = await next<{ told: string[]; pid: number }>();
      expect(told).toEqual([]);
      expect(readdirSync(join(dir, "warm"))).toEqual([
        expect.stringMatching(`^warm\\.${pid}\\.[0-9a-f]{16}\\.json$`),
      ]);
      expect(listed(dir)).toEqual(["her-model her-run"]);
    } finally {
      await stop(child);
    }
  });

  it("`gpuplan locks` lists the warm worker of her live gpuplan", async () => {
    const dir = init();
    const { child, next } = startAs(dir, "hold");
    try {
      const { pid } = await next<{ pid: number }>();
      const r = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.stderr).toBe("");
      expect(JSON.parse(r.stdout).workers).toMatchObject([
        { key: "her-model", run: "her-run", pid, gpuplanPid: pid },
      ]);
    } finally {
      await stop(child);
    }
  });

  // Another user (uid 65533) guessed her gpuplan's pid and created warm.<pid>.json in warm/ first,
  // with a record of her own making: the sticky bit refused her rename over it, so her worker went
  // unlisted ("cannot write … (EPERM)") and the planted record was shown as hers.
  it("a record planted under her pid neither blocks hers nor is shown as hers", async () => {
    const dir = init();
    const { child, next } = startAs(dir, "wait");
    try {
      const { pid } = await next<{ pid: number }>();
      const planted = join(dir, "warm", `warm.${pid}.json`);
      const forged = { key: "forged-model", gpu: "cuda:0", pid: null, busy: false, idleSince: null };
      writeFileSync(planted, JSON.stringify({ pid, host: hostname(), run: "forged", workers: [forged] }), {
        mode: 0o644,
      });
      chownSync(planted, NOBODY - 1, NOBODY - 1);
      child.stdin!.write("write now\n");
      const { told } = await next<{ told: string[] }>();
      expect(told).toEqual([]);
      const r = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(JSON.parse(r.stdout).workers).toEqual([
        {
          key: "her-model",
          gpu: "cuda:0",
          pid,
          gpuplanPid: pid,
          run: "her-run",
          busy: false,
          idleSince: expect.any(String),
        },
      ]);
      expect(r.stderr).toBe(
        `gpuplan: ignored ${planted}: owned by uid ${NOBODY - 1}, not by nobody (uid ${NOBODY}) who runs process ${pid}\n`,
      );
    } finally {
      await stop(child);
    }
  });

  it("a lock directory from before warm/ still works; the unwritten record is said once, with the fix", () => {
    const dir = init();
    rmSync(join(dir, "warm"), { recursive: true });
    const { told } = writeAs(dir, 3);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`the lock directory ${dir} is not yours to write and has no warm/ folder`);
    expect(told[0]).toContain("sudo gpuplan locks init");
    expect(listed(dir)).toEqual([]);
  });

  it("a warm/ folder another user owns is neither written nor read", () => {
    const dir = init();
    const warm = join(dir, "warm");
    chownSync(warm, NOBODY, NOBODY);
    writeAs(dir); // She owns it: hers to use.
    const skipped: string[] = [];
    expect(listed(dir, skipped)).toEqual([]);
    expect(skipped).toEqual([`${warm}: owned by nobody (uid ${NOBODY}), not by you or root`]);
    // Another user (uid 65533) does not write into her folder.
    const { told } = writeAs(dir, 1, NOBODY - 1);
    expect(told[0]).toContain(`${warm} is owned by nobody (uid ${NOBODY}), not by you or root`);
  });

  it("locks init refuses a symlink at warm/ before changing anything", () => {
    const dir = join(base, "shared");
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    symlinkSync("/etc", join(dir, "warm"));
    const r = gpuplan(["locks", "init", "--dir", dir, "--gpu", "GPU-warm"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${join(dir, "warm")} is a symlink; nothing was changed  [lock-dir-untrusted]`,
    );
    expect([statSync(dir).uid, statSync("/etc").mode & 0o7777]).toEqual([NOBODY, 0o755]);
    expect(existsSync(join(dir, "GPU-warm.gpu.lock"))).toBe(false);
  });
});
